package target

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestRunningPID(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pid")
	if got := RunningPID(file); got != 0 {
		t.Errorf("missing pid file: %d", got)
	}
	if err := os.WriteFile(file, []byte(strconv.Itoa(os.Getpid())+"\n/data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := RunningPID(file); got != os.Getpid() {
		t.Errorf("RunningPID = %d, want %d", got, os.Getpid())
	}
	if err := os.WriteFile(file, []byte("999999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := RunningPID(file); got != 0 {
		t.Errorf("stale pid file: %d", got)
	}
}
