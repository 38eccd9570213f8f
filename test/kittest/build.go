package kittest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	return goLocked(pkgDir, outPath, append(args, "."))
}

// CachedBinary builds the main package in pkgDir as BuildBinary does, but to a
// path of its own under the kit's BinDir, and returns that path: name, followed
// by a hash of the overlay's files when overlay is not "" (a solution laid over
// the tier is another binary). `go build -o` leaves a binary that is already up
// to date alone, so a suite run again with no source changed starts without
// linking, which costs 4 to 5 CPU seconds for a controller built on client-go.
// Builds of one path wait for each other (a file lock), so suites that run at
// once share the binary. The error says why it could not be built.
func CachedBinary(pkgDir, name, overlay string) (string, error) {
	root, err := rootAbove(pkgDir)
	if err != nil {
		return "", err
	}
	if overlay != "" {
		sum, err := overlayHash(overlay)
		if err != nil {
			return "", err
		}
		name += "-" + sum
	}
	out := filepath.Join(root, BinDir, name)
	return out, BuildBinary(pkgDir, out, overlay)
}

// CachedTestBinary compiles the test package in pkgDir with the build tags
// given (`go test -c -tags ...`) to the kit's BinDir, under name, and returns
// that path; as with CachedBinary, an up-to-date binary is not linked again,
// and builds of one path wait for each other. Run the binary in pkgDir, as
// go test would. The error carries the compiler's output.
func CachedTestBinary(pkgDir, tags, name string) (string, error) {
	root, err := rootAbove(pkgDir)
	if err != nil {
		return "", err
	}
	out := filepath.Join(root, BinDir, name)
	return out, goLocked(pkgDir, out, []string{"test", "-c", "-tags", tags, "-o", out, "."})
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
// out+".lock", creating out's folder first.
func goLocked(dir, out string, args []string) error {
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
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s in %s: %w\n%s", args[0], dir, err, output)
	}
	return nil
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
