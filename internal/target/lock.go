package target

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"dbio/internal/results"
)

// LockName is the file in dbio's directory whose lock says which run owns the target.
const LockName = ".dbio-lock"

// ErrBusy is returned when another run holds the target.
var ErrBusy = errors.New("target in use by another dbio run")

// Holder is the run that holds a target, as recorded in its lock file for a
// second run to name. Command must carry no secret: the caller passes what
// may be shown to anyone on the machine.
type Holder struct {
	PID     int       `json:"pid"`
	Command []string  `json:"command,omitempty"`
	Started time.Time `json:"started"`
}

// BusyError says which run holds a target.
type BusyError struct {
	Target string
	Holder Holder
}

func (e *BusyError) Error() string {
	h := e.Holder
	who := "another dbio run"
	if h.PID > 0 {
		who += fmt.Sprintf(" (pid %d", h.PID)
		if !h.Started.IsZero() {
			who += ", started " + h.Started.Format("2006-01-02 15:04:05 MST")
		}
		if len(h.Command) > 0 {
			who += ", command: " + strings.Join(h.Command, " ")
		}
		who += ")"
	}
	return fmt.Sprintf("target %s is in use by %s: wait until it has finished, or choose another target", e.Target, who)
}

// Is makes errors.Is(err, ErrBusy) true for a BusyError.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// Lock is a target held by this process for one run.
type Lock struct {
	f *os.File
}

// Lock takes the target for one run: an exclusive flock(2) on the lock file
// in dbio's directory, held until Release or until the process ends, however
// it ends, so that a crash leaves nothing to clean up. A target another run
// holds is refused at once with a *BusyError naming that run. The lock
// belongs to the open file, so a second Lock of the same target in one
// process is refused too: open each target once per run. sys.Proc is where
// the holder of a lock taken an instant ago is looked for.
func (t *Target) Lock(sys SysFS, h Holder) (*Lock, error) {
	path := filepath.Join(t.Dir, LockName)
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("target %s: lock: %w", t.Path, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, notOwned(path, "is not a regular file")
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		holder := readHolder(f)
		if holder.PID == 0 {
			// Taken an instant ago, before its holder wrote who it is.
			holder.PID = flockHolder(sys.Proc, f)
		}
		f.Close()
		return nil, &BusyError{Target: t.Path, Holder: holder}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("target %s: lock %s: %w", t.Path, path, err)
	}
	b, err := json.Marshal(h)
	if err == nil {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.WriteAt(append(b, '\n'), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("target %s: record the lock's holder: %w", t.Path, err)
	}
	return &Lock{f: f}, nil
}

// Holding reports, without taking anything, the run that holds the target at
// path: a *BusyError naming it, or nil when none does (or dbio's directory
// has no lock file). It looks for a flock on the lock file in sys.Proc's
// /proc/locks rather than trying one: even a shared lock taken for a moment
// would make the holder's own Lock, taken at that moment, fail as busy. A
// preflight asks it first, since what a running dbio is making on the
// target (a directory an instant before its marker) is not a stranger's.
//
// Only a lock file in dbio's own marked directory is read, and opened
// without waiting: what a stranger put there instead (a link to dbio's
// directory elsewhere, a FIFO, on whose opening a read-only open would
// block until someone writes to it) is left to the checks that refuse it.
func Holding(sys SysFS, path string) error {
	if checkOwned(filepath.Join(path, DirName)) != nil {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(path, DirName, LockName), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	pid := flockHolder(sys.Proc, f)
	if pid == 0 || pid == os.Getpid() {
		// Nobody, or this process: a suite holds its targets for all
		// its runs, each of which has its preflight.
		return nil
	}
	h := readHolder(f)
	if h.PID != pid {
		// Written by an earlier holder, or not yet by this one.
		h = Holder{PID: pid}
	}
	return &BusyError{Target: path, Holder: h}
}

// Release gives the target up. The file stays (removing it would let a
// third run lock a file a second run has already opened); emptied, it names nobody.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	terr := l.f.Truncate(0)
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return errors.Join(terr, err)
}

// readHolder reads who holds the lock from its file, which any process
// that can write the target could have written: the command it names
// reaches a terminal with its control characters escaped.
func readHolder(f *os.File) Holder {
	var h Holder
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 64<<10))
	if err != nil || json.Unmarshal(b, &h) != nil {
		return Holder{}
	}
	for i, a := range h.Command {
		h.Command[i] = results.Printable(a)
	}
	return h
}

// flockHolder finds in /proc/locks the process holding a flock on f's file,
// or 0. Lines read "1: FLOCK ADVISORY WRITE 4242 08:01:1234 0 EOF", the
// device in hexadecimal major:minor and the inode in decimal.
func flockHolder(procRoot string, f *os.File) int {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return 0
	}
	want := fmt.Sprintf("%02x:%02x:%d", devMajor(uint64(st.Dev)), devMinor(uint64(st.Dev)), st.Ino)
	locks, err := os.Open(filepath.Join(procRoot, "locks"))
	if err != nil {
		return 0
	}
	defer locks.Close()
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil {
			return pid
		}
	}
	return 0
}
