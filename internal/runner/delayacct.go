package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// delayAccountingSwitch is the kernel's switch of delay accounting under a
// /proc root (Linux 5.14+; before, delays were accounted unless the kernel
// was booted with nodelayacct, and there is no switch).
const delayAccountingSwitch = "sys/kernel/task_delayacct"

// delayAccounting makes sure the kernel accounts each thread's block-I/O
// delay while a run samples it (telemetry's proc_*_blkio_wait_pct): it
// switches kernel.task_delayacct on under proc when it is off. restore
// sets it back to what it was, and is to be called on every way out of
// the run; it does nothing when nothing was switched. note says, for
// run.json, that it was switched, or why the delay will not be recorded;
// it is empty when delay accounting was already on.
func delayAccounting(proc string) (restore func() error, note string) {
	nothing := func() error { return nil }
	if proc == "" {
		return nothing, "block-I/O delay not recorded: no /proc root to switch kernel.task_delayacct under"
	}
	path := filepath.Join(proc, delayAccountingSwitch)
	was, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nothing, "block-I/O delay not recorded: this kernel has no kernel.task_delayacct switch (" + path + ", Linux 5.14 and later)"
	case err != nil:
		return nothing, fmt.Sprintf("block-I/O delay not recorded: read kernel.task_delayacct: %v", err)
	}
	if strings.TrimSpace(string(was)) != "0" {
		return nothing, ""
	}
	if err := os.WriteFile(path, []byte("1\n"), 0o644); err != nil {
		why := err.Error()
		if errors.Is(err, os.ErrPermission) {
			why += " (run dbio as root, or switch it on with sysctl kernel.task_delayacct=1)"
		}
		return nothing, "block-I/O delay not recorded: kernel.task_delayacct is 0 and could not be switched on: " + why
	}
	restore = func() error {
		if err := os.WriteFile(path, was, 0o644); err != nil {
			return fmt.Errorf("set kernel.task_delayacct back to 0 after the run: %w", err)
		}
		return nil
	}
	return restore, "kernel.task_delayacct switched from 0 to 1 for the run, so that the kernel accounts each thread's block-I/O delay (proc_server_blkio_wait_pct, proc_dbio_blkio_wait_pct), and set back to 0 when it ended"
}
