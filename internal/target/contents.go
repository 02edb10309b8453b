package target

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Entry is one thing in dbio's working directory on a target, as dbio clean
// shows it before removing it.
type Entry struct {
	// Name is the subdirectory (fio, postgres, mariadb, sqlite, backups...).
	Name string
	// Owned says it carries dbio's marker; what does not is never removed.
	Owned bool
	// Bytes is the space its regular files take; links are not followed.
	Bytes int64
	// LivePID is a running process whose pid file lies inside it (a server
	// still running from it), 0 when none.
	LivePID int
}

// Contents lists dbio's working directory on the target without creating
// it: nil when dbio never worked there.
func Contents(path string) (string, []Entry, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(abs, DirName)
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return dir, nil, nil
	}
	if err := checkOwned(dir); err != nil {
		return dir, nil, err
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return dir, nil, err
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() || de.Type()&fs.ModeSymlink != 0 {
			continue // dbio's own files (marker, lock) and anything else stay
		}
		sub := filepath.Join(dir, de.Name())
		e := Entry{Name: de.Name(), Owned: checkOwned(sub) == nil}
		_ = filepath.WalkDir(sub, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // what cannot be read is not counted
			}
			if d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					e.Bytes += fi.Size()
				}
				if e.LivePID == 0 && strings.HasSuffix(d.Name(), ".pid") {
					e.LivePID = RunningPID(p)
				}
			}
			return nil
		})
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return dir, out, nil
}

// RunningPID reads a pid file (the PID on its first line, as servers write
// it) and returns that PID if such a process is alive, or 0: a missing or
// stale file means the process that wrote it is gone.
func RunningPID(pidFile string) int {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil || pid <= 0 {
		return 0
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return 0
	}
	return pid
}
