package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
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
	// Wrap, when set, is how the replay's fio is started (in a block-I/O
	// cgroup that caps the target, say); the working file's layout is not
	// wrapped, as a run's load is not capped.
	Wrap func(execx.Cmd) execx.Cmd
}

// WorkFileName is the working file in WorkDir.
const WorkFileName = "replay.data"

// MaxRequests is the most requests a replay reads back: fio logs each read
// and write in one line of its completion log (at most about 48 bytes),
// and dbio reads at most fioformat.MaxLogBytes of a directory's logs.
const MaxRequests = fioformat.MaxLogBytes / 48

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
		err = WriteIOLog(f, cfg.Trace, layout, file, lanes, lane, cfg.Pace, cfg.Speed)
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
	job := JobFile(iologs, file, cfg.Pace, "replay")
	if err := os.WriteFile(jobPath, []byte(job), 0o644); err != nil {
		return rec, err
	}
	replay := execx.Cmd{Name: cfg.Fio, Dir: cfg.ResultsDir, Args: []string{"--output-format=json+", "--output=fio.json", jobPath}}
	if cfg.Wrap != nil {
		replay = cfg.Wrap(replay)
	}
	if _, err := run.Run(ctx, replay); err != nil {
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
	done := completions(logs)
	rec.Seconds = seconds(done)
	rec.spanned(done)
	rec.ExpectedSeconds = ExpectedSeconds(cfg.Trace, cfg.Speed)
	rec.BehindSeconds = rec.RuntimeSeconds - rec.ExpectedSeconds
	if cfg.Pace == Recorded {
		rec.KeptUp = rec.BehindSeconds <= max(0.05*rec.ExpectedSeconds, 0.1)
	}
	return rec, nil
}

// completion is one replayed read or write as fio's per-request log has
// it: when it completed (Unix milliseconds), how long it took, its direction.
type completion struct {
	doneMS  int64
	latency time.Duration
	dir     int
}

func (c completion) issuedMS() int64 { return c.doneMS - c.latency.Milliseconds() }

// completions are the lanes' reads and writes from their per-request
// completion latency logs.
func completions(logs []fioformat.JobLogs) []completion {
	var out []completion
	for _, j := range logs {
		for _, s := range j.Clat {
			if s.Dir == 0 || s.Dir == 1 {
				out = append(out, completion{doneMS: s.TimeMS, latency: time.Duration(s.Value), dir: s.Dir})
			}
		}
	}
	return out
}

// spanned reads the replay's runtime as the span its reads and writes
// took, from the first one's issue to the last one's completion, as the
// source's is read; and its rates over that span. fio's own runtime is
// each lane's from its start, which at the recorded pace counts the
// lane's wait for its first request (Lead, less the lane's start).
func (rec *Record) spanned(done []completion) {
	if len(done) == 0 {
		return
	}
	first, last := int64(math.MaxInt64), int64(0)
	for _, c := range done {
		first, last = min(first, c.issuedMS()), max(last, c.doneMS)
	}
	rt := float64(last-first) / 1000
	if rt <= 0 {
		return
	}
	rec.RuntimeSeconds = rt
	for _, f := range []*Figures{&rec.Reads, &rec.Writes, &rec.Syncs} {
		if f.PerSecond > 0 {
			f.MBps *= float64(f.Requests) / rt / f.PerSecond
		}
		f.PerSecond = float64(f.Requests) / rt
	}
}

// seconds are the replay's seconds from its first request's issue: the
// reads and writes that completed in each, and their p99.
func seconds(done []completion) []Second {
	if len(done) == 0 {
		return nil
	}
	t0 := int64(math.MaxInt64)
	for _, c := range done {
		t0 = min(t0, c.issuedMS())
	}
	var lat [][2][]time.Duration
	for _, c := range done {
		i := int((c.doneMS - t0) / 1000)
		for len(lat) <= i {
			lat = append(lat, [2][]time.Duration{})
		}
		lat[i][c.dir] = append(lat[i][c.dir], c.latency)
	}
	out := make([]Second, len(lat))
	for i, l := range lat {
		out[i] = Second{
			ReadIOPS: float64(len(l[0])), WriteIOPS: float64(len(l[1])),
			ReadP99us: p99us(l[0]), WriteP99us: p99us(l[1]),
		}
	}
	return out
}

// p99us is the 99th percentile of lat in µs (nearest rank), 0 for none.
func p99us(lat []time.Duration) float64 {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	rank := int(math.Ceil(0.99*float64(len(lat)))) - 1
	return float64(lat[max(rank, 0)]) / float64(time.Microsecond)
}

// ExpectedSeconds is how long the source took for the trace's requests at
// speed: from the first issue to the latest recorded completion (or issue,
// for a request the trace saw not end).
func ExpectedSeconds(tr blocktrace.Trace, speed float64) float64 {
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

// Summary says in one line how a replay went against its source: kept
// up or how far behind at the recorded pace, how many times the source's
// pace as fast as possible.
func Summary(rec Record) string {
	switch {
	case rec.Pace == Max:
		return fmt.Sprintf("replayed in %.2f s as fast as possible: %.2fx the recorded pace", rec.RuntimeSeconds, rec.ExpectedSeconds/max(rec.RuntimeSeconds, 0.001))
	case rec.KeptUp:
		return fmt.Sprintf("replayed in %.2f s, the source took %.2f s: kept up with the recorded pace", rec.RuntimeSeconds, rec.ExpectedSeconds)
	}
	return fmt.Sprintf("replayed in %.2f s, the source took %.2f s: fell behind the recorded pace by %.2f s (%.0f %%)", rec.RuntimeSeconds, rec.ExpectedSeconds,
		rec.BehindSeconds, 100*rec.BehindSeconds/max(rec.ExpectedSeconds, 0.001))
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
