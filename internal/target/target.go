// Package target owns a storage location under test: the directory a user
// names, dbio's own marked subdirectory inside it, its free space, and the
// filesystem and block device behind it.
//
// dbio only ever creates, writes and removes files below <target>/dbio, and
// only after it has placed its marker file there, so a mistyped path can never
// cost a user their data.
package target

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"dbio/internal/results"
	"dbio/internal/units"
)

// DirName is the subdirectory of a target that dbio works in.
const DirName = "dbio"

// ErrNotOwned is returned when dbio is asked to remove something it did not create.
var ErrNotOwned = errors.New("not created by dbio")

// Placement roles, as in the studies: data, log (WAL / redo) and backups on
// separate disks; the results record them as they are.
const (
	RoleData   results.TargetRole = "data"
	RoleLog    results.TargetRole = "log"
	RoleBackup results.TargetRole = "backup"
)

// Target is a storage location under test.
type Target struct {
	// Path is the directory the user named, cleaned and absolute.
	Path string
	// Dir is dbio's own working directory inside Path.
	Dir string
}

// Open validates path as a storage target and prepares dbio's marked
// working directory inside it. The path must exist already (Create makes it):
// a mistyped path or an unmounted mount point must never send a benchmark to
// whatever disk holds the parent directory. It may not be a device node or a
// regular file, and it must be writable.
func Open(path string) (*Target, error) {
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("target path is empty: pass --target DIR")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", path, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, notExist(abs)
	case err != nil:
		return nil, fmt.Errorf("target %s: %w", abs, err)
	case fi.Mode()&(os.ModeDevice|os.ModeCharDevice) != 0:
		return nil, fmt.Errorf("target %s is a device node: dbio works on a directory of a mounted filesystem; mount the device and pass its mount point", abs)
	case !fi.IsDir():
		return nil, fmt.Errorf("target %s is not a directory: pass the directory dbio may work in", abs)
	}
	t := &Target{Path: abs, Dir: filepath.Join(abs, DirName)}
	if err := t.claim(); err != nil {
		return nil, err
	}
	return t, nil
}

// Create makes the directory path (and its parents) when it does not exist
// yet, then opens it as a target: what --create-target asks for.
func Create(path string) (*Target, error) {
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("target path is empty: pass --target DIR")
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("target %s does not exist and cannot be created: %w", path, err)
	}
	return Open(path)
}

// notExist is the refusal of a missing target, saying how to create it.
func notExist(abs string) error {
	return &notExistError{msg: fmt.Sprintf("target %s does not exist: create it (mkdir -p %s) or pass --create-target; dbio does not create a target on its own, so that a mistyped path or an unmounted mount point never benchmarks the disk underneath",
		abs, abs)}
}

// notExistError is os.ErrNotExist told the way a user can act on.
type notExistError struct{ msg string }

func (e *notExistError) Error() string { return e.msg }
func (e *notExistError) Unwrap() error { return os.ErrNotExist }

// markerText is what dbio writes in the marker of its own directory.
const markerText = "This directory was created by dbio. dbio removes only what is inside directories carrying this marker.\n"

// claim creates <path>/dbio with its marker, or accepts an existing one only if
// it is a real directory carrying the marker: a directory named dbio that dbio
// did not create, or a symbolic link, is left alone. Two dbio processes
// claiming one target at once are serialized by a lock on the target
// directory itself, so neither sees the other's directory before its marker.
func (t *Target) claim() error {
	unlock, err := lockDir(t.Path)
	if err != nil {
		return fmt.Errorf("target %s: %w", t.Path, err)
	}
	defer unlock()
	switch err := checkOwned(t.Dir); {
	case err == nil:
		return t.checkWritable()
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := os.Mkdir(t.Dir, 0o755); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return fmt.Errorf("target %s is not writable: choose a directory you can write to, or run with permission to write it", t.Path)
		}
		return fmt.Errorf("target %s: create %s: %w", t.Path, t.Dir, err)
	}
	if err := writeNew(filepath.Join(t.Dir, results.MarkerName), []byte(markerText), 0o644); err != nil {
		return fmt.Errorf("target %s: write marker: %w", t.Path, err)
	}
	return nil
}

func (t *Target) checkWritable() error {
	f, err := os.CreateTemp(t.Dir, ".write-test-*")
	if err != nil {
		return fmt.Errorf("target %s is not writable: %w", t.Path, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// Sub returns dbio's directory for one purpose (for example "sqlite"),
// creating it with its own marker so that it can later be removed safely. An
// existing entry of that name is used only when it is a real directory with
// dbio's marker: a symbolic link or a directory dbio did not create is refused,
// never followed or taken over.
func (t *Target) Sub(name string) (string, error) {
	if err := validSubName(name); err != nil {
		return "", err
	}
	dir := filepath.Join(t.Dir, name)
	switch err := checkOwned(dir); {
	case err == nil:
		return dir, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("target %s: %w", t.Path, err)
	}
	if err := writeNew(filepath.Join(dir, results.MarkerName), []byte("created by dbio\n"), 0o644); err != nil {
		return "", fmt.Errorf("target %s: %w", t.Path, err)
	}
	return dir, nil
}

func validSubName(name string) error {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return fmt.Errorf("invalid target subdirectory name %q", name)
	}
	return nil
}

// RemoveSub deletes one of dbio's subdirectories, and refuses anything that
// is not a real directory carrying dbio's marker. A symbolic link is not
// followed: dbio removes nothing through it.
func (t *Target) RemoveSub(name string) error {
	dir := filepath.Join(t.Dir, name)
	if validSubName(name) != nil || filepath.Dir(dir) != t.Dir {
		return fmt.Errorf("remove %s: %w (outside %s)", dir, ErrNotOwned, t.Dir)
	}
	switch err := checkOwned(dir); {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	return os.RemoveAll(dir)
}

// FreeBytes is the space available to an unprivileged writer on the target's filesystem.
func (t *Target) FreeBytes() (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(t.Path, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", t.Path, err)
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// EnsureSpace refuses a target with less than need bytes free, saying how much is needed.
func (t *Target) EnsureSpace(need uint64, what string) error {
	free, err := t.FreeBytes()
	if err != nil {
		return err
	}
	if free < need {
		return fmt.Errorf("target %s has %s free but %s needs about %s: free some space, choose a larger target, or reduce the scale",
			t.Path, units.FormatBytes(free), what, units.FormatBytes(need))
	}
	return nil
}
