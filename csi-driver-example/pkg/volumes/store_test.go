package volumes_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/volumes"
)

// entries lists what ls shows in <stateDir>/volumes, hidden names included.
func entries(t *testing.T, stateDir string) []string {
	t.Helper()
	list, err := os.ReadDir(filepath.Join(stateDir, "volumes"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	return names
}

func TestAVolumeIsAFolderWithItsRecordAndNothingElseIsLeft(t *testing.T) {
	dir := t.TempDir()
	s, err := volumes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Create("pvc-1", 5<<20, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := entries(t, dir); len(got) != 1 || got[0] != v.ID {
		t.Errorf("volumes/ holds %v, want only the volume's folder %s", got, v.ID)
	}
	got, err := s.Get(v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "pvc-1" || got.CapacityBytes != 5<<20 {
		t.Errorf("Get: %+v, want pvc-1 of %d bytes", got, 5<<20)
	}

	got.Published = map[string]bool{"node-1": true}
	if err := s.Update(got); err != nil {
		t.Fatal(err)
	}
	if names, _ := os.ReadDir(s.Dir(v.ID)); len(names) != 2 {
		t.Errorf("the volume's folder holds %v, want %s and %s only", names, volumes.RecordFile, volumes.DataDir)
	}

	if err := s.Delete(v.ID); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, dir); len(got) != 0 {
		t.Errorf("volumes/ holds %v after the delete, want nothing", got)
	}
	if _, err := s.Get(v.ID); !errors.Is(err, volumes.ErrNotFound) {
		t.Errorf("Get after the delete: %v, want ErrNotFound", err)
	}
}

func TestOpenRemovesWhatACrashLeftHalfDone(t *testing.T) {
	dir := t.TempDir()
	s, err := volumes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Create("pvc-1", 1<<20, "")
	if err != nil {
		t.Fatal(err)
	}
	// A volume being assembled and one being deleted when the driver died.
	for _, work := range []string{".new-123", ".deleted-vol-0123456789abcdef"} {
		if err := os.MkdirAll(filepath.Join(dir, "volumes", work, volumes.DataDir), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	s, err = volumes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := entries(t, dir); len(got) != 1 || got[0] != v.ID {
		t.Errorf("volumes/ holds %v after Open, want only %s", got, v.ID)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != v.ID {
		t.Errorf("List: %v, want the volume %s", list, v.ID)
	}
}

func TestAnIDThatIsNoVolumeIDReachesNoFolder(t *testing.T) {
	dir := t.TempDir()
	s, err := volumes.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A folder outside volumes/ that looks like a volume: an ID such as
	// "../outside", sent over the socket, must never name it.
	outside := filepath.Join(dir, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, volumes.RecordFile), []byte(`{"id":"../outside","name":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("../outside"); !errors.Is(err, volumes.ErrNotFound) {
		t.Errorf("Get(\"../outside\"): %v, want ErrNotFound", err)
	}
	if err := s.Delete("../outside"); err != nil {
		t.Errorf("Delete(\"../outside\"): %v, want nothing to delete", err)
	}
	if _, err := os.Stat(filepath.Join(outside, volumes.RecordFile)); err != nil {
		t.Errorf("Delete(\"../outside\") reached the folder outside volumes/: %v", err)
	}
}
