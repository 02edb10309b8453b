package results

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNotOwned marks a path where dbio would write or delete that holds
// something dbio did not create: a link, a file of another kind, or a
// directory without dbio's marker. dbio neither follows, writes into nor
// removes it.
var ErrNotOwned = errors.New("not created by dbio")

// notOwnedError is ErrNotOwned with what was found.
type notOwnedError struct{ msg string }

func (e *notOwnedError) Error() string { return e.msg }
func (e *notOwnedError) Unwrap() error { return ErrNotOwned }

// NotOwned refuses path for what it is ("is a symbolic link, which dbio
// did not create"); the caller adds what to do.
func NotOwned(path, what string) error {
	return &notOwnedError{msg: Printable(path) + " " + what}
}

// CheckOwnedDir is nil when path is one of dbio's own directories: a real
// directory (not a link) holding MarkerName as a regular file. Nothing at
// path gives an error wrapping fs.ErrNotExist; anything else an error
// wrapping ErrNotOwned.
func CheckOwnedDir(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return err
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return NotOwned(path, "is a symbolic link, which dbio did not create")
	case !fi.IsDir():
		return NotOwned(path, "is not a directory dbio created")
	}
	mi, err := os.Lstat(filepath.Join(path, MarkerName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return NotOwned(path, "already exists and was not created by dbio (no "+MarkerName+" marker)")
	case err != nil:
		return err
	case !mi.Mode().IsRegular():
		return NotOwned(path, "has a "+MarkerName+" marker that is not a regular file, which dbio did not create")
	}
	return nil
}

// MakeOwnedDir creates the directory path, which must not exist, and marks
// it as dbio's with note as the marker's text.
func MakeOwnedDir(path, note string) error {
	if err := os.Mkdir(path, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(path, MarkerName), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(note)
	return errors.Join(err, f.Close())
}
