// Package volumes keeps the toy driver's volumes on disk: every volume is a
// folder, <state-dir>/volumes/<volume-id>/, holding the record volume.json (the
// volume's name, size and the nodes it is published to) and data/, the folder a
// workload would see. Nothing lives only in memory, so a driver started again
// on the same --state-dir finds every volume it made before.
//
// The store changes the folder tree only by renames, which a POSIX file system
// makes atomic: a volume is assembled in a hidden folder and renamed into
// place, and deleted by being renamed out of place first. Whoever lists the
// folder (the driver after a crash, a learner with ls) therefore sees a volume
// either complete or not at all, never a folder without its record.
//
// The store knows folders, not the CSI spec: the rules of the calls (which
// name is the same volume, which size is allowed, which gRPC code answers) are
// the Controller service's, pkg/controller.
package volumes

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// RecordFile is the name of the file inside a volume's folder that records the
// volume (Volume as JSON).
const RecordFile = "volume.json"

// DataDir is the name of the folder inside a volume's folder that holds the
// volume's contents: what NodePublishVolume would mount into a Pod (lesson 7,
// part 2).
const DataDir = "data"

// hiddenPrefix starts the names of the store's work folders and files (a
// volume being assembled, one being deleted, a record being rewritten). List
// skips them and Open removes those a crash left behind.
const hiddenPrefix = "."

// ErrNotFound is returned (wrapped) for a volume ID the store has no folder for.
var ErrNotFound = errors.New("no such volume")

// idPattern is the shape of the IDs NewID makes. A volume ID reaches the store
// from the network (DeleteVolume's volume_id, say), so anything else is
// refused before it is joined to a path: "../.." must never name a folder.
var idPattern = regexp.MustCompile(`^vol-[0-9a-f]{16}$`)

// Volume is one volume as its record file holds it.
type Volume struct {
	// ID is the volume ID the driver hands out, and the folder's name.
	ID string `json:"id"`
	// Name is the name the CO asked for in CreateVolume (csi-provisioner
	// sends pvc-<claim UID>); the spec makes it the key of idempotency.
	Name string `json:"name"`
	// CapacityBytes is the size the volume was created with.
	CapacityBytes int64 `json:"capacityBytes"`
	// Zone is the zone the volume was made in, when the driver runs with
	// zones (--zones; lesson 7's topology section), else "".
	Zone string `json:"zone,omitempty"`
	// Published maps each node ID the volume is published to
	// (ControllerPublishVolume) to whether it was published read-only.
	Published map[string]bool `json:"published,omitempty"`
}

// Store is the folder <state-dir>/volumes. Its methods are not safe for
// concurrent calls that change the same volume: the caller serializes them.
type Store struct {
	dir string
}

// Open returns the store under stateDir, creating <stateDir>/volumes if needed
// and removing the hidden work folders a crash left half done there.
func Open(stateDir string) (*Store, error) {
	if !filepath.IsAbs(stateDir) {
		abs, err := filepath.Abs(stateDir)
		if err != nil {
			return nil, err
		}
		stateDir = abs
	}
	s := &Store{dir: filepath.Join(stateDir, "volumes")}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), hiddenPrefix) {
			if err := os.RemoveAll(filepath.Join(s.dir, e.Name())); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// Dir returns the folder of the volume id: <state-dir>/volumes/<id>.
func (s *Store) Dir(id string) string {
	return filepath.Join(s.dir, id)
}

// ValidID reports whether id has the shape of the IDs this store hands out.
func ValidID(id string) bool {
	return idPattern.MatchString(id)
}

// NewID returns a fresh volume ID: "vol-" and 16 random hex digits.
func NewID() string {
	b := make([]byte, 8)
	rand.Read(b) // never returns an error (crypto/rand's contract)
	return "vol-" + hex.EncodeToString(b)
}

// Get returns the volume id, or an error wrapping ErrNotFound when there is no
// such folder (or id is not an ID this store would hand out).
func (s *Store) Get(id string) (Volume, error) {
	if !ValidID(id) {
		return Volume{}, fmt.Errorf("volume %q: %w", id, ErrNotFound)
	}
	data, err := os.ReadFile(filepath.Join(s.Dir(id), RecordFile))
	if errors.Is(err, os.ErrNotExist) {
		return Volume{}, fmt.Errorf("volume %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Volume{}, err
	}
	var v Volume
	if err := json.Unmarshal(data, &v); err != nil {
		return Volume{}, fmt.Errorf("%s: %w", filepath.Join(s.Dir(id), RecordFile), err)
	}
	return v, nil
}

// List returns every volume, sorted by ID.
func (s *Store) List() ([]Volume, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var vols []Volume
	for _, e := range entries {
		if !e.IsDir() || !ValidID(e.Name()) {
			continue // a work folder, or something a person put there
		}
		v, err := s.Get(e.Name())
		if err != nil {
			return nil, err
		}
		vols = append(vols, v)
	}
	slices.SortFunc(vols, func(a, b Volume) int { return strings.Compare(a.ID, b.ID) })
	return vols, nil
}

// FindByName returns the volume created with the given name, if any.
func (s *Store) FindByName(name string) (Volume, bool, error) {
	vols, err := s.List()
	if err != nil {
		return Volume{}, false, err
	}
	for _, v := range vols {
		if v.Name == name {
			return v, true, nil
		}
	}
	return Volume{}, false, nil
}

// Create makes a new volume with a fresh ID in zone ("" for a driver without
// zones): the folder with its record and its data folder is assembled under a
// hidden name, then renamed into place in one step, so the volume appears
// complete or not at all.
func (s *Store) Create(name string, capacityBytes int64, zone string) (Volume, error) {
	v := Volume{ID: NewID(), Name: name, CapacityBytes: capacityBytes, Zone: zone}
	work, err := os.MkdirTemp(s.dir, hiddenPrefix+"new-")
	if err != nil {
		return Volume{}, err
	}
	defer os.RemoveAll(work) // after a successful rename there is nothing left to remove
	// MkdirTemp makes the folder private (0700); a volume's folder is not.
	if err := os.Chmod(work, 0o755); err != nil {
		return Volume{}, err
	}
	if err := os.Mkdir(filepath.Join(work, DataDir), 0o777); err != nil {
		return Volume{}, err
	}
	if err := writeRecord(work, v); err != nil {
		return Volume{}, err
	}
	if err := os.Rename(work, s.Dir(v.ID)); err != nil {
		return Volume{}, err
	}
	return v, nil
}

// Update rewrites the record of an existing volume (its Published nodes, say):
// written to a hidden file beside the record, then renamed over it, so a crash
// leaves the old record or the new one, never half of one.
func (s *Store) Update(v Volume) error {
	if _, err := s.Get(v.ID); err != nil {
		return err
	}
	return writeRecord(s.Dir(v.ID), v)
}

// Delete removes the volume id with everything in it. The folder is first
// renamed to a hidden name, so the volume is gone from List at once even if
// removing its contents is cut short (Open finishes the job). A volume that
// does not exist is no error: deleting is idempotent.
func (s *Store) Delete(id string) error {
	if !ValidID(id) {
		return nil
	}
	doomed := filepath.Join(s.dir, hiddenPrefix+"deleted-"+id)
	if err := os.Rename(s.Dir(id), doomed); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	return os.RemoveAll(doomed)
}

// writeRecord writes v as dir/volume.json through a hidden file and a rename.
func writeRecord(dir string, v Volume) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, hiddenPrefix+RecordFile+"-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // gone already after the rename
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return err
	}
	// Flush to disk before the rename makes the new record the record.
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, RecordFile))
}
