package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/iolimit"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// launcherEnv tells the test binary, started again by TestServerDiesWithDBIO,
// to play dbio: launch a server the way a case says, then wait to be killed.
const launcherEnv = "DBIO_TEST_LAUNCHER"

// serverScript is the stand-in server: it reports the signals it gets in its
// log and ends on SIGTERM, the death signal Launch gives by default.
const serverScript = `trap 'echo TERM; kill $! 2>/dev/null; exit 0' TERM
trap 'echo WINCH' WINCH
echo ready
while :; do sleep 1000 & wait $!; done`

func init() {
	// In the launcher, the main goroutine keeps the main thread, so that the
	// thread of the goroutine that ends is one the runtime can end (it never
	// ends the main thread).
	if os.Getenv(launcherEnv) != "" {
		runtime.LockOSThread()
	}
}

// TestServerDiesWithDBIO kills, with SIGKILL, a process that launched a
// server, and waits for the server to end: the kernel's parent-death signal
// must reach it as a server runs for real, as another user (dbio run as root
// gives the server an unprivileged account, and a change of credentials can
// clear the signal), through the shell wrapper that puts it in a block-I/O
// cgroup (a second exec), and launched from a goroutine whose OS thread ends
// long before dbio does (the signal follows the forking thread).
func TestServerDiesWithDBIO(t *testing.T) {
	cases := []struct {
		name     string
		root     bool
		threadOK bool // the launcher checks the server survived its caller's thread
	}{
		{name: "plain"},
		{name: "as-user", root: true},
		{name: "wrapped"},
		{name: "wrapped-as-user", root: true},
		{name: "thread-ends", threadOK: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root {
				testenv.Require(t, os.Geteuid() == 0, "root (the case switches to another user)", "run the tests as root")
			}
			t.Parallel()
			dir := t.TempDir()
			// The server's user writes the wrapper's cgroup.procs in it.
			for _, d := range []string{filepath.Dir(dir), dir} {
				if err := os.Chmod(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			launcher := exec.Command(os.Args[0], "-test.run=^TestLauncherProcess$")
			launcher.Env = append(os.Environ(), launcherEnv+"="+c.name+":"+dir)
			launcher.Stderr = os.Stderr
			stdout, err := launcher.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := launcher.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = launcher.Process.Kill(); _ = launcher.Wait() })
			lines := bufio.NewScanner(stdout)
			var pid int
			for lines.Scan() {
				line := lines.Text()
				if s, ok := strings.CutPrefix(line, "server "); ok {
					pid, _ = strconv.Atoi(s)
					break
				}
				if strings.HasPrefix(line, "error ") {
					t.Fatal(line)
				}
			}
			if pid <= 0 {
				t.Fatalf("the launcher reported no server (%v)", lines.Err())
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			if err := launcher.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = launcher.Wait()
			if !waitGone(context.Background(), "/proc", pid, 30*time.Second) {
				t.Fatalf("server %d still runs 30 s after its launcher was killed; its log:\n%s", pid, Tail(filepath.Join(dir, "server.log"), 0, 20))
			}
			if log := Tail(filepath.Join(dir, "server.log"), 0, 20); !strings.Contains(log, "TERM") {
				t.Errorf("the server ended without the death signal; its log:\n%s", log)
			}
		})
	}
}

// TestLauncherProcess is the launcher of TestServerDiesWithDBIO, run in a
// process of its own; it does nothing in an ordinary test run.
func TestLauncherProcess(t *testing.T) {
	spec := os.Getenv(launcherEnv)
	if spec == "" {
		return
	}
	name, dir, _ := strings.Cut(spec, ":")
	if err := launch(name, dir); err != nil {
		fmt.Printf("error %v\n", err)
		os.Exit(1)
	}
	select {} // until killed
}

