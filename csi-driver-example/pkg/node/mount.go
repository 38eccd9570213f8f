package node

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// mountInfoFile lists the mounts this process sees, one a line, in the order
// they were made (man 5 proc, /proc/pid/mountinfo). `findmnt` and
// `cat /proc/self/mountinfo` show the same on a node.
const mountInfoFile = "/proc/self/mountinfo"

// mount is one line of mountInfoFile, the fields this driver reads.
type mount struct {
	// Point is where the mount is seen: the mount point, an absolute path.
	Point string
	// ReadOnly is true when the mount itself is read-only (its mount
	// options say ro), whatever its file system's options say.
	ReadOnly bool
}

// mountAt returns the mount seen at path, and false when path is no mount
// point (a plain folder, or nothing at all). A path mounted over twice has two
// lines; the last one is the mount on top, the one a reader of path sees.
//
// The mount table is the only way to tell: a bind mount of a folder of the
// same file system has the same device number as its parent folder, so the
// usual test (is path's device other than its parent's?) misses it.
func mountAt(path string) (mount, bool, error) {
	f, err := os.Open(mountInfoFile)
	if err != nil {
		return mount{}, false, err
	}
	defer f.Close()
	mounts, err := parseMountInfo(f)
	if err != nil {
		return mount{}, false, fmt.Errorf("%s: %w", mountInfoFile, err)
	}
	path = filepath.Clean(path)
	for _, m := range slices.Backward(mounts) {
		if m.Point == path {
			return m, true, nil
		}
	}
	return mount{}, false, nil
}

// parseMountInfo reads mountinfo lines such as
//
//	36 35 98:0 /volumes/vol-1/data /mnt/staging rw,relatime shared:1 - ext4 /dev/sda1 rw
//
// whose fifth field is the mount point and sixth the mount's own options.
func parseMountInfo(r io.Reader) ([]mount, error) {
	var mounts []mount
	s := bufio.NewScanner(r)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 6 {
			return nil, fmt.Errorf("line %q: want at least 6 fields", s.Text())
		}
		point, err := unescapeOctal(fields[4])
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", s.Text(), err)
		}
		mounts = append(mounts, mount{
			Point:    point,
			ReadOnly: slices.Contains(strings.Split(fields[5], ","), "ro"),
		})
	}
	return mounts, s.Err()
}

// unescapeOctal undoes the kernel's escapes in a mountinfo path: a space, a
// tab, a newline and a backslash are written as \040, \011, \012 and \134.
func unescapeOctal(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+4 > len(s) {
			return "", fmt.Errorf("%q: a backslash without three octal digits", s)
		}
		n, err := strconv.ParseUint(s[i+1:i+4], 8, 8)
		if err != nil {
			return "", fmt.Errorf("%q: a backslash without three octal digits", s)
		}
		b.WriteByte(byte(n))
		i += 3
	}
	return b.String(), nil
}

// bindMount mounts the folder source at target (an existing folder), as
// `mount --bind source target` does: target then shows source's files, and a
// file written through one is in the other. With readOnly the mount at target
// is read-only; source stays writable.
//
// Linux ignores MS_RDONLY on the call that makes a bind mount, so read-only
// takes a second call that changes the new mount's flags (MS_REMOUNT), as
// `mount --bind -o ro` does behind the scenes.
func bindMount(source, target string, readOnly bool) error {
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mounting %s at %s: %w", source, target, err)
	}
	if !readOnly {
		return nil
	}
	if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		// Leave nothing half done: a writable mount where a read-only
		// one was asked for must not stay.
		return errors.Join(fmt.Errorf("making the mount at %s read-only: %w", target, err), unmount(target))
	}
	return nil
}

// unmount removes the mount at target, as `umount target` does. A mount in
// use (a process has a file open in it) is EBUSY, returned as an error:
// nothing is forced.
func unmount(target string) error {
	if err := unix.Unmount(target, 0); err != nil {
		return fmt.Errorf("unmounting %s: %w", target, err)
	}
	return nil
}

// sameFolder reports whether the paths a and b show the same folder: the same
// inode on the same device, which is what a bind mount at b of a gives.
func sameFolder(a, b string) (bool, error) {
	var sa, sb unix.Stat_t
	if err := unix.Stat(a, &sa); err != nil {
		return false, fmt.Errorf("%s: %w", a, err)
	}
	if err := unix.Stat(b, &sb); err != nil {
		return false, fmt.Errorf("%s: %w", b, err)
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino, nil
}
