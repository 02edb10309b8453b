package server

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"dbio/internal/execx"
)

func TestParentPID(t *testing.T) {
	tests := []struct {
		line string
		want int
	}{
		{"1234 (postgres) S 1000 1234 1234 0 -1", 1000},
		{"77 (a (weird) name) R 5 77 77 0", 5},
		{"9 (x y) S 1 9 9", 1},
	}
	for _, tt := range tests {
		got, err := parentPID(strings.NewReader(tt.line + "\n"))
		if err != nil || got != tt.want {
			t.Errorf("parentPID(%q) = %d, %v; want %d", tt.line, got, err, tt.want)
		}
	}
	if _, err := parentPID(strings.NewReader("garbage")); err == nil {
		t.Error("parentPID accepted a line without ')'")
	}
}

func TestTreeFromFixture(t *testing.T) {
	root := t.TempDir()
	procs := map[int]int{100: 1, 101: 100, 102: 100, 103: 101, 200: 1}
	for pid, ppid := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		line := strconv.Itoa(pid) + " (p) S " + strconv.Itoa(ppid) + " 0 0\n"
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Tree(root, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{100, 101, 102, 103}; !slices.Equal(got, want) {
		t.Errorf("Tree = %v, want %v", got, want)
	}
	if _, err := Tree(root, 999); err == nil {
		t.Error("Tree of a missing process did not fail")
	}
}

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("old 1\nold 2\nnew 1\nnew 2\nnew 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := Tail(path, int64(len("old 1\nold 2\n")), 2), "new 2\nnew 3"; got != want {
		t.Errorf("Tail = %q, want %q", got, want)
	}
	if got := Tail(path, 1000, 5); got != "" {
		t.Errorf("Tail past the end = %q, want empty", got)
	}
	if got := Tail(filepath.Join(t.TempDir(), "missing"), 0, 5); got != "" {
		t.Errorf("Tail of a missing file = %q", got)
	}
}

func TestCheckReach(t *testing.T) {
	base := t.TempDir()
	closed := filepath.Join(base, "closed")
	inner := filepath.Join(closed, "inner")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(base), 0o755); err != nil {
		t.Fatal(err)
	}
	// A made-up account that owns nothing here and is in no group.
	stranger := User{Name: "stranger", UID: 4242424, GID: 4242424}
	err := stranger.CheckReach(inner)
	if err == nil || !strings.Contains(err.Error(), "chmod o+x "+closed) {
		t.Fatalf("CheckReach(%s) = %v, want advice to chmod %s", inner, err, closed)
	}
	if err := stranger.CheckReach(filepath.Join(base, "not-yet")); err != nil {
		t.Errorf("CheckReach of a reachable, not yet created directory: %v", err)
	}
	if err := (User{Self: true}).CheckReach(inner); err != nil {
		t.Errorf("the own user is always fine: %v", err)
	}
}

func TestSocketDirFallsBackForLongPaths(t *testing.T) {
	self := User{Self: true}
	short := filepath.Join(t.TempDir(), "run")
	dir, temp, err := SocketDir(short, ".s.PGSQL.65535", t.TempDir(), self)
	if err != nil || dir != short || temp {
		t.Fatalf("SocketDir(short) = %q, %v, %v", dir, temp, err)
	}
	long := filepath.Join(t.TempDir(), strings.Repeat("x", 100), "run")
	dir, temp, err = SocketDir(long, ".s.PGSQL.65535", t.TempDir(), self)
	if err != nil || !temp || dir == long {
		t.Fatalf("SocketDir(long) = %q, %v, %v; want a temporary directory", dir, temp, err)
	}
}

