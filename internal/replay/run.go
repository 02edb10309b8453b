package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"dbio/internal/blocktrace"
	"dbio/internal/execx"
	"dbio/internal/fioformat"
	"dbio/internal/results"
)

// RecordName is the replay's description in its results directory.
const RecordName = "replay.json"

// Kind marks a replay's record.
const Kind = "block replay"

// Record is what replay.json holds.
type Record struct {
	Kind    string    `json:"kind"`
	Version int       `json:"version"`
	Started time.Time `json:"started"`
	Command []string  `json:"command,omitempty"`
	// Capture is the replayed capture's directory, as given.
	Capture string `json:"capture"`
	// Target is the candidate storage (the directory given) and what is behind it.
	Target  string          `json:"target"`
	Storage results.Storage `json:"storage"`
	Pace    Pace            `json:"pace"`
	Speed   float64         `json:"speed"`
	// FileBytes is the working file's size.
	FileBytes int64    `json:"file_bytes"`
	Log       LogStats `json:"iolog"`
	// ExpectedSeconds is how long the source took for the requests at this
	// speed: from the first issue to the last completion as captured.
	ExpectedSeconds float64 `json:"expected_s"`
	// RuntimeSeconds is how long fio took to replay them.
	RuntimeSeconds float64 `json:"runtime_s"`
	// BehindSeconds is how much later than the source the replay ended
	// (negative: earlier); KeptUp says whether that is within the
	// allowance (5 % of the expected time, at least 100 ms).
	BehindSeconds float64 `json:"behind_s"`
	KeptUp        bool    `json:"kept_up"`
	Reads         Figures `json:"reads"`
	Writes        Figures `json:"writes"`
	// Syncs are the fdatasyncs standing for the trace's flushes and FUA writes.
	Syncs   Figures  `json:"syncs"`
	Seconds []Second `json:"seconds"`
}

// Figures are one direction's replayed requests and latencies (µs), the
// latencies as fio measured them from submission to completion.
type Figures struct {
	Requests  int64              `json:"requests"`
	PerSecond float64            `json:"per_s"`
	MBps      float64            `json:"mb_per_s"`
	Latency   blocktrace.Latency `json:"latency_us"`
}

// Second is one second of the replay.
type Second struct {
	ReadIOPS   float64 `json:"read_iops"`
	WriteIOPS  float64 `json:"write_iops"`
	ReadP99us  float64 `json:"read_p99_us"`
	WriteP99us float64 `json:"write_p99_us"`
}

// Config is one replay.
type Config struct {
	Fio     string // fio's path
	Capture string
	Trace   blocktrace.Trace
	Target  string
	Storage results.Storage
	// WorkDir is dbio's directory on the target (DIR/dbio/replay), which
	// holds the working file.
	WorkDir string
	// ResultsDir receives the job file, the I/O log, fio's report and logs.
	ResultsDir string
	Pace       Pace
	Speed      float64
	Command    []string
	Now        func() time.Time
}

// WorkFileName is the working file in WorkDir.
const WorkFileName = "replay.data"

// Need is the space a replay of tr takes on its target.
func Need(tr blocktrace.Trace) int64 { return PlanLayout(tr).Size }

