package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// launchFile is VS Code's file of debug configurations, which -launch-json
// writes from the lesson files' debug entries (make generate) and make
// verify-docs compares with them.
const launchFile = ".vscode/launch.json"

// launchConfig is one configuration of .vscode/launch.json: an attach to delve
// on an entry's port.
type launchConfig struct {
	Name           string         `json:"name"`
	Type           string         `json:"type"`
	Request        string         `json:"request"`
	Mode           string         `json:"mode"`
	Host           string         `json:"host"`
	Port           int            `json:"port"`
	SubstitutePath []substitution `json:"substitutePath,omitempty"`
}

// substitution maps a folder of this machine to the path a build names it by.
type substitution struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// launchJSON returns .vscode/launch.json as the lesson files' debug entries
// make it: for each, in the order of their ports, "attach: NAME" on its port;
// for an entry built from Kubernetes' source (its packages), substitute-path
// rules from the module cache (hack/lib/debug.sh's MODULE_ROOTS, the same that
// make debug writes for dlv connect) and a second configuration,
// "attach: NAME (your copy, _output/kubernetes)", that maps the pinned
// version's paths to the learner's copy.
func launchJSON(root string) ([]byte, error) {
	lessons, err := kittest.ReadLessons(root)
	if err != nil {
		return nil, err
	}
	var entries []kittest.LessonDebug
	for _, l := range lessons {
		entries = append(entries, l.Debug...)
	}
	slices.SortFunc(entries, func(a, b kittest.LessonDebug) int { return a.Port - b.Port })
	bash := exec.Command("bash", "-c", `source hack/lib.sh && source hack/lib/debug.sh && echo "$MODULE_ROOTS" && hack/controlplane/kube-version.sh`)
	bash.Dir = root
	out, err := bash.Output()
	if err != nil {
		return nil, fmt.Errorf("reading MODULE_ROOTS (hack/lib/debug.sh) and the Kubernetes version: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("hack/lib/debug.sh's MODULE_ROOTS and hack/controlplane/kube-version.sh printed %q", out)
	}
	var rules []substitution
	for _, r := range strings.Fields(lines[0]) {
		rules = append(rules, substitution{"${env:HOME}/go/pkg/mod/" + r + "/", r + "/"})
	}
	copyRule := substitution{"${workspaceFolder}/_output/kubernetes/", "k8s.io/kubernetes@" + lines[1] + "/"}
	configs := []launchConfig{}
	for _, d := range entries {
		c := launchConfig{Name: "attach: " + d.Name, Type: "go", Request: "attach", Mode: "remote", Host: "127.0.0.1", Port: d.Port}
		if d.Packages == "" {
			configs = append(configs, c)
			continue
		}
		c.SubstitutePath = rules
		configs = append(configs, c)
		c.Name += " (your copy, _output/kubernetes)"
		c.SubstitutePath = append([]substitution{copyRule}, rules...)
		configs = append(configs, c)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "\t")
	err = enc.Encode(struct {
		Version        string         `json:"version"`
		Configurations []launchConfig `json:"configurations"`
	}{"0.2.0", configs})
	return buf.Bytes(), err
}

// writeLaunch prints .vscode/launch.json as the lesson files make it
// (launchJSON); with verify, it compares it with the file instead, and returns
// 1 when they differ, saying how to write it again.
func writeLaunch(root string, verify bool, w io.Writer) (int, error) {
	want, err := launchJSON(root)
	if err != nil {
		return 0, err
	}
	if !verify {
		_, err := w.Write(want)
		return 0, err
	}
	have, err := os.ReadFile(filepath.Join(root, launchFile))
	if err != nil && !os.IsNotExist(err) {
		return 0, err
	}
	if !bytes.Equal(have, want) {
		fmt.Fprintf(w, "%s is not what the lesson files' debug entries make of it: run make generate (or go run ./test/check -launch-json > %s)\n", launchFile, launchFile)
		return 1, nil
	}
	fmt.Fprintf(w, ">> %s: one attach configuration per make debug name, on its port, as the lesson files' debug entries say\n", launchFile)
	return 0, nil
}
