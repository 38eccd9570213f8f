package node

import (
	"strings"
	"testing"
)

func TestParseMountInfoReadsThePointAndReadOnly(t *testing.T) {
	const table = `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
45 22 254:0 /state/volumes/vol-1/data /var/lib/kubelet/pods/p\0401/mount ro,relatime shared:1 - ext4 /dev/vda rw
`
	mounts, err := parseMountInfo(strings.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	want := []mount{{Point: "/", ReadOnly: false}, {Point: "/var/lib/kubelet/pods/p 1/mount", ReadOnly: true}}
	if len(mounts) != len(want) || mounts[0] != want[0] || mounts[1] != want[1] {
		t.Errorf("parseMountInfo: %+v, want %+v", mounts, want)
	}
	if _, err := parseMountInfo(strings.NewReader("22 1 254:0 /\n")); err == nil {
		t.Error("a line of 4 fields: no error")
	}
	if _, err := parseMountInfo(strings.NewReader(`22 1 254:0 / /a\04 rw - ext4 /dev/vda rw`)); err == nil {
		t.Error(`a cut escape (\04): no error`)
	}
}
