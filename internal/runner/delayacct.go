package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// delayAccountingSwitch is the kernel's switch of delay accounting under a
// /proc root (Linux 5.14+; before, delays were accounted unless the kernel
// was booted with nodelayacct, and there is no switch).
const delayAccountingSwitch = "sys/kernel/task_delayacct"

// The switch is the machine's, and dbio runs on other targets may be
// running beside this one: the first to switch it on would otherwise
// switch it off while the others still sample it. The runs that hold it
// meet in two lock files: each holds the users' lock shared while it
// runs and takes the turn lock to read or set the switch, and the one
// that ends alone sets the switch back to the value the state file keeps
// (written by whichever run switched it on, removed when set back; a run
// killed before it could set it back leaves it for the next to finish).
const (
	// delayAccountingTurn is held whole, briefly, by one run at a time
	// while it reads or sets the switch and the state.
	delayAccountingTurn = "task_delayacct.turn"
	// delayAccountingUsers is held shared by every run using the switch.
	delayAccountingUsers = "task_delayacct.users"
	delayAccountingState = "task_delayacct.was"
)

// delayAccountingMeeting is the directory where the runs holding the
// switch under proc meet: /run/dbio for the machine's own /proc, and a
// directory beside any other /proc root (a test's).
func delayAccountingMeeting(proc string) string {
	if filepath.Clean(proc) == "/proc" {
		return "/run/dbio"
	}
	return filepath.Join(proc, "dbio-run")
}

// delayAccounting makes sure the kernel accounts each thread's block-I/O
// delay while a run samples it (telemetry's proc_*_blkio_wait_pct): it
// switches kernel.task_delayacct on under proc when it is off. restore
// gives the switch up, and is to be called on every way out of the run:
// the last dbio run holding it sets it back to what it was before dbio
// switched it on; it does nothing when dbio did not switch it. note says,
// for run.json, that it was switched, or why the delay will not be
// recorded; it is empty when delay accounting was on without dbio.
func delayAccounting(proc string) (restore func() error, note string) {
	nothing := func() error { return nil }
	if proc == "" {
		return nothing, "block-I/O delay not recorded: no /proc root to switch kernel.task_delayacct under"
	}
	path := filepath.Join(proc, delayAccountingSwitch)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nothing, "block-I/O delay not recorded: this kernel has no kernel.task_delayacct switch (" + path + ", Linux 5.14 and later)"
	}
	meeting := delayAccountingMeeting(proc)
	turn, err := takeTurn(meeting)
	if err != nil {
		// Without the meeting place (not root, say), the switch is read as
		// it is: on, the delay is recorded; off, it stays off.
		was, rerr := os.ReadFile(path)
		switch {
		case rerr != nil:
			return nothing, fmt.Sprintf("block-I/O delay not recorded: read kernel.task_delayacct: %v", rerr)
		case strings.TrimSpace(string(was)) != "0":
			return nothing, ""
		}
		return nothing, fmt.Sprintf("block-I/O delay not recorded: kernel.task_delayacct is 0 and could not be switched on: %v (run dbio as root, or switch it on with sysctl kernel.task_delayacct=1)", err)
	}
	defer turn.Close()
	statePath := filepath.Join(meeting, delayAccountingState)
	switched, why := switchDelayAccounting(path, statePath)
	if !switched {
		if why != "" {
			return nothing, "block-I/O delay not recorded: " + why
		}
		return nothing, ""
	}
	users, err := openMeetingLock(meeting, delayAccountingUsers)
	if err == nil {
		err = syscall.Flock(int(users.Fd()), syscall.LOCK_SH)
	}
	if err != nil {
		if users != nil {
			users.Close()
		}
		// Switched on by this run and no other: set it back at once.
		if was, rerr := os.ReadFile(statePath); rerr == nil && !othersUse(meeting) {
			_ = os.WriteFile(path, was, 0o644)
			_ = os.Remove(statePath)
		}
		return nothing, fmt.Sprintf("block-I/O delay not recorded: %v", err)
	}
	restore = func() error {
		defer users.Close()
		turn, err := takeTurn(meeting)
		if err != nil {
			return fmt.Errorf("set kernel.task_delayacct back after the run: %w", err)
		}
		defer turn.Close()
		// Only a run that ends alone gets the users' lock whole: the
		// others leave the switch to it.
		if err := syscall.Flock(int(users.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			return nil
		}
		was, err := os.ReadFile(statePath)
		if errors.Is(err, os.ErrNotExist) {
			return nil // set back already
		}
		if err == nil {
			err = os.WriteFile(path, was, 0o644)
		}
		if err == nil {
			err = os.Remove(statePath)
		}
		if err != nil {
			return fmt.Errorf("set kernel.task_delayacct back to 0 after the run: %w", err)
		}
		return nil
	}
	return restore, "kernel.task_delayacct switched from 0 to 1 for the run, so that the kernel accounts each thread's block-I/O delay (proc_server_blkio_wait_pct, proc_dbio_blkio_wait_pct), and set back to 0 when the last dbio run using it ended"
}

// openMeetingLock opens the lock file name in meeting, made as root's
// alone, never through a link.
func openMeetingLock(meeting, name string) (*os.File, error) {
	if err := os.MkdirAll(meeting, 0o755); err != nil {
		return nil, fmt.Errorf("make %s: %w", meeting, err)
	}
	f, err := os.OpenFile(filepath.Join(meeting, name), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the lock kernel.task_delayacct's users share: %w", err)
	}
	return f, nil
}

// takeTurn waits for the turn lock and holds it until the file is closed.
func takeTurn(meeting string) (*os.File, error) {
	f, err := openMeetingLock(meeting, delayAccountingTurn)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// othersUse says whether another run holds the users' lock, asked with
// the turn held.
func othersUse(meeting string) bool {
	f, err := openMeetingLock(meeting, delayAccountingUsers)
	if err != nil {
		return true // unknown: leave the switch on
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
}

// switchDelayAccounting switches delay accounting on where it is off,
// keeping the value it had in statePath, with the lock held whole. It
// says whether the switch is dbio's to set back (switched now, or by
// another dbio run still holding it), or why it could not be switched
// ("" when it was on without dbio).
func switchDelayAccounting(path, statePath string) (switched bool, why string) {
	was, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Sprintf("read kernel.task_delayacct: %v", err)
	}
	_, serr := os.Stat(statePath)
	kept := serr == nil // switched on by a dbio run, kept on for this one
	if strings.TrimSpace(string(was)) != "0" {
		return kept, ""
	}
	// Off: never switched, or switched off under a dbio run still
	// holding it (by hand, say), which is switched on again.
	if err := os.WriteFile(path, []byte("1\n"), 0o644); err != nil {
		why := err.Error()
		if errors.Is(err, os.ErrPermission) {
			why += " (run dbio as root, or switch it on with sysctl kernel.task_delayacct=1)"
		}
		return false, "kernel.task_delayacct is 0 and could not be switched on: " + why
	}
	if kept {
		return true, ""
	}
	if err := os.WriteFile(statePath, was, 0o600); err != nil {
		// Without the state, no later run could set it back: set it back now.
		_ = os.WriteFile(path, was, 0o644)
		return false, fmt.Sprintf("keep kernel.task_delayacct's value: %v", err)
	}
	return true, ""
}
