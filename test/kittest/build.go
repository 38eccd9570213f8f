package kittest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// BinDir is where CachedBinary and CachedTestBinary keep what they build,
// relative to the kit's root folder (the one with go.work).
const BinDir = "_output/e2e-bin"

// BuildBinary compiles the main package in pkgDir (a folder path, absolute or
// relative to the working directory) to outPath, exactly as a learner's `go build`
// would; with overlay, a `go build -overlay` file (as OverlayEnv names one), laid
// over the sources. The error carries the compiler's output.
func BuildBinary(pkgDir, outPath, overlay string) error {
	args := []string{"build", "-o", outPath}
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	return goLocked(pkgDir, outPath, append(args, "."), "")
}

// CachedBinary builds the main package in pkgDir as BuildBinary does, but to a
// path of its own under the kit's BinDir, and returns that path: name, followed
// by a hash of the overlay's files when overlay is not "" (a solution laid over
// the tier is another binary). A binary built from the very same files as the
// one already there is handed out without starting the go command at all (see
// buildKey): a suite run again with no source changed starts at once. Even an
// up-to-date `go build` costs 1 to 2 CPU seconds, loading the workspace and
// hashing every dependency, and make test asks for its binaries about 35 times.
// Builds of one path wait for each other (a file lock), so suites that run at
// once share the binary. The error says why it could not be built.
func CachedBinary(pkgDir, name, overlay string) (string, error) {
	root, err := rootAbove(pkgDir)
	if err != nil {
		return "", err
	}
	overlaySum := ""
	if overlay != "" {
		if overlaySum, err = overlayHash(overlay); err != nil {
			return "", err
		}
		name += "-" + overlaySum
	}
	out := filepath.Join(root, BinDir, name)
	args := []string{"build", "-o", out}
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	args = append(args, ".")
	key, err := buildKey(root, pkgDir, []string{"build", name, overlaySum})
	if err != nil {
		return "", err
	}
	return out, goLocked(pkgDir, out, args, key)
}

// BuildIfChanged runs `go build -o out pkg` in dir (pkg as go build takes it:
// "." or an import path), as the environment sets the go command up (GOWORK=off
// included), unless out was built from the very same files and settings by an
// earlier call: then it runs nothing (see buildKey). For a program that keeps
// its own builds apart from BinDir, such as the bench. The error carries the
// compiler's output.
func BuildIfChanged(dir, pkg, out string) error {
	root, err := rootAbove(dir)
	if err != nil {
		return err
	}
	key, err := buildKey(root, dir, []string{"build", pkg, out})
	if err != nil {
		return err
	}
	return goLocked(dir, out, []string{"build", "-o", out, pkg}, key)
}

// CachedTestBinary compiles the test package in pkgDir with the build tags
// given (`go test -c -tags ...`) to the kit's BinDir, under name, and returns
// that path; as with CachedBinary, a binary built from the same files is
// handed out as it is, and builds of one path wait for each other. Run the
// binary in pkgDir, as go test would. The error carries the compiler's output.
func CachedTestBinary(pkgDir, tags, name string) (string, error) {
	root, err := rootAbove(pkgDir)
	if err != nil {
		return "", err
	}
	out := filepath.Join(root, BinDir, name)
	key, err := buildKey(root, pkgDir, []string{"test", "-c", "-tags", tags, name})
	if err != nil {
		return "", err
	}
	return out, goLocked(pkgDir, out, []string{"test", "-c", "-tags", tags, "-o", out, "."}, key)
}

// rootAbove returns the kit's root folder: dir itself or the nearest folder
// above it that holds go.work. The error says when there is none.
func rootAbove(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work in %s or any folder above it; run the suite from inside the kit", abs)
		}
	}
}

