package debugger

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// launchConfig is one configuration of .vscode/launch.json.
type launchConfig struct {
	Name           string `json:"name"`
	Request        string `json:"request"`
	Mode           string `json:"mode"`
	Host           string `json:"host"`
	Port           int    `json:"port"`
	SubstitutePath []struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"substitutePath"`
}

// TestLaunchJSONAttachesToEveryDebugTarget holds the checked-in VS Code
// configurations to make debug: one attach configuration per name it takes (the
// lesson files' debug entries), on the port it listens on by default, and for
// those built from Kubernetes' source one more that maps
// the build's paths to the learner's copy, at the pinned version.
func TestLaunchJSONAttachesToEveryDebugTarget(t *testing.T) {
	root := kittest.RepoRoot()
	data, err := os.ReadFile(filepath.Join(root, ".vscode", "launch.json"))
	if err != nil {
		t.Fatal(err)
	}
	var launch struct{ Configurations []launchConfig }
	if err := json.Unmarshal(data, &launch); err != nil {
		t.Fatalf(".vscode/launch.json: %v", err)
	}
	byName := map[string]launchConfig{}
	for _, c := range launch.Configurations {
		byName[c.Name] = c
	}
	lessons, err := kittest.ReadLessons(root)
	if err != nil {
		t.Fatal(err)
	}
	version, err := exec.Command(filepath.Join(root, "hack", "controlplane", "kube-version.sh")).Output()
	if err != nil {
		t.Fatalf("hack/controlplane/kube-version.sh: %v", err)
	}
	build := "k8s.io/kubernetes@" + strings.TrimSpace(string(version)) + "/"
	for _, l := range lessons {
		for _, d := range l.Debug {
			name, port := d.Name, d.Port
			want := []string{"attach: " + name}
			if d.Packages != "" {
				want = append(want, "attach: "+name+" (your copy, _output/kubernetes)")
			}
			for _, n := range want {
				c, ok := byName[n]
				if !ok {
					t.Errorf(".vscode/launch.json has no configuration %q (make debug WHAT=%s)", n, name)
					continue
				}
				if c.Request != "attach" || c.Mode != "remote" || c.Host != "127.0.0.1" || c.Port != port {
					t.Errorf("%q attaches with request %q, mode %q to %s:%d; want attach, remote, 127.0.0.1:%d (make debug WHAT=%s's port)",
						n, c.Request, c.Mode, c.Host, c.Port, port, name)
				}
				if strings.HasSuffix(n, "_output/kubernetes)") {
					if len(c.SubstitutePath) == 0 || c.SubstitutePath[0].To != build {
						t.Errorf("%q's first substitutePath rule must map %s (the pinned version) to the copy; it has %+v", n, build, c.SubstitutePath)
					}
				}
			}
		}
	}
}
