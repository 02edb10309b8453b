package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"dbio/internal/target"
)

// maxTailBytes bounds how much of a log an error message quotes.
const maxTailBytes = 64 << 10

// Tail returns the last lines lines of the file at path written after offset
// from, or "" when there is nothing.
func Tail(path string, from int64, lines int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= from {
		return ""
	}
	start := max(from, fi.Size()-maxTailBytes)
	buf, err := io.ReadAll(io.NewSectionReader(f, start, fi.Size()-start))
	if err != nil {
		return ""
	}
	return lastLines(buf, lines)
}

func lastLines(buf []byte, n int) string {
	all := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return strings.Join(all, "\n")
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on now. Another
// program may take it before the server binds it; Launch callers retry on
// ErrAddressInUse.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Find locates a program: in PATH first, then in dirs in order.
func Find(r interface{ LookPath(string) (string, error) }, name string, dirs ...string) (string, error) {
	if p, err := r.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH or %s", name, strings.Join(dirs, ", "))
}

// Tree lists pid and all its descendants, pid first then in ascending order,
// from the process table under procRoot (normally /proc). A descendant that
// has exited and waits to be reaped (a zombie) is no longer one of the
// server's processes and is left out: it holds no memory, runs no I/O, and
// the kernel has already taken it out of its cgroups.
func Tree(procRoot string, pid int) ([]int, error) {
	if _, err := os.Stat(filepath.Join(procRoot, strconv.Itoa(pid))); err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := os.Open(filepath.Join(procRoot, e.Name(), "stat"))
		if err != nil {
			continue // the process ended while we looked
		}
		ppid, state, err := statFields(f)
		f.Close()
		if err != nil || (child != pid && ended(state)) {
			continue
		}
		children[ppid] = append(children[ppid], child)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		queue = append(queue, children[p]...)
	}
	sort.Ints(out[1:])
	return out, nil
}

// parentPID reads the parent PID from a /proc/<pid>/stat line.
func parentPID(r io.Reader) (int, error) {
	ppid, _, err := statFields(r)
	return ppid, err
}

// statFields reads the parent PID and the state letter from a
// /proc/<pid>/stat line. The command name may itself contain spaces and
// parentheses, so fields are counted after its last ')'.
func statFields(r io.Reader) (ppid int, state string, err error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && err != io.EOF {
		return 0, "", err
	}
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, "", fmt.Errorf("malformed stat line %q", line)
	}
	fields := strings.Fields(line[i+1:])
	if len(fields) < 2 {
		return 0, "", fmt.Errorf("malformed stat line %q", line)
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, fields[0], err
}

// ended says whether a process state letter is that of a process that has
// exited: a zombie (Z) or one being reaped (X).
func ended(state string) bool { return state == "Z" || state == "X" }

// Ended says whether the process pid has exited: it is gone from the
// process table under procRoot, or a zombie waiting to be reaped. A process
// that ended is in no cgroup of dbio's any more (cgroup v1 shows it in the
// root groups), which a check of where a server's processes are must allow.
func Ended(procRoot string, pid int) bool {
	f, err := os.Open(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	defer f.Close()
	_, state, err := statFields(f)
	return err != nil || ended(state)
}

// maxSocketPath is the longest path a Unix socket may have on Linux (sun_path
// holds 108 bytes including the terminating NUL).
const maxSocketPath = 107

// SocketDir returns preferred (created for u) when a socket named name fits in
// it, else a new private directory under tmp for u. A deep target path can
// make dbio's own directory too long for a socket; temp then says the caller
// removes the directory when the server stops.
func SocketDir(preferred, name, tmp string, u User) (dir string, temp bool, err error) {
	if len(filepath.Join(preferred, name)) <= maxSocketPath {
		return preferred, false, u.MakeDir(preferred, 0o700)
	}
	dir, err = os.MkdirTemp(tmp, "dbio-sock-")
	if err != nil {
		return "", false, fmt.Errorf("socket directory: %w", err)
	}
	if len(filepath.Join(dir, name)) > maxSocketPath {
		os.Remove(dir)
		return "", false, fmt.Errorf("no socket directory short enough for %s: set TMPDIR to a short path", name)
	}
	return dir, true, u.MakeDir(dir, 0o700)
}

// createdMarker is written into an instance's directory once its creation
// (initdb, mariadb-install-db) has finished.
const createdMarker = ".dbio-created"

// MarkCreated records that the instance in dir was created completely.
func MarkCreated(dir string) error {
	return target.WriteFile(filepath.Join(dir, createdMarker), []byte("the database instance here was created completely by dbio\n"), 0o644)
}

// Created says whether the instance in dir was created completely; one that
// was not is the remains of an interrupted creation and is created again.
func Created(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, createdMarker))
	return err == nil && fi.Mode().IsRegular()
}

// MaxConnections is the connection limit dbio gives a managed server: room
// for 128+ virtual users plus monitoring, and more when the caller's pool may
// open more.
func MaxConnections(pool int) int { return max(300, pool+20) }

// ConfiguredMaxConnections is the connection limit a managed server will
// have: an explicit max_connections setting as given (its name matched as
// the engine reads names, so MariaDB's max-connections counts), else
// dbio's (MaxConnections); from says which.
func (sn SettingNames) ConfiguredMaxConnections(settings map[string]string, pool int) (limit int, from string) {
	if v, ok := sn.Value(settings, "max_connections"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			return n, "as the max_connections setting gives it"
		}
	}
	return MaxConnections(pool), "what dbio gives the server it manages"
}
