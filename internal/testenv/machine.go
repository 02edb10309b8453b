package testenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// machineLock is the file whose lock the tests of every package share:
// `go test ./...` runs packages side by side, and a test that loads the
// whole machine on purpose would otherwise make another package's timing
// test fail for a reason of its own.
func machineLock() string {
	return filepath.Join(os.TempDir(), "dbio-test-machine.lock")
}

// LoadMachine takes the machine for t alone until t ends: the test is
// about to keep every CPU busy (a CPU hog beside a benchmark). It waits
// for the timing tests holding QuietMachine to end, and they wait for it.
func LoadMachine(t testing.TB) {
	t.Helper()
	lockMachine(t, syscall.LOCK_EX)
}

// QuietMachine keeps the tests that load the machine on purpose away
// until t ends: t measures time (a latency, a rate it must keep) and
// holds its figures to a machine that is busy with ordinary tests only.
// Tests holding QuietMachine run side by side.
func QuietMachine(t testing.TB) {
	t.Helper()
	lockMachine(t, syscall.LOCK_SH)
}

func lockMachine(t testing.TB, how int) {
	t.Helper()
	f, err := os.OpenFile(machineLock(), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatalf("the tests' machine lock: %v", err)
	}
	// flock blocks until the lock is granted: the wait is on the other
	// test's end, not on a clock.
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		t.Fatalf("the tests' machine lock %s: %v", f.Name(), err)
	}
	t.Cleanup(func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}