// Run lays out the working file and replays the trace on it with fio.
func Run(ctx context.Context, run execx.Runner, cfg Config) (Record, error) {
	rec := Record{Kind: Kind, Version: 1, Started: cfg.Now(), Command: cfg.Command, Capture: cfg.Capture,
		Target: cfg.Target, Storage: cfg.Storage, Pace: cfg.Pace, Speed: cfg.Speed}
	// fio runs in the results directory and reads the logs named in its
	// job file from wherever it is.
	var err error
	if cfg.ResultsDir, err = filepath.Abs(cfg.ResultsDir); err != nil {
		return rec, err
	}
	if cfg.WorkDir, err = filepath.Abs(cfg.WorkDir); err != nil {
		return rec, err
	}
	layout := PlanLayout(cfg.Trace)
	rec.FileBytes = layout.Size
	if layout.Size == 0 {
		return rec, fmt.Errorf("capture %s has no read or write to replay", cfg.Capture)
	}
	file := filepath.Join(cfg.WorkDir, WorkFileName)
	rec.Log = Count(cfg.Trace)
	lanes, n := AssignLanes(cfg.Trace)
	rec.Log.Lanes = n
	var iologs []string
	for lane := range n {
		path := filepath.Join(cfg.ResultsDir, fmt.Sprintf("lane%d.iolog", lane+1))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return rec, err
		}
		err = WriteIOLog(f, cfg.Trace, layout, file, lanes, lane)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return rec, err
		}
		iologs = append(iologs, path)
	}
	// The file is written in full first, so that every read meets data
	// on the candidate rather than a hole the file system answers itself.
	if _, err := run.Run(ctx, execx.Cmd{Name: cfg.Fio, Args: []string{
		"--name=layout", "--filename=" + file, "--size=" + strconv.FormatInt(layout.Size, 10),
		"--rw=write", "--bs=1M", "--direct=1", "--end_fsync=1", "--output=/dev/null",
	}}); err != nil {
		return rec, fmt.Errorf("lay out the working file %s: %w", file, err)
	}
	jobPath := filepath.Join(cfg.ResultsDir, "replay.fio")
	job := JobFile(iologs, file, cfg.Pace, cfg.Speed, "replay")
	if err := os.WriteFile(jobPath, []byte(job), 0o644); err != nil {
		return rec, err
	}
	if _, err := run.Run(ctx, execx.Cmd{Name: cfg.Fio, Dir: cfg.ResultsDir,
		Args: []string{"--output-format=json+", "--output=fio.json", jobPath}}); err != nil {
		return rec, fmt.Errorf("fio replay: %w", err)
	}
	report, err := os.ReadFile(filepath.Join(cfg.ResultsDir, "fio.json"))
	if err != nil {
		return rec, err
	}
	if err := rec.readReport(report); err != nil {
		return rec, err
	}
	logs, err := fioformat.ReadLogs(cfg.ResultsDir)
	if err != nil {
		return rec, err
	}
	rec.Seconds = seconds(logs)
	rec.ExpectedSeconds = expected(cfg.Trace, cfg.Speed)
	rec.BehindSeconds = rec.RuntimeSeconds - rec.ExpectedSeconds
	if cfg.Pace == Recorded {
		rec.KeptUp = rec.BehindSeconds <= max(0.05*rec.ExpectedSeconds, 0.1)
	}
	if err := fioformat.CompressHistLogs(cfg.ResultsDir); err != nil {
		return rec, err
	}
	return rec, nil
}

