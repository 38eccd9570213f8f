package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// readSolution reads the reference solution docs/solutions/<lesson>/<solution>.patch
// of the lesson whose file is doc (kubeSource: docs/solutions/<lesson>/kubernetes/,
// a patch to Kubernetes' source, kept apart from the patches to the kit; or,
// when there is none of that name, a patch to the kit all the same, such as
// lesson 6's to its exercise's program), and returns its path and content
// (kubeSourcePatch tells the two apart). A solution that does not exist is an
// error listing the lesson's solutions.
func readSolution(root, doc string, kubeSource bool, solution string) (path, patch string, err error) {
	lessonName := strings.TrimSuffix(filepath.Base(doc), ".md")
	dir := filepath.Join(root, "docs", "solutions", lessonName)
	if kubeSource {
		// A patch to the kit of that name first, else one to Kubernetes' source.
		if _, err := os.Stat(filepath.Join(dir, solution+".patch")); err != nil {
			dir = filepath.Join(dir, "kubernetes")
		}
	}
	path = filepath.Join(dir, solution+".patch")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		have, _ := filepath.Glob(filepath.Join(dir, "*.patch"))
		for i, h := range have {
			have[i] = strings.TrimSuffix(filepath.Base(h), ".patch")
		}
		return "", "", fmt.Errorf("-solution=%q: no file %s (lesson %s's solutions: %s)", solution, path, lessonName, strings.Join(have, ", "))
	}
	return path, string(data), err
}

// kubeSourcePatch reports whether the solution at path (from readSolution) is
// a patch to Kubernetes' source, which a kubeSource lesson's suite applies to a
// copy of its own, rather than a patch to the kit, laid over it as an overlay.
func kubeSourcePatch(path string) bool {
	return filepath.Base(filepath.Dir(path)) == "kubernetes"
}

// writeOverlay applies patch (the solution file at patchPath, a `git diff` of
// the repository) to copies of the files it touches as they are committed
// (HEAD), under tmp, and writes a `go build -overlay` file that lays each
// patched copy over its path in the repository. It returns the overlay file's
// path. The tier's own files never change, and the learner's uncommitted edits
// to them (the lessons ask for some) do not get in the way. A patch that does
// not apply to HEAD is an error that says how to fix it.
func writeOverlay(root, patchPath, patch, tmp string) (string, error) {
	paths := patchedPaths(patch)
	if len(paths) == 0 {
		return "", fmt.Errorf("%s names no file to change; it should be the output of git diff", patchPath)
	}
	// Copy the committed version of each file the patch changes (new files have
	// none), then let git apply the patch there, outside any repository, as
	// patch(1) would.
	tree := filepath.Join(tmp, "solution")
	for _, rel := range paths {
		dst := filepath.Join(tree, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		src, ok, err := committedFile(root, rel)
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		if err := os.WriteFile(dst, src, 0o644); err != nil {
			return "", err
		}
	}
	apply := exec.Command("git", "apply", "--whitespace=nowarn", patchPath)
	apply.Dir = tree
	// Inside a repository git apply would skip paths outside the current
	// folder; the ceiling keeps it from finding one above the copies.
	apply.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+tmp)
	if out, err := apply.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s does not apply to the tier's files as committed (%v):\n%s"+
			"If you committed changes to those files, check the solution on a fresh clone, or read the patch instead; "+
			"if the tier itself changed, bring the patch up to date as docs/solutions/README.md says",
			patchPath, err, out)
	}
	replace := map[string]string{}
	for _, rel := range paths {
		replace[filepath.Join(root, rel)] = filepath.Join(tree, rel)
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return "", err
	}
	path := filepath.Join(tmp, "overlay.json")
	return path, os.WriteFile(path, overlay, 0o644)
}

// committedFile returns the content of the file at rel (a path from the
// repository root) in the commit HEAD, and false when HEAD has no such file.
// Outside a git checkout (a downloaded archive) it reads the file as it is.
func committedFile(root, rel string) ([]byte, bool, error) {
	if exec.Command("git", "-C", root, "rev-parse", "--verify", "--quiet", "HEAD").Run() != nil {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return data, err == nil, err
	}
	object := "HEAD:" + filepath.ToSlash(rel)
	if exec.Command("git", "-C", root, "cat-file", "-e", object).Run() != nil {
		return nil, false, nil
	}
	out, err := exec.Command("git", "-C", root, "show", object).Output()
	if err != nil {
		return nil, false, fmt.Errorf("reading %s from git: %w", object, err)
	}
	return out, true, nil
}

// patchedPaths returns the repository paths a git diff changes or creates, in
// the order it names them ("+++ b/<path>" lines; deletions are not supported).
func patchedPaths(patch string) []string {
	var paths []string
	for _, line := range strings.Split(patch, "\n") {
		if rel, ok := strings.CutPrefix(line, "+++ b/"); ok {
			paths = append(paths, filepath.FromSlash(strings.TrimSpace(rel)))
		}
	}
	return paths
}
