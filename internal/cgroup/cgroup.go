// Package cgroup is what dbio's two kinds of control groups share: where
// the host mounts the hierarchy of a controller (cgroup v1's own hierarchy
// of it, or a cgroup v2 hierarchy that offers it), and the groups dbio makes
// in them: named after the dbio that made them, entered by a program through
// a wrapper, removed whole, and swept when the dbio that made them is gone.
// What a group caps is its user's business (internal/iolimit,
// internal/memlimit).
package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"dbio/internal/execx"
)

// Find locates the hierarchies that offer a controller under sys, the
// root of sysfs ("/sys" on the running system, given by cmd): v1 is the
// controller's cgroup v1 hierarchy, /sys/fs/cgroup/<v1Dir>, when it holds
// the file v1Probe (a controller file only that controller has); v2 is the
// first cgroup v2 hierarchy (/sys/fs/cgroup, or /sys/fs/cgroup/unified on
// a hybrid host) whose cgroup.controllers lists v2Controller. Either is ""
// when the host lacks it, both when sys is "".
func Find(sys, v1Dir, v1Probe, v2Controller string) (v1, v2 string) {
	if sys == "" {
		return "", "" // no root given: no hierarchy, and the caller refuses
	}
	root := filepath.Join(sys, "fs", "cgroup")
	if exists(filepath.Join(root, v1Dir, v1Probe)) {
		v1 = filepath.Join(root, v1Dir)
	}
	for _, p := range []string{root, filepath.Join(root, "unified")} {
		if b, err := os.ReadFile(filepath.Join(p, "cgroup.controllers")); err == nil && hasWord(string(b), v2Controller) {
			v2 = p
			break
		}
	}
	return v1, v2
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// Exists says whether a file of a group (or anything else) is there.
func Exists(p string) bool { return exists(p) }

// prefix starts the name of every group dbio makes; Sweep knows dbio's
// groups by it.
const prefix = "dbio-"

// Name is the directory name of a group of a kind ("io", "mem") for name
// (a run's ID, say), made by the process pid: dbio-<kind>-<name>-<pid>.
// The PID last is what lets Sweep tell a group whose dbio is gone from
// one still in use.
func Name(kind, name string, pid int) string {
	return prefix + kind + "-" + sanitize(name) + "-" + strconv.Itoa(pid)
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Owner is the PID a group's name ends with, 0 when it is not a name
// Name makes.
func Owner(dirName string) int {
	if !strings.HasPrefix(dirName, prefix) {
		return 0
	}
	i := strings.LastIndexByte(dirName, '-')
	pid, err := strconv.Atoi(dirName[i+1:])
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Sweep removes from each hierarchy root the groups a dbio made and could
// not remove (it was killed, or a test binary timed out): those whose
// maker, the PID their name ends with, no longer runs, and that hold no
// process any more (a server that outlived its dbio keeps its group until
// it ends). It returns the paths removed.
func Sweep(roots ...string) []string {
	var removed []string
	for _, root := range roots {
		if root == "" {
			continue
		}
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range entries {
			pid := Owner(e.Name())
			if !e.IsDir() || pid == 0 || running(pid) {
				continue
			}
			path := filepath.Join(root, e.Name())
			if members, err := Members(path); err != nil || len(members) > 0 {
				continue
			}
			if os.Remove(path) == nil {
				removed = append(removed, path)
			}
		}
	}
	return removed
}

// running says whether a process with this PID exists.
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Members are the processes in the group at path now.
func Members(path string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// AddPID moves a running process (and the children it forks afterwards)
// into the group at path.
func AddPID(path string, pid int) error {
	if err := os.WriteFile(filepath.Join(path, "cgroup.procs"), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return fmt.Errorf("move process %d into %s: %w", pid, path, err)
	}
	return nil
}

// AllowUser lets processes of uid join the group at path by themselves, so
// that a server started unprivileged enters it before it does anything.
func AllowUser(path string, uid, gid uint32) error {
	for _, f := range []string{"cgroup.procs", "tasks"} {
		p := filepath.Join(path, f)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := os.Chown(p, int(uid), int(gid)); err != nil {
			return fmt.Errorf("let uid %d join %s: %w", uid, path, err)
		}
	}
	return nil
}

// Wrap returns c started through a shell that first joins the group at
// path and then execs the program, which keeps the shell's PID: the
// program, every process it forks and every restart through the same
// wrapper are inside from their first instruction.
func Wrap(path string, c execx.Cmd) execx.Cmd {
	w := c
	w.Name = "/bin/sh"
	w.Args = append([]string{"-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(path, "cgroup.procs"), c.Name}, c.Args...)
	return w
}

// Remove moves any process left in the group at path back to its parent
// and deletes the group. A group already gone is not an error.
func Remove(path string) error {
	parent := filepath.Join(filepath.Dir(path), "cgroup.procs")
	if pids, err := Members(path); err == nil {
		for _, pid := range pids {
			_ = os.WriteFile(parent, []byte(strconv.Itoa(pid)+"\n"), 0o644)
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove cgroup %s: %w", path, err)
	}
	return nil
}

// Pressure is a group's stall totals for one resource (its io.pressure or
// memory.pressure, cgroup v2 only), in microseconds since the group was
// created: the time some of its non-idle tasks were stalled, and the time
// all of them were.
type Pressure struct {
	Some, Full uint64
}

// ParsePressure reads a pressure file ("some avg10=… total=N" and
// "full avg10=… total=N").
func ParsePressure(r io.Reader) (Pressure, error) {
	var p Pressure
	hasSome := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		for _, f := range strings.Fields(rest) {
			v, found := strings.CutPrefix(f, "total=")
			if !found {
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return p, fmt.Errorf("%s total: %w", kind, err)
			}
			switch kind {
			case "some":
				p.Some, hasSome = n, true
			case "full":
				p.Full = n
			}
		}
	}
	if err := sc.Err(); err != nil {
		return p, err
	}
	if !hasSome {
		return p, errors.New(`no "some" line with a total`)
	}
	return p, nil
}
