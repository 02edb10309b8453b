package target

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"dbio/internal/results"
)

// checkOwned says whether path is one of dbio's own directories: a real
// directory (not a symbolic link) holding dbio's marker as a regular file. It
// returns an error wrapping os.ErrNotExist when nothing is there, and one
// wrapping ErrNotOwned for anything else found in its place. Every engine and
// fio reach their directories through here, so each refuses a planted link or
// a foreign directory with the same words.
func checkOwned(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return err
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return notOwned(path, "is a symbolic link")
	case !fi.IsDir():
		return notOwned(path, "is not a directory")
	}
	mi, err := os.Lstat(filepath.Join(path, results.MarkerName))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return notOwned(path, "is a directory without dbio's "+results.MarkerName+" marker")
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	case !mi.Mode().IsRegular():
		return notOwned(path, "has a "+results.MarkerName+" marker that is not a regular file")
	}
	return nil
}

// notOwned is the one refusal of something in dbio's place that dbio did not make.
func notOwned(path, what string) error {
	return &notOwnedError{msg: fmt.Sprintf("%s %s, which dbio did not create: dbio neither follows, uses nor removes it; move it away or choose another target", path, what)}
}

// notOwnedError is ErrNotOwned with the whole story, which already says it.
type notOwnedError struct{ msg string }

func (e *notOwnedError) Error() string { return e.msg }
func (e *notOwnedError) Unwrap() error { return ErrNotOwned }

// CheckOwned refuses, without changing anything, a path inside dbio's
// directory that dbio could not safely use: a symbolic link, or a directory
// without dbio's marker. A path that does not exist is fine (dbio would create it).
func CheckOwned(path string) error {
	if err := checkOwned(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// CheckFile refuses a path where dbio expects its own regular file (a
// database file, a working file) but finds a symbolic link or anything else
// that is not a regular file. A path that does not exist is fine.
func CheckFile(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return notOwned(path, "is a symbolic link")
	case !fi.Mode().IsRegular():
		return notOwned(path, "is not a regular file")
	}
	return nil
}

// WriteFile writes data to the file at path, creating it or replacing its
// content, without following a symbolic link in its place (O_NOFOLLOW).
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return noFollowError(path, err)
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// OpenFile is os.OpenFile that never follows a symbolic link at path.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return nil, noFollowError(path, err)
	}
	return f, nil
}

// noFollowError turns the ELOOP of an O_NOFOLLOW open on a link into dbio's refusal.
func noFollowError(path string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		return notOwned(path, "is a symbolic link")
	}
	return err
}

// writeNew creates a file that must not exist yet, never through a link.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// lockDir holds an exclusive lock on a directory for a moment (flock on the
// directory itself writes nothing in it) and returns its release.
func lockDir(dir string) (func(), error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "lock", Path: dir, Err: err}
	}
	return func() { syscall.Close(fd) }, nil
}