// seconds sums the lanes' per-second logs. Unlike a fio point's jobs,
// which all run all along, a lane may sit idle for seconds and log nothing:
// a second is every lane's samples in it, however many lanes logged.
func seconds(logs []fioformat.JobLogs) []Second {
	t0 := int64(math.MaxInt64)
	for _, j := range logs {
		for _, s := range j.IOPS {
			t0 = min(t0, s.TimeMS)
		}
		for _, h := range j.Hist {
			t0 = min(t0, h.TimeMS)
		}
	}
	if t0 == math.MaxInt64 {
		return nil
	}
	var out []Second
	var bins [][2][]fioformat.HistBin
	at := func(timeMS int64) int {
		i := int(max(fioformat.SecondOf(t0, timeMS), 0))
		for len(out) <= i {
			out = append(out, Second{})
			bins = append(bins, [2][]fioformat.HistBin{})
		}
		return i
	}
	for _, j := range logs {
		for _, s := range j.IOPS {
			i := at(s.TimeMS)
			switch s.Dir {
			case 0:
				out[i].ReadIOPS += float64(s.Value)
			case 1:
				out[i].WriteIOPS += float64(s.Value)
			}
		}
		for _, h := range j.Hist {
			if h.Dir == 0 || h.Dir == 1 {
				i := at(h.TimeMS)
				bins[i][h.Dir] = append(bins[i][h.Dir], h.Bins...)
			}
		}
	}
	for i := range out {
		// fio's histogram values are nanoseconds.
		if b := bins[i][0]; len(b) > 0 {
			out[i].ReadP99us = finite(fioformat.HistPercentile(fioformat.MergeBins(b), 99) / 1000)
		}
		if b := bins[i][1]; len(b) > 0 {
			out[i].WriteP99us = finite(fioformat.HistPercentile(fioformat.MergeBins(b), 99) / 1000)
		}
	}
	return out
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// expected is when the source finished the trace's requests at speed: the
// latest recorded completion (or issue, for a request the trace saw not end).
func expected(tr blocktrace.Trace, speed float64) float64 {
	var end time.Duration
	var first time.Duration = -1
	for _, r := range tr.Requests {
		if first < 0 {
			first = r.At
		}
		e := r.At
		if r.Completed() {
			e += r.Latency
		}
		end = max(end, e)
	}
	if first < 0 {
		return 0
	}
	return (end - first).Seconds() / speed
}

// fioReport is the part of fio's json+ report a replay reads beyond what
// fioformat reads: the syncs' latency.
type fioReport struct {
	Jobs []struct {
		Sync struct {
			LatNS struct {
				N          int64              `json:"N"`
				Mean       float64            `json:"mean"`
				Max        float64            `json:"max"`
				Percentile map[string]float64 `json:"percentile"`
			} `json:"lat_ns"`
		} `json:"sync"`
	} `json:"jobs"`
}

func (rec *Record) readReport(report []byte) error {
	out, err := fioformat.Parse(bytes.NewReader(report))
	if err != nil {
		return fmt.Errorf("fio's report: %w", err)
	}
	if len(out.Groups) != 1 {
		return fmt.Errorf("fio's report has %d groups, want the replay's one", len(out.Groups))
	}
	g := out.Groups[0]
	if g.Error != 0 {
		return fmt.Errorf("fio's replay ended with error %d (%s)", g.Error, syscall.Errno(g.Error))
	}
	// The group's job runtime is summed over its lanes; a direction's is
	// the longest lane's, which is the replay's.
	for _, d := range []*results.FioDirection{g.Read, g.Write} {
		if d != nil {
			rec.RuntimeSeconds = max(rec.RuntimeSeconds, float64(d.RuntimeMS)/1000)
		}
	}
	rec.Reads = figures(g.Read)
	rec.Writes = figures(g.Write)
	var raw fioReport
	start := bytes.IndexByte(report, '{')
	if start < 0 {
		return fioformat.ErrNoOutput
	}
	if err := json.Unmarshal(report[start:], &raw); err != nil {
		return fmt.Errorf("fio's report: %w", err)
	}
	if len(raw.Jobs) == 1 {
		s := raw.Jobs[0].Sync.LatNS
		pct := func(p string) float64 { return s.Percentile[p] / 1000 }
		rec.Syncs = Figures{Requests: s.N, Latency: blocktrace.Latency{
			Mean: s.Mean / 1000, P50: pct("50.000000"), P90: pct("90.000000"), P99: pct("99.000000"),
			P999: pct("99.900000"), Max: s.Max / 1000,
		}}
		if rec.RuntimeSeconds > 0 {
			rec.Syncs.PerSecond = float64(s.N) / rec.RuntimeSeconds
		}
	}
	return nil
}

func figures(d *results.FioDirection) Figures {
	if d == nil {
		return Figures{}
	}
	at := func(p float64) float64 { v, _ := d.Completion.At(p); return v }
	return Figures{
		Requests: d.IOs, PerSecond: d.IOPS, MBps: d.MBPerSec(),
		Latency: blocktrace.Latency{Mean: d.Completion.MeanUS, P50: at(50), P90: at(90), P99: at(99), P999: at(99.9), Max: d.Completion.MaxUS},
	}
}

// WriteRecord writes replay.json into dir.
func WriteRecord(dir string, rec Record) error {
	f, err := os.OpenFile(filepath.Join(dir, RecordName), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rec); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Load reads a replay's record from its directory.
func Load(dir string) (Record, error) {
	var rec Record
	f, err := results.OpenIn(dir, RecordName)
	if err != nil {
		return rec, fmt.Errorf("%s is not a replay: %w", dir, err)
	}
	defer f.Close()
	if err := json.NewDecoder(f).Decode(&rec); err != nil {
		return rec, fmt.Errorf("%s: %w", filepath.Join(dir, RecordName), err)
	}
	if rec.Kind != Kind {
		return rec, fmt.Errorf("%s is not a replay (its %s is a %q)", dir, RecordName, rec.Kind)
	}
	return rec, nil
}
