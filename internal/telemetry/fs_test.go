package telemetry

import (
	"io"
	"os/exec"
	"strconv"
	"testing"
)

// A held file is read again from its start at every read; one whose task
// has ended fails like an unopenable one; a walk's sweep closes what it
// did not read.
func TestHeldFiles(t *testing.T) {
	sleeper := exec.Command("sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Process.Kill()
	fs := HostFS()
	var files heldFiles
	stat := func(pid int) (taskStat, error) {
		var ts taskStat
		err := files.read(fs.proc(strconv.Itoa(pid), "stat"), func(r io.Reader) (err error) { ts, err = parseTaskStat(r); return err })
		return ts, err
	}
	first, err := stat(sleeper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	again, err := stat(sleeper.Process.Pid)
	if err != nil || again.start != first.start || len(files.byPath) != 1 {
		t.Fatalf("read again: %+v, %v, %d files held; want the same process through one file", again, err, len(files.byPath))
	}
	sleeper.Process.Kill()
	sleeper.Wait()
	if ts, err := stat(sleeper.Process.Pid); err == nil {
		t.Errorf("a process that has ended and been reaped read as %+v", ts)
	}
	if _, err := stat(1); err != nil {
		t.Fatal(err)
	}
	files.sweep() // pid 1 was read by this walk: kept
	if len(files.byPath) != 1 {
		t.Errorf("%d files held after a walk that read one", len(files.byPath))
	}
	files.sweep() // and not by the next
	if len(files.byPath) != 0 {
		t.Errorf("%d files held after a walk that read none", len(files.byPath))
	}
}
