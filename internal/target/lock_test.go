package target

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"dbio/internal/results"
)

func TestLockRefusesASecondRun(t *testing.T) {
	tg, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	first, err := tg.Lock(HostFS(), Holder{PID: 4242, Command: []string{"dbio", "tpcc", "--target", tg.Path}, Started: started})
	if err != nil {
		t.Fatal(err)
	}
	// The same target opened again, as a second run does, even through another path.
	again, err := Open(tg.Path + "/.")
	if err != nil {
		t.Fatal(err)
	}
	_, err = again.Lock(HostFS(), Holder{PID: 1})
	var busy *BusyError
	if !errors.Is(err, ErrBusy) || !errors.As(err, &busy) {
		t.Fatalf("second lock: %v, want ErrBusy", err)
	}
	for _, want := range []string{"pid 4242", "started 2025-03-04 05:06:07 UTC", "command: dbio tpcc --target " + tg.Path} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	second, err := again.Lock(HostFS(), Holder{PID: 1})
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	second.Release()
}

// TestLockDiesWithItsProcess holds a target in a child process, kills it
// with SIGKILL and takes the target at once: a crash leaves nothing to clean.
func TestLockDiesWithItsProcess(t *testing.T) {
	if dir := os.Getenv("DBIO_TEST_HOLD_LOCK"); dir != "" {
		tg, err := Open(dir)
		if err != nil {
			os.Exit(3)
		}
		if _, err := tg.Lock(HostFS(), Holder{PID: os.Getpid(), Command: []string{"holder"}, Started: time.Now()}); err != nil {
			os.Exit(4)
		}
		os.Stdout.WriteString("locked\n")
		// Until killed: blocked reading the pipe the parent never writes.
		// Not select{}: with no timer pending (the child has no -test.timeout)
		// the runtime calls that a deadlock and the child dies at once,
		// releasing the lock before the parent looks.
		io.Copy(io.Discard, os.Stdin)
		os.Exit(5)
	}
	dir := t.TempDir()
	child := holdInChild(t, dir)
	// Holding names the child, as a preflight asks before the lock.
	var held *BusyError
	if err := Holding(HostFS(), dir); !errors.As(err, &held) || held.Holder.PID != child.Process.Pid || len(held.Holder.Command) != 1 || held.Holder.Command[0] != "holder" {
		t.Fatalf("holding: %v, want the child's pid %d and command named", err, child.Process.Pid)
	}
	tg, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tg.Lock(HostFS(), Holder{PID: os.Getpid()})
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Holder.PID != child.Process.Pid {
		t.Fatalf("lock held by the child: %v, want the child's pid %d named", err, child.Process.Pid)
	}
	child.Process.Kill()
	child.Wait()
	if err := Holding(HostFS(), dir); err != nil {
		t.Errorf("holding after the holder was killed: %v", err)
	}
	l, err := tg.Lock(HostFS(), Holder{PID: os.Getpid()})
	if err != nil {
		t.Fatalf("lock after the holder was killed: %v", err)
	}
	l.Release()
}

// holdInChild starts this test binary as a child that locks the target
// at dir (TestLockDiesWithItsProcess's child part) and returns once it
// holds it; the child is killed when the test ends.
func holdInChild(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^TestLockDiesWithItsProcess$")
	child.Env = append(os.Environ(), "DBIO_TEST_HOLD_LOCK="+dir)
	hold, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		child.Process.Kill()
		child.Wait()
		hold.Close()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	return child
}

// TestBusyNamesTheHolderBeforeItWrites covers the instant between a run's
// flock and its record: /proc/locks still names the holder's pid.
func TestBusyNamesTheHolderBeforeItWrites(t *testing.T) {
	tg, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := tg.Lock(HostFS(), Holder{PID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	l.f.Truncate(0) // as if the record were not written yet
	_, err = tg.Lock(HostFS(), Holder{})
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Holder.PID != os.Getpid() {
		t.Fatalf("%v: want this process's pid from /proc/locks", err)
	}
	// A suite holds its targets while each run's preflight looks: its own
	// lock is nobody else's.
	if err := Holding(HostFS(), tg.Path); err != nil {
		t.Errorf("holding by this process: %v, want nil", err)
	}
}

// A lock file written by someone else names a command with control
// characters: the refusal shows them escaped, never raw on a terminal.
func TestBusyEscapesTheHoldersCommand(t *testing.T) {
	tg, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := tg.Lock(HostFS(), Holder{PID: os.Getpid(), Command: []string{"dbio", "\x1b[2Jtpcc"}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, err = tg.Lock(HostFS(), Holder{})
	if err == nil || strings.Contains(err.Error(), "\x1b") || !strings.Contains(err.Error(), `dbio \x1b[2Jtpcc`) {
		t.Errorf("%q: want the escape shown as \\x1b", err)
	}
}

// Holding reads only a regular lock file in dbio's own directory, and
// never waits: a FIFO where the lock file goes, which a plain read-only
// open would block on, and dbio's directory replaced by a link to a held
// target elsewhere both say nothing is held, promptly.
func TestHoldingLeavesStrangersAlone(t *testing.T) {
	// Another process holds the target the link points to (this
	// process's own lock would count as nobody's).
	held := t.TempDir()
	holdInChild(t, held)
	if err := Holding(HostFS(), held); !errors.Is(err, ErrBusy) {
		t.Fatalf("the held target itself: %v, want busy", err)
	}

	fifo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(fifo, DirName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fifo, DirName, results.MarkerName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifo, DirName, LockName), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := t.TempDir()
	if err := os.Symlink(filepath.Join(held, DirName), filepath.Join(linked, DirName)); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"a FIFO for the lock file": fifo, "a link for dbio's directory": linked} {
		done := make(chan error, 1)
		go func() { done <- Holding(HostFS(), path) }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v, want nothing held", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Holding still waiting after 10 s", name)
		}
	}
}
