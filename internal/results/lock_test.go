package results

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/metrics"
	"dbio/internal/smallfs"
)

func onDisk(t *testing.T, dir string) Run {
	t.Helper()
	var r Run
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAbandonedRun reads a directory whose writer ended without Finish, as
// a killed dbio leaves it: running while the lock is held, abandoned once
// the lock is free, and rewritten so.
func TestAbandonedRun(t *testing.T) {
	start := time.Now()
	d, err := Create(t.TempDir(), "killed", Run{Kind: "tpcc"}, start)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteStep(Step{Index: 0, Name: "users-1", Status: StatusCompleted}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d.Path, reserveName)); err != nil {
		t.Errorf("no reserve in a new directory: %v", err)
	}
	for range 2 {
		l, err := Load(d.Path)
		if err != nil || l.Run.Status != StatusRunning {
			t.Fatalf("a run whose writer holds the lock: %v, %v; want running", l.Run.Status, err)
		}
	}
	// The process ends: the kernel drops its lock.
	d.lock.Close()
	l, err := Load(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Run.Status != StatusAbandoned || !strings.Contains(l.Run.Error, "pid "+strconv.Itoa(os.Getpid())) ||
		!strings.Contains(l.Run.Error, "ended without finishing") || l.Run.Ended.IsZero() || len(l.Steps) != 1 {
		t.Errorf("loaded %s, ended %v, error %q, %d steps; want abandoned, naming the writer, with its step", l.Run.Status, l.Run.Ended, l.Run.Error, len(l.Steps))
	}
	if r := onDisk(t, d.Path); r.Status != StatusAbandoned || r.Error != l.Run.Error {
		t.Errorf("run.json on disk says %s (%q); want abandoned as loaded", r.Status, r.Error)
	}
	if _, err := os.Stat(filepath.Join(d.Path, reserveName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the reserve of an abandoned directory is kept: %v", err)
	}
}

// TestRunningWithoutLockFile: a run.json left "running" by a dbio older than
// the lock is reported abandoned but not rewritten.
func TestRunningWithoutLockFile(t *testing.T) {
	dir := t.TempDir()
	if err := WriteJSON(filepath.Join(dir, "run.json"), Run{SchemaVersion: 1, Kind: "tpcc", Status: StatusRunning}); err != nil {
		t.Fatal(err)
	}
	l, err := Load(dir)
	if err != nil || l.Run.Status != StatusAbandoned {
		t.Fatalf("loaded %v, %v; want abandoned", l.Run.Status, err)
	}
	if r := onDisk(t, dir); r.Status != StatusRunning {
		t.Errorf("run.json rewritten to %s", r.Status)
	}
}

// TestFinishReleasesTheLock: a finished directory holds no lock and loads
// with its own status.
func TestFinishReleasesTheLock(t *testing.T) {
	d, err := Create(t.TempDir(), "done", Run{Kind: "tpcc"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(StatusInterrupted, errors.New("interrupt signal received"), time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{lockName, reserveName} {
		if _, err := os.Stat(filepath.Join(d.Path, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after Finish: %v", name, err)
		}
	}
	if l, err := Load(d.Path); err != nil || l.Run.Status != StatusInterrupted {
		t.Errorf("loaded %v, %v", l.Run.Status, err)
	}
}

// TestFilesystemFillsUp fills the filesystem of a results directory: the
// first failed write is reported once, explained, and the final status still
// fits, in the reserve given back.
func TestFilesystemFillsUp(t *testing.T) {
	fs := smallfs.Mount(t, 8<<20)
	d, err := Create(fs, "full", Run{Kind: "tpcc"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := smallfs.Fill(fs, 0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Failed():
		t.Fatal("Failed closed before any write failed")
	default:
	}
	err = d.AppendSeries(SeriesRow{Time: time.Now(), Step: "users-1", Phase: "measure", Values: []Sample{{"tpm", 1}}})
	if !errors.Is(err, ErrWriteFailed) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "the filesystem holding "+d.Path+" is full") {
		t.Fatalf("series write on a full filesystem: %v", err)
	}
	select {
	case <-d.Failed():
	default:
		t.Fatal("Failed not closed after a failed write")
	}
	h := metrics.NewHistogram()
	h.RecordValue(5)
	if err := d.WriteStep(Step{Index: 0, Name: "users-1", Status: StatusCompleted}, map[string]*hdrhistogram.Histogram{"new_order": h}); !errors.Is(err, ErrWriteFailed) {
		t.Errorf("step write on a full filesystem: %v", err)
	}
	if d.Err() == nil || !errors.Is(d.Err(), syscall.ENOSPC) || !strings.Contains(d.Err().Error(), "series") {
		t.Errorf("Err = %v, want the first failure (series.csv)", d.Err())
	}
	// The caller thinks all went well; the directory knows better.
	if err := d.Finish(StatusCompleted, nil, time.Now()); err != nil {
		t.Fatalf("the final run.json did not fit in the reserve: %v", err)
	}
	l, err := Load(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Run.Status != StatusFailed || !strings.Contains(l.Run.Error, "is full") {
		t.Errorf("run.json: %s, %q; want failed, naming the full filesystem", l.Run.Status, l.Run.Error)
	}
}

// TestNoRoomForTheReserve: a filesystem without room for the reserve is
// refused at creation, and the directory made for the run is removed.
func TestNoRoomForTheReserve(t *testing.T) {
	fs := smallfs.Mount(t, 2<<20)
	_, err := Create(fs, "cramped", Run{Kind: "tpcc"}, time.Now())
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "set aside 4 MiB") {
		t.Fatalf("Create on a 2 MiB filesystem: %v", err)
	}
	if entries, _ := os.ReadDir(fs); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