func TestLaunchStopAndExited(t *testing.T) {
	ctx := context.Background()
	log := filepath.Join(t.TempDir(), "server.log")
	p, err := Launch(ctx, execx.Real{}, "sleeper", execx.Cmd{Name: "sh", Args: []string{"-c", "echo started; exec sleep 60"}}, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WaitReady(ctx, 5*time.Second, func(context.Context) error {
		if Tail(log, 0, 1) != "started" {
			return errors.New("not yet")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(ctx, syscall.SIGTERM, syscall.SIGKILL, 5*time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err, ok := <-p.Exited(); ok || err != nil {
		t.Errorf("Exited after Stop yielded %v, want closed without a value", err)
	}

	p, err = Launch(ctx, execx.Real{}, "sleeper", execx.Cmd{Name: "sleep", Args: []string{"60"}}, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.Exited():
		if err == nil || !strings.Contains(err.Error(), "exited unexpectedly") {
			t.Errorf("Exited yielded %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Exited did not fire after the process was killed")
	}
}

func TestStopEscalatesWhenIgnored(t *testing.T) {
	ctx := context.Background()
	log := filepath.Join(t.TempDir(), "server.log")
	// The shell ignores SIGTERM; only the escalation ends it.
	p, err := Launch(ctx, execx.Real{}, "stubborn", execx.Cmd{Name: "sh", Args: []string{"-c", "trap '' TERM; echo up; while :; do sleep 0.1; done"}}, log)
	if err != nil {
		t.Fatal(err)
	}
	_ = p.WaitReady(ctx, 5*time.Second, func(context.Context) error {
		if Tail(log, 0, 1) != "up" {
			return errors.New("not yet")
		}
		return nil
	})
	err = p.Stop(ctx, syscall.SIGTERM, syscall.SIGKILL, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not shut down") {
		t.Errorf("Stop = %v, want a report of the forced stop", err)
	}
}

func TestWaitReadyReportsAddressInUse(t *testing.T) {
	ctx := context.Background()
	log := filepath.Join(t.TempDir(), "server.log")
	p, err := Launch(ctx, execx.Real{}, "binder", execx.Cmd{Name: "sh", Args: []string{"-c", "echo 'could not bind: Address already in use'; exit 1"}}, log)
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitReady(ctx, 5*time.Second, func(context.Context) error { return errors.New("refused") })
	if !errors.Is(err, ErrAddressInUse) {
		t.Errorf("WaitReady = %v, want ErrAddressInUse", err)
	}

	p, err = Launch(ctx, execx.Real{}, "crasher", execx.Cmd{Name: "sh", Args: []string{"-c", "echo 'FATAL: bad setting'; exit 3"}}, log)
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitReady(ctx, 5*time.Second, func(context.Context) error { return errors.New("refused") })
	if err == nil || errors.Is(err, ErrAddressInUse) || !strings.Contains(err.Error(), "FATAL: bad setting") {
		t.Errorf("WaitReady = %v, want the failure with the log's end", err)
	}
}

// A child that exited and is not reaped yet (a zombie) is no longer one of
// the processes Tree lists: the kernel has taken it out of its cgroups, and
// a check of where a server's processes are would find it in none.
func TestTreeLeavesOutZombies(t *testing.T) {
	c := exec.Command("true")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Wait()
	// Wait for the child to end without reaping it (waitid with WNOWAIT):
	// until c.Wait reaps it, it is a zombie.
	const pPID, wExited, wNoWait = 1, 4, 0x1000000
	var info [128]byte
	if _, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(c.Process.Pid), uintptr(unsafe.Pointer(&info[0])), wExited|wNoWait, 0, 0); errno != 0 {
		t.Fatalf("waitid: %v", errno)
	}
	if !Ended("/proc", c.Process.Pid) {
		t.Errorf("Ended says the zombie %d has not ended", c.Process.Pid)
	}
	pids, err := Tree("/proc", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(pids, c.Process.Pid) {
		t.Errorf("Tree lists the zombie %d: %v", c.Process.Pid, pids)
	}
	if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(c.Process.Pid), "stat")); err != nil || !strings.Contains(string(b), ") Z ") {
		t.Fatalf("process %d is not a zombie: %s %v", c.Process.Pid, b, err)
	}
	if Ended("/proc", os.Getpid()) {
		t.Error("Ended says the running test process ended")
	}
}
