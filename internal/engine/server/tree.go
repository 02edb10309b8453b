package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"dbio/internal/engine"
)

// CopyTree copies the directory src to dst, which must not exist yet:
// directories, regular files and symbolic links, with their permission bits,
// everything created given to u. skip, when not nil, leaves out the entries
// whose path relative to src it accepts (and, for a directory, all below it).
// It returns the bytes of file content copied. Nothing is synced: a database
// server restarted on the copy syncs its files during recovery.
func CopyTree(ctx context.Context, src, dst string, u User, skip func(rel string) bool) (int64, error) {
	c, err := CloneTree(ctx, src, dst, u, skip)
	return c.Bytes, err
}

// TreeCopy is what CloneTree copied: the bytes of file content, and
// whether every file was a copy-on-write clone (none when there were none).
type TreeCopy struct {
	Bytes     int64
	Reflinked bool
}

// CloneTree is CopyTree, each file cloned where the file system offers
// copy-on-write clones (see engine.CloneFile), and says whether all were.
func CloneTree(ctx context.Context, src, dst string, u User, skip func(rel string) bool) (TreeCopy, error) {
	var copied int64
	files, cloned := 0, 0
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if rel != "." && skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.Mkdir(to, info.Mode().Perm()); err != nil {
				return err
			}
			// Mkdir's mode passes through the umask; the copy keeps the original's.
			if err := os.Chmod(to, info.Mode().Perm()); err != nil {
				return err
			}
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, to); err != nil {
				return err
			}
		case d.Type().IsRegular():
			n, reflinked, err := engine.CloneFile(path, to, info.Mode().Perm())
			copied += n
			if err != nil {
				return err
			}
			files++
			if reflinked {
				cloned++
			}
		default:
			return fmt.Errorf("%s is neither a file, a directory nor a symbolic link", path)
		}
		return u.Own(to)
	})
	c := TreeCopy{Bytes: copied, Reflinked: files > 0 && cloned == files}
	if err != nil {
		return c, fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return c, nil
}

// TreeBytes sums the sizes of the regular files below dir (or of dir itself
// when it is a file): what a backup wrote.
func TreeBytes(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	return total, err
}

// OwnTree gives dir and everything below it to u. It is only ever called on
// directories dbio filled itself, inside its own marked directories.
func OwnTree(dir string, u User) error {
	if u.Self {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return u.Own(path)
	})
}

// MoveAside renames dir into a new directory created in parent (named after
// prefix), so that it can be put back if what replaces it fails, and returns
// where dir now is. parent is dbio's own directory holding dir, on the same
// filesystem, so the move is a rename and costs no copy.
func MoveAside(dir, parent, prefix string) (string, error) {
	holder, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", fmt.Errorf("set %s aside: %w", dir, err)
	}
	moved := filepath.Join(holder, filepath.Base(dir))
	if err := os.Rename(dir, moved); err != nil {
		os.Remove(holder)
		return "", fmt.Errorf("set %s aside: %w", dir, err)
	}
	return moved, nil
}

// PutBack undoes MoveAside: whatever is now at dir (a failed replacement,
// which dbio created) is removed and the set-aside directory returns.
func PutBack(moved, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Rename(moved, dir); err != nil {
		return err
	}
	return os.Remove(filepath.Dir(moved))
}

// DropAside removes a directory set aside by MoveAside, once what replaced
// it works: it is dbio's own instance data, superseded.
func DropAside(moved string) error {
	return os.RemoveAll(filepath.Dir(moved))
}

// PrepareDestination makes dst ready for a backup tool running as u. A
// missing dst is created (its parents as dbio, dst itself for u, private);
// an existing one is used as it is, never taken over, and must be an empty
// directory, because dbio does not overwrite what it did not write.
// created says whether dst was made here, so that a failed backup removes
// only what it made.
func PrepareDestination(dst string, u User) (created bool, err error) {
	if dst == "" {
		return false, errors.New("no backup destination given")
	}
	fi, err := os.Stat(dst)
	switch {
	case err == nil && !fi.IsDir():
		return false, fmt.Errorf("backup destination %s is a file, not a directory: name a new directory", dst)
	case err == nil:
		entries, err := os.ReadDir(dst)
		if err != nil {
			return false, fmt.Errorf("backup destination %s: %w", dst, err)
		}
		if len(entries) > 0 {
			return false, fmt.Errorf("backup destination %s is not empty: dbio writes backups only into a new or empty directory", dst)
		}
		return false, nil
	case !errors.Is(err, os.ErrNotExist):
		return false, fmt.Errorf("backup destination %s: %w", dst, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return false, fmt.Errorf("backup destination %s: %w: choose a directory dbio may create", dst, err)
	}
	if err := u.CheckReach(filepath.Dir(dst)); err != nil {
		return false, err
	}
	if err := u.MakeDir(dst, 0o700); err != nil {
		return false, fmt.Errorf("backup destination %s: %w: choose a directory dbio may create", dst, err)
	}
	return true, nil
}

// ToolError turns a failed backup or restore program into an error that says
// what failed and, when the program's complaint is about permissions, what to
// do about it.
func ToolError(what string, u User, dir string, err error) error {
	if strings.Contains(err.Error(), "Permission denied") || strings.Contains(err.Error(), "permission denied") {
		who := "dbio"
		if !u.Self {
			who = "the server's user " + u.Name
		}
		return fmt.Errorf("%s: %w: it runs as %s, which must be able to write %s: name a directory dbio may create, or an empty one that user may write", what, err, who, dir)
	}
	return fmt.Errorf("%s: %w", what, err)
}