func launch(name, dir string) error {
	ctx := context.Background()
	log := filepath.Join(dir, "server.log")
	cmd := execx.Cmd{Name: "/bin/sh", Args: []string{"-c", serverScript}}
	if strings.HasSuffix(name, "as-user") {
		u, err := Choose(0, "nobody")
		if err != nil {
			return err
		}
		u.Apply(&cmd)
	}
	if strings.HasPrefix(name, "wrapped") {
		// The cgroup wrapper, with a plain file standing for cgroup.procs.
		g := &iolimit.Group{Path: dir}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), nil, 0o666); err != nil {
			return err
		}
		if err := os.Chmod(filepath.Join(dir, "cgroup.procs"), 0o666); err != nil {
			return err
		}
		cmd = g.Wrap(cmd)
	}
	var p *Process
	if name == "thread-ends" {
		// Launch from a goroutine locked to its thread, which ends with it.
		type launched struct {
			p   *Process
			tid int
			err error
		}
		ch := make(chan launched, 1)
		go func() {
			runtime.LockOSThread()
			p, err := Launch(ctx, execx.Real{}, "stand-in", cmd, log)
			ch <- launched{p, syscall.Gettid(), err}
		}()
		l := <-ch
		if l.err != nil {
			return l.err
		}
		p = l.p
		if err := ready(ctx, p, log, "ready"); err != nil {
			return err
		}
		for {
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", l.tid)); errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		// A signal sent after the thread's end arrives after any the end
		// caused, and is reported after it (SIGTERM is the lower number).
		if err := syscall.Kill(p.PID(), syscall.SIGWINCH); err != nil {
			return err
		}
		if err := ready(ctx, p, log, "WINCH"); err != nil {
			return err
		}
		if strings.Contains(Tail(log, 0, 20), "TERM") {
			return errors.New("the server was signalled when the thread that launched it ended")
		}
	} else {
		var err error
		if p, err = Launch(ctx, execx.Real{}, "stand-in", cmd, log); err != nil {
			return err
		}
		if err := ready(ctx, p, log, "ready"); err != nil {
			return err
		}
	}
	fmt.Printf("server %d\n", p.PID())
	return nil
}

// ready waits until the stand-in server's log has a line saying want.
func ready(ctx context.Context, p *Process, log, want string) error {
	return p.WaitReady(ctx, 10*time.Second, func(context.Context) error {
		for _, line := range strings.Split(Tail(log, 0, 20), "\n") {
			if line == want {
				return nil
			}
		}
		return errors.New("not yet")
	})
}

// TestStopLeftover starts stand-in servers of an instance directory and
// checks that only one whose dbio is gone is stopped, and how.
func TestStopLeftover(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	deadOwner := gone.Process.Pid
	tests := []struct {
		name      string
		owner     int // 0: no OwnerEnv
		elsewhere bool
		stubborn  bool
		want      string // in the note; "" when the server must be left alone
	}{
		{name: "owner gone", owner: deadOwner, want: "stopped the stand-in server"},
		{name: "owner gone, ignores the request", owner: deadOwner, stubborn: true, want: "killed the stand-in server"},
		{name: "owner alive", owner: os.Getpid()},
		{name: "not started by dbio"},
		{name: "another instance", owner: deadOwner, elsewhere: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			// Every stand-in speaks once its environment and directory are
			// its own: read too early, /proc shows the forking test's. It
			// stays the shell that spoke, not an exec of sleep: read while
			// the exec replaces it, its /proc environ is empty.
			script := "echo up; sleep 1000"
			if tt.stubborn {
				script = "trap '' TERM; echo up; while :; do sleep 0.05; done"
			}
			c := exec.Command("sh", "-c", script)
			c.Dir = dir
			if tt.elsewhere {
				c.Dir = t.TempDir()
			}
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if tt.owner != 0 {
				c.Env = append(os.Environ(), OwnerEnv+"="+strconv.Itoa(tt.owner))
			}
			out, _ := c.StdoutPipe()
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL); _ = c.Wait() })
			// The stubborn one's trap is set once it speaks, too.
			if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			pidFile := filepath.Join(dir, "server.pid")
			if err := os.WriteFile(pidFile, []byte(strconv.Itoa(c.Process.Pid)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// StopLeftover returns as soon as the server is gone: a server
			// that obeys gets a grace no loaded machine runs out of, one
			// that ignores the request a short one before it is killed.
			grace := time.Minute
			if tt.stubborn {
				grace = 200 * time.Millisecond
			}
			note, err := StopLeftover(context.Background(), "/proc", pidFile, dir, "stand-in", syscall.SIGTERM, grace)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if note != "" || target.RunningPID(pidFile) == 0 {
					t.Fatalf("note %q, server running: %v; want it left alone", note, target.RunningPID(pidFile) != 0)
				}
				return
			}
			if !strings.Contains(note, tt.want) || !strings.Contains(note, strconv.Itoa(tt.owner)) || !strings.Contains(note, dir) {
				t.Errorf("note %q, want %q naming the gone dbio and the directory", note, tt.want)
			}
			if state, _, _, err := procStat("/proc", c.Process.Pid); err == nil && state != 'Z' {
				t.Errorf("the leftover server is still running (state %c)", state)
			}
		})
	}
}