// goLocked runs the go command with args in dir while it holds a lock on
// out+".lock", creating out's folder first. With key not "", it first compares
// key with the one written beside out (out+".key") by the last build that
// passed: when they match and out is there, out is current and the go command
// is not run; after a build that passes, key is written there.
func goLocked(dir, out string, args []string, key string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(out+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close() // closing the file releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	keyFile := out + ".key"
	if key != "" {
		last, err := os.ReadFile(keyFile)
		if _, statErr := os.Stat(out); err == nil && statErr == nil && string(last) == key {
			return nil
		}
		// A build cut short must not leave the old key beside a new binary.
		if err := os.Remove(keyFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if cmd.Env, err = workspaceEnv(dir); err != nil {
		return err
	}
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s in %s: %w\n%s", args[0], dir, err, output)
	}
	if key == "" {
		return nil
	}
	return os.WriteFile(keyFile, []byte(key), 0o644)
}

// goEnvForKey lists the go command's settings that change what a build of the
// same files produces.
var goEnvForKey = []string{"GOVERSION", "GOROOT", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "CGO_ENABLED", "GOEXPERIMENT", "GOFLAGS", "GOWORK", "GOTOOLCHAIN", "GOMODCACHE"}

// buildKey returns a SHA-256, in hex, over everything a build in pkgDir can
// read but the module cache: what (the go subcommand and the names that tell
// builds apart), the go command's settings (goEnvForKey, asked with go env in
// pkgDir, a few milliseconds: it loads no package), and the path and content of
// every file under the kit's root but those in folders named .git, _output,
// bin and node_modules, which hold no source (about 450 files, 5 MB, read in
// tens of milliseconds). The module cache needs no hashing: go.mod and go.sum,
// which are hashed, fix what it serves. Any change anywhere in the kit, a doc
// included, makes a new key and so a real `go build`, which then decides
// what to compile again; a key never stays the same when a source changes.
func buildKey(root, pkgDir string, what []string) (string, error) {
	h := sha256.New()
	for _, w := range what {
		fmt.Fprintf(h, "%s\x00", w)
	}
	rel, err := filepath.Rel(root, pkgDir)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\x00", rel)
	env := exec.Command("go", append([]string{"env"}, goEnvForKey...)...)
	env.Dir = pkgDir
	if env.Env, err = workspaceEnv(pkgDir); err != nil {
		return "", err
	}
	settings, err := env.Output()
	if err != nil {
		return "", fmt.Errorf("go env in %s: %w", pkgDir, err)
	}
	h.Write(settings)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "_output", "bin", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		name, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		var content []byte
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			content = []byte("symlink to " + target)
		} else if d.Type().IsRegular() {
			if content, err = os.ReadFile(path); err != nil {
				return err
			}
		} else {
			return nil // a socket or pipe: nothing a build reads
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(content))
		h.Write(content)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hashing the kit's files for the build cache: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// overlayHash returns the first 12 hex digits of a SHA-256 over the
// replacements of the overlay file at path: each replaced path and the content that replaces it, in path
// order. Two overlays with the same replacements hash alike although their
// replacement files live in different temporary folders.
func overlayHash(path string) (string, error) {
	replace, err := readOverlayFile(path)
	if err != nil {
		return "", err
	}
	if replace == nil {
		return "", errors.New("the overlay " + path + " replaces no file")
	}
	paths := make([]string, 0, len(replace))
	for p := range replace {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		content, err := os.ReadFile(replace[p])
		if err != nil && replace[p] != "" {
			return "", fmt.Errorf("reading the overlay's replacement for %s: %w", p, err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(content))
		h.Write(content)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// workspaceEnv returns the environment of a go command run in dir: nil (the
// process's own) when dir's module is one the kit's go.work uses, else the
// process's own with GOWORK=off. A module kept out of the workspace on purpose
// (lesson 8's scheduler-plugin-example, whose k8s.io/kubernetes would move the
// versions the tiers build with) cannot be built in it: the go command refuses
// a module go.work does not list. A GOWORK already set is left as it is.
func workspaceEnv(dir string) ([]string, error) {
	if _, set := os.LookupEnv("GOWORK"); set {
		return nil, nil
	}
	root, err := rootAbove(dir)
	if err != nil {
		return nil, err
	}
	module, err := moduleAbove(root, dir)
	if err != nil {
		return nil, err
	}
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	if slices.Contains(workspaceUses(string(work)), module) {
		return nil, nil
	}
	return append(os.Environ(), "GOWORK=off"), nil
}

// moduleAbove returns the folder of the module dir lies in (the nearest folder
// at or above dir with a go.mod), relative to root and slash-separated, "." for
// root itself.
func moduleAbove(root, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			rel, err := filepath.Rel(root, d)
			return filepath.ToSlash(rel), err
		}
		if d == root || filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or any folder above it up to %s", abs, root)
		}
	}
}

// workspaceUses returns the folders a go.work's use directives name, cleaned
// ("./sample-controller" is "sample-controller"), in both forms the file takes:
// use ./a, and a use ( ... ) block with one folder a line.
func workspaceUses(work string) []string {
	var uses []string
	inBlock := false
	for _, line := range strings.Split(work, "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case inBlock && line == ")":
			inBlock = false
		case inBlock && line != "":
			uses = append(uses, path.Clean(strings.Trim(line, `"`)))
		case line == "use (":
			inBlock = true
		case strings.HasPrefix(line, "use "):
			uses = append(uses, path.Clean(strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "use ")), `"`)))
		}
	}
	return uses
}
