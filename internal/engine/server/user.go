package server

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"dbio/internal/execx"
)

// User is the account a managed server runs as.
type User struct {
	Name     string
	UID, GID uint32
	// Self means the server runs as dbio's own account: dbio was not started
	// as root, so it neither switches user nor changes ownership.
	Self   bool
	groups []uint32
}

// Choose picks who runs a server. A dbio started as root (euid 0) runs it as
// the first of candidates that exists on the system, because database servers
// refuse to run as root and should not; otherwise it runs as dbio's own user.
func Choose(euid int, candidates ...string) (User, error) {
	if euid != 0 {
		name := strconv.Itoa(euid)
		if u, err := user.LookupId(name); err == nil {
			name = u.Username
		}
		return User{Name: name, UID: uint32(euid), GID: uint32(os.Getegid()), Self: true}, nil
	}
	for _, name := range candidates {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		out := User{Name: name, UID: uint32(uid), GID: uint32(gid)}
		if ids, err := u.GroupIds(); err == nil {
			for _, id := range ids {
				if g, err := strconv.ParseUint(id, 10, 32); err == nil {
					out.groups = append(out.groups, uint32(g))
				}
			}
		}
		return out, nil
	}
	return User{}, fmt.Errorf("dbio runs as root and a database server must not, but none of the accounts %s exists: create one (for example `useradd --system %s`) or run dbio as an ordinary user",
		strings.Join(candidates, ", "), candidates[0])
}

// Apply makes c run as u.
func (u User) Apply(c *execx.Cmd) {
	if !u.Self {
		c.UID, c.GID = u.UID, u.GID
	}
}

// MakeDir creates dir (mode perm) for the server's own files and gives it to
// u. It is only ever called on directories dbio creates inside its own marked
// directories.
func (u User) MakeDir(dir string, perm os.FileMode) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	if err := os.Chmod(dir, perm); err != nil {
		return err
	}
	return u.Own(dir)
}

// Own gives the file or directory at path to u (not recursively).
func (u User) Own(path string) error {
	if u.Self {
		return nil
	}
	if err := os.Lchown(path, int(u.UID), int(u.GID)); err != nil {
		return fmt.Errorf("give %s to the server's user %s: %w", path, u.Name, err)
	}
	return nil
}

// CheckReach verifies that u may enter every directory from / down to dir,
// so that a server started as u can reach its files, and says which
// directory to open up if not. dbio does not change permissions outside its
// own directories.
func (u User) CheckReach(dir string) error {
	if u.Self {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	var path []string
	for p := abs; ; p = filepath.Dir(p) {
		path = append(path, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	slices.Reverse(path)
	for _, p := range path {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil // created later by dbio, as the directory above allows
			}
			return fmt.Errorf("stat %s: %w", p, err)
		}
		if !u.mayEnter(st) {
			return fmt.Errorf("the database server runs as user %s, which may not enter %s (mode %04o, owner uid %d): allow it with `chmod o+x %s`, or choose a target below directories that user can reach",
				u.Name, p, st.Mode&0o7777, st.Uid, p)
		}
	}
	return nil
}

func (u User) mayEnter(st syscall.Stat_t) bool {
	mode := st.Mode
	switch {
	case st.Uid == u.UID:
		return mode&0o100 != 0
	case st.Gid == u.GID || slices.Contains(u.groups, st.Gid):
		return mode&0o010 != 0
	default:
		return mode&0o001 != 0
	}
}
