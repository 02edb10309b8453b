package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"dbio/internal/target"
)

// OwnerEnv is the environment variable Launch gives a server: the PID of
// the dbio that started it. While that dbio lives it is the server's parent;
// a server whose parent is another process has outlived its dbio.
const OwnerEnv = "DBIO_SERVER_OWNER"

// leftoverPoll is how often StopLeftover looks whether a server it asked to
// stop has ended; it is not dbio's child, so there is no exit to wait on.
const leftoverPoll = 50 * time.Millisecond

// StopLeftover makes way for a new server of the instance in dir, whose pid
// file is pidFile. A server still running there that an earlier dbio started
// and outlived (that dbio was killed, or ran before servers died with dbio)
// is stopped: sig asks it to shut down, and after grace it is killed with
// everything in its session. The note returned then says what was done, for
// the terminal and the results. A server whose dbio still runs, or one that
// dbio did not start, is left alone: the caller refuses to start beside it.
// procRoot is the process table (normally /proc).
func StopLeftover(ctx context.Context, procRoot, pidFile, dir, name string, sig syscall.Signal, grace time.Duration) (note string, err error) {
	pid := target.RunningPID(pidFile)
	if pid == 0 {
		return "", nil
	}
	owner, orphaned := outlived(procRoot, pid, dir)
	if !orphaned {
		return "", nil
	}
	what := fmt.Sprintf("the %s server (pid %d) on %s, left running by an earlier dbio (pid %d) that is gone", name, pid, dir, owner)
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return "", fmt.Errorf("stop %s: %w", what, err)
	}
	if waitGone(ctx, procRoot, pid, grace) {
		return "stopped " + what, nil
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("stop %s: %w", what, ctx.Err())
	}
	// Started in its own session by Launch: its workers share its group.
	if _, _, pgrp, err := procStat(procRoot, pid); err == nil && pgrp == pid {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	} else {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if waitGone(ctx, procRoot, pid, 10*time.Second) {
		return fmt.Sprintf("killed %s: it did not shut down within %s", what, grace), nil
	}
	return "", fmt.Errorf("%s is still running after SIGKILL: stop it by hand (`kill -9 %d`)", what, pid)
}

// outlived says whether process pid is a server of the instance in dir that
// a dbio started (it carries OwnerEnv and its command line or working
// directory is in dir) and whose dbio is no longer its parent; owner is that
// dbio's PID. Whatever cannot be read counts as not outlived: dbio stops only
// what it can tell is its own.
func outlived(procRoot string, pid int, dir string) (owner int, orphaned bool) {
	proc := filepath.Join(procRoot, strconv.Itoa(pid))
	environ, err := os.ReadFile(filepath.Join(proc, "environ"))
	if err != nil {
		return 0, false
	}
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(OwnerEnv+"=")); ok {
			owner, _ = strconv.Atoi(string(v))
		}
	}
	if owner <= 0 || !inInstance(proc, dir) {
		return 0, false
	}
	_, ppid, _, err := procStat(procRoot, pid)
	if err != nil {
		return 0, false
	}
	return owner, ppid != owner
}

// inInstance says whether the process at proc (its /proc directory) runs on
// the instance in dir: its command line names a path in dir (PostgreSQL's
// -D, MariaDB's --defaults-file) or its working directory is in it.
func inInstance(proc, dir string) bool {
	dir = filepath.Clean(dir)
	if cmdline, err := os.ReadFile(filepath.Join(proc, "cmdline")); err == nil {
		for _, arg := range bytes.Split(cmdline, []byte{0}) {
			_, value, found := strings.Cut(string(arg), "=")
			if !found {
				value = string(arg)
			}
			if within(value, dir) {
				return true
			}
		}
	}
	cwd, err := os.Readlink(filepath.Join(proc, "cwd"))
	return err == nil && within(cwd, dir)
}

func within(path, dir string) bool {
	path = filepath.Clean(path)
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// procStat reads a process's state, parent and process group from its stat line.
func procStat(procRoot string, pid int) (state byte, ppid, pgrp int, err error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, 0, err
	}
	line := string(b)
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, 0, 0, fmt.Errorf("malformed stat line %q", line)
	}
	fields := strings.Fields(line[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, 0, fmt.Errorf("malformed stat line %q", line)
	}
	if ppid, err = strconv.Atoi(fields[1]); err != nil {
		return 0, 0, 0, err
	}
	if pgrp, err = strconv.Atoi(fields[2]); err != nil {
		return 0, 0, 0, err
	}
	return fields[0][0], ppid, pgrp, nil
}

// waitGone waits up to d, or until ctx ends, for process pid to end; a
// zombie has ended. It reports whether it did.
func waitGone(ctx context.Context, procRoot string, pid int, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(leftoverPoll)
	defer tick.Stop()
	for {
		if state, _, _, err := procStat(procRoot, pid); err != nil || state == 'Z' {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
}
