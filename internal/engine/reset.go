package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Ways a pristine copy is made and put back, as run.json records them.
const (
	// CopyReflink is the file system's copy-on-write clone (FICLONE): the
	// copy shares the original's blocks until either is written.
	CopyReflink = "reflink"
	// CopyBytes is a plain copy of every byte, where the file system
	// offers no clone.
	CopyBytes = "copy"
	// CopyTemplate is a database the server copies itself (PostgreSQL's
	// CREATE DATABASE … TEMPLATE).
	CopyTemplate = "template"
)

// ErrPristineGone is why a pristine copy cannot be restored when what it
// was is no longer there (its files removed, its template database gone
// with an instance a --data fresh run created again): the run loads again
// and keeps a new copy, as with none.
var ErrPristineGone = errors.New("the pristine copy is gone")

// PristineCopy is what keeping or restoring a pristine copy did: how, and
// the bytes it copied (or cloned).
type PristineCopy struct {
	Method string
	Bytes  int64
}

// Resetter is implemented by instances that can keep their loaded
// database as a pristine copy and put it back in place of the database a
// run changed (--data reset), which costs a copy instead of a reload.
// Nothing may run on the database during either call; the instance is
// running and reachable through the same DB handle afterwards.
type Resetter interface {
	// KeepPristine copies the database as it is now into dir, a path in
	// dbio's own directory on the data target that does not exist yet.
	KeepPristine(ctx context.Context, dir string) (PristineCopy, error)
	// RestorePristine replaces the database with the copy KeepPristine
	// made in dir, which it leaves as it is for the next restore.
	RestorePristine(ctx context.Context, dir string) (PristineCopy, error)
}

// CloneFile copies from into to, a new file with perm: by the file
// system's copy-on-write clone where it offers one (reflinked true), else
// byte for byte (copy_file_range, inside the kernel). It returns the
// bytes the copy holds, once they are on the disk: a copy left in the page
// cache would be written back while whatever comes next runs (a
// benchmark's measured steps, on the same disk), and the time the copy
// took would not include what it cost.
func CloneFile(from, to string, perm os.FileMode) (n int64, reflinked bool, err error) {
	in, err := os.Open(from)
	if err != nil {
		return 0, false, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return 0, false, err
	}
	if !fi.Mode().IsRegular() {
		return 0, false, fmt.Errorf("%s is not a regular file", from)
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return 0, false, err
	}
	if cloneErr := ficlone(out, in); cloneErr == nil {
		n, reflinked = fi.Size(), true
	} else if !cloneUnsupported(cloneErr) {
		err = fmt.Errorf("clone %s: %w", from, cloneErr)
	} else {
		n, err = io.Copy(out, in)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// OpenFile's mode passes through the umask; the copy keeps perm.
		err = os.Chmod(to, perm)
	}
	if err != nil {
		os.Remove(to)
		return 0, false, err
	}
	return n, reflinked, nil
}

// ficloneRequest is Linux's FICLONE ioctl, _IOW(0x94, 9, int).
const ficloneRequest = 0x40049409

func ficlone(dst, src *os.File) error {
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, dst.Fd(), ficloneRequest, src.Fd())
	if errno != 0 {
		return errno
	}
	return nil
}

// cloneUnsupported says the clone failed because the file system (or the
// pair of files, on two file systems) offers none, not because of the files.
func cloneUnsupported(err error) bool {
	return errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOTTY) || errors.Is(err, syscall.EXDEV) ||
		errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EPERM)
}
