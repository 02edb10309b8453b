package results

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	// lockName is the file a run holds locked (flock) while it writes its
	// directory. The kernel releases the lock when the process ends, however
	// it ends, so a reader that finds run.json "running" and the lock free
	// knows the writer is gone.
	lockName = ".dbio-run.lock"
	// reserveName is space set aside when the directory is created and given
	// back when the run finishes, so that its final status, and the report
	// after it, can be written even when the filesystem has filled up.
	reserveName = ".dbio-reserve"
	// ReserveBytes is the size of that reserve.
	ReserveBytes = 4 << 20
)

// ErrWriteFailed is returned, wrapped, once a write of the results
// directory has failed (typically because its filesystem is full): the run
// can no longer record what it measures and stops.
var ErrWriteFailed = errors.New("the results directory can no longer be written")

// holdLock creates the lock file of a new results directory and locks it for
// the life of the run (until Finish, or the process's end). It records who
// holds it, for the explanation a reader gives when the holder is gone.
func holdLock(dir string, now time.Time) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("results directory %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("results directory %s: lock: %w", dir, err)
	}
	host, _ := os.Hostname()
	if _, err := fmt.Fprintf(f, "pid %d\nhost %s\nstarted %s\n", os.Getpid(), host, now.Format(time.RFC3339)); err != nil {
		f.Close()
		return nil, fmt.Errorf("results directory %s: %w", dir, err)
	}
	return f, nil
}

// makeReserve sets ReserveBytes aside in dir. Where the filesystem cannot
// allocate without writing (fallocate unsupported), zeros are written.
func makeReserve(dir string) error {
	path := filepath.Join(dir, reserveName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = syscall.Fallocate(int(f.Fd()), 0, 0, ReserveBytes)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		_, err = io.CopyN(f, zeros{}, ReserveBytes)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("results directory %s: set aside %d MiB for the final results: %w", dir, ReserveBytes>>20, err)
	}
	return nil
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// explainWrite turns a failed write of the results directory at dir into
// ErrWriteFailed, naming a full filesystem when that is the cause.
func explainWrite(dir string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w: the filesystem holding %s is full: free space there, or write the results elsewhere", ErrWriteFailed, err, dir)
	}
	return fmt.Errorf("%w: %w", ErrWriteFailed, err)
}

// settleAbandoned is called by Load on a run.json that says "running". When
// no process holds the directory's lock, the dbio that wrote it ended
// without finishing it (killed, or its machine stopped): run is marked
// abandoned, with an explanation, and run.json is rewritten so, while the
// lock is held for reading. The rewrite is best effort (a directory read
// from read-only media stays as it is on disk). A directory without a lock
// file was written by a dbio older than the lock: it is reported abandoned
// but not rewritten.
func settleAbandoned(path string, run *Run) {
	f, err := OpenIn(path, lockName)
	if errors.Is(err, os.ErrNotExist) {
		abandon(path, run, 0)
		return
	}
	if err != nil {
		return
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return // a live dbio holds it: the run is running
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	// The writer may have finished between the first read and the lock.
	var now Run
	if err := readJSONIn(path, "run.json", &now); err == nil && now.Status != StatusRunning {
		*run = now
		return
	}
	abandon(path, run, holderPID(f))
	if err := WriteJSON(filepath.Join(path, "run.json"), run); err == nil {
		os.Remove(filepath.Join(path, reserveName))
	}
}

// abandon marks run abandoned, ended at the directory's last write.
func abandon(path string, run *Run, pid int) {
	last := lastWrite(path)
	who := "the dbio that wrote it"
	if pid > 0 {
		who = fmt.Sprintf("the dbio that wrote it (pid %d)", pid)
	}
	run.Status = StatusAbandoned
	if !last.IsZero() {
		run.Ended = last
	}
	msg := fmt.Sprintf("%s ended without finishing the run, after its last write at %s: it was killed (SIGKILL, out of memory) or its machine stopped; the steps it finished are kept",
		who, last.Format(time.RFC3339))
	if run.Error != "" {
		msg += "; before that: " + run.Error
	}
	run.Error = msg
}

// holderPID reads the PID holdLock recorded.
func holderPID(f *os.File) int {
	sc := bufio.NewScanner(io.LimitReader(f, 4096)) // holdLock writes three short lines
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "pid "); ok {
			pid, _ := strconv.Atoi(v)
			return pid
		}
	}
	return 0
}

// lastWrite is the latest modification of what a run writes as it goes,
// links not followed.
func lastWrite(path string) time.Time {
	var last time.Time
	files := []string{filepath.Join(path, "run.json"), filepath.Join(path, "series.csv")}
	steps, _ := stepDirs(path)
	for _, s := range steps {
		files = append(files, filepath.Join(path, "steps", s, "summary.json"))
	}
	for _, f := range files {
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() && fi.ModTime().After(last) {
			last = fi.ModTime()
		}
	}
	return last
}
