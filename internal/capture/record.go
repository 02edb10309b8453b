package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"dbio/internal/blocktrace"
	"dbio/internal/results"
)

// RecordName is the capture's description in its results directory.
const RecordName = "capture.json"

// Kind marks a capture's record, so that a reader knows what it holds.
const Kind = "block capture"

// Record is what capture.json holds: the capture's setting, its check
// against the devices' own counters, and its signature.
type Record struct {
	Kind    string         `json:"kind"`
	Version int            `json:"version"`
	Started time.Time      `json:"started"`
	Command []string       `json:"command,omitempty"`
	Devices []DeviceRecord `json:"devices"`
	// DurationSeconds is how long the capture traced.
	DurationSeconds float64 `json:"duration_s"`
	// Requests is the trace's request count.
	Requests int `json:"requests"`
	// LostEvents are events the kernel dropped (the trace misses requests
	// when it is not zero); UnmatchedCompletions ended requests issued before
	// the capture began.
	LostEvents           int64 `json:"lost_events"`
	UnmatchedCompletions int   `json:"unmatched_completions"`
	// EmptyWrites are zero-length writes that ended an fsync's flush: not
	// requests of the trace (their flush is), but among /proc/diskstats' writes.
	EmptyWrites int `json:"empty_writes"`
	// TracerCPUSeconds is the CPU time dbio spent reading the trace (user
	// and system), the overhead a capture adds beside the kernel's own.
	TracerCPUSeconds float64              `json:"tracer_cpu_s"`
	Signature        blocktrace.Signature `json:"signature"`
}

// DeviceRecord is one traced device and its counters' growth over the capture.
type DeviceRecord struct {
	Name   string    `json:"name"`
	Number string    `json:"dev_number"`
	Stats  DiskStats `json:"diskstats_delta"`
}

// Config is one capture.
type Config struct {
	Devices  []blocktrace.Device
	Duration time.Duration
	// TraceFS is the tracing file system's mount point; Proc is /proc.
	TraceFS string
	Proc    string
	Command []string
	Now     func() time.Time
	// Started, when set, is called once the trace has begun.
	Started func()
}

// Run traces cfg's devices for its duration. The tracer was opened by
// OpenTracer, so that a capture that cannot be set up is refused before a
// results directory is made.
func Run(ctx context.Context, t *Tracer, cfg Config) (Record, blocktrace.Trace, error) {
	rec := Record{Kind: Kind, Version: 1, Started: cfg.Now(), Command: cfg.Command}
	// Read right after the trace's markers: the trace and the counters
	// then cover the same span, but for the requests in flight at its ends.
	if _, err := ReadDiskStats(cfg.Proc, cfg.Devices); err != nil {
		return rec, blocktrace.Trace{}, err
	}
	var before, after []DiskStats
	cpu0 := cpuSeconds()
	tr, st, err := t.Run(ctx, cfg.Duration, func(marker string) error {
		s, err := ReadDiskStats(cfg.Proc, cfg.Devices)
		if marker == "start" {
			before = s
			if cfg.Started != nil {
				cfg.Started()
			}
		} else {
			after = s
		}
		return err
	})
	cpu := cpuSeconds() - cpu0
	if err != nil {
		return rec, tr, err
	}
	for i, d := range cfg.Devices {
		rec.Devices = append(rec.Devices, DeviceRecord{Name: d.Name, Number: d.Number(), Stats: after[i].Sub(before[i])})
	}
	rec.DurationSeconds = tr.Duration.Seconds()
	rec.Requests = len(tr.Requests)
	rec.LostEvents, rec.UnmatchedCompletions, rec.EmptyWrites = st.Lost, st.Unmatched, st.EmptyWrites
	rec.TracerCPUSeconds = cpu
	rec.Signature = blocktrace.Sign(tr)
	return rec, tr, nil
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// WriteDir writes the capture into dir, which dbio made for it: the trace
// first, the record last, so that a record always has its trace.
func WriteDir(dir string, rec Record, tr blocktrace.Trace) error {
	if err := writeNew(filepath.Join(dir, blocktrace.FileName), func(w io.Writer) error {
		return blocktrace.Encode(w, tr)
	}); err != nil {
		return err
	}
	return writeNew(filepath.Join(dir, RecordName), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rec)
	})
}

func writeNew(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// maxRecord bounds capture.json as read back.
const maxRecord = 64 << 20

// Load reads a capture's directory (as untrusted input: no link followed).
func Load(dir string) (Record, blocktrace.Trace, error) {
	var rec Record
	f, err := results.OpenIn(dir, RecordName)
	if err != nil {
		return rec, blocktrace.Trace{}, fmt.Errorf("%s is not a capture: %w", dir, err)
	}
	err = json.NewDecoder(io.LimitReader(f, maxRecord)).Decode(&rec)
	f.Close()
	if err != nil {
		return rec, blocktrace.Trace{}, fmt.Errorf("%s: %w", filepath.Join(dir, RecordName), err)
	}
	if rec.Kind != Kind {
		return rec, blocktrace.Trace{}, fmt.Errorf("%s is not a capture (its %s is a %q)", dir, RecordName, rec.Kind)
	}
	tf, err := results.OpenIn(dir, blocktrace.FileName)
	if err != nil {
		return rec, blocktrace.Trace{}, err
	}
	defer tf.Close()
	tr, err := blocktrace.Decode(tf)
	if err != nil {
		return rec, tr, fmt.Errorf("%s: %w", filepath.Join(dir, blocktrace.FileName), err)
	}
	return rec, tr, nil
}
