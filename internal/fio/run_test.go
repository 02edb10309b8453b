package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"dbio/internal/execx"
	"dbio/internal/fioformat"
	"dbio/internal/progress"
	"dbio/internal/results"
	"dbio/internal/target"
)

// Tests in this file run the real fio on a directory of the real disk
// (t.TempDir) and on tmpfs (/dev/shm), with 64 MiB working files and one- or
// two-second points, so that the whole package stays well under two minutes.
// They check what was recorded and how, never how fast this machine is, so
// they run in parallel: fio's points are time-based and last as long
// whatever else runs.

const testSize = 64 << 20

// targets are a disk directory and a tmpfs directory, made as a user makes
// a target before naming it.
func targets(t *testing.T) []string {
	out := []string{filepath.Join(t.TempDir(), "disk"), filepath.Join(shmDir(t), "shm")}
	for _, d := range out {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func newDir(t *testing.T, c Config) *results.Dir {
	t.Helper()
	cfg := c.Record()
	d, err := results.Create(t.TempDir(), "test", results.Run{Kind: "disk", Config: results.RunConfig{Disk: &cfg}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// short makes c a test-sized run.
func short(c Config, runtime time.Duration) Config {
	c.Runtime, c.Ramp, c.Size, c.SysFS = runtime, durp(0), testSize, target.HostFS()
	return c
}

// finishAndLoad completes the results directory a test's run wrote into and
// reads it back as a report would.
func finishAndLoad(t *testing.T, d *results.Dir) *results.Loaded {
	t.Helper()
	if err := d.Finish(results.StatusCompleted, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	l, err := results.Load(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// runProfile runs c to completion and checks everything every run must record.
func runProfile(t *testing.T, c Config) (*results.Loaded, []results.FioPoint, string) {
	t.Helper()
	requireFio(t)
	d := newDir(t, c)
	var out bytes.Buffer
	pts, err := Run(context.Background(), c, d, 0, execx.Real{Proc: "/proc"}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	l := finishAndLoad(t, d)
	plan, _ := NewPlan(c, BuiltinProfiles())
	if len(l.Steps) != len(plan.Points) || len(pts) != len(plan.Points) {
		t.Fatalf("%d steps and %d results for %d points", len(l.Steps), len(pts), len(plan.Points))
	}
	if v := l.Run.Environment.Versions["fio"]; !strings.HasPrefix(v, "fio-3.") {
		t.Errorf("fio version in run.json: %q", v)
	}
	if len(l.Run.Environment.Targets) != len(c.Targets) {
		t.Errorf("run.json lists %d targets, want %d", len(l.Run.Environment.Targets), len(c.Targets))
	}
	for i, s := range l.Steps {
		checkStep(t, d.Path, s, plan.Points[i])
	}
	return l, pts, out.String()
}

// checkStep verifies one recorded point: its files, that its figures are
// exactly fio's (re-read from the stored report) and its detail.
func checkStep(t *testing.T, runDir string, s results.Step, want results.FioPlan) {
	t.Helper()
	if s.Name != want.Name || s.Kind != "fio" || s.Status != results.StatusCompleted {
		t.Fatalf("step %d: %s %s %s (%s), want completed fio step %s", s.Index, s.Name, s.Kind, s.Status, s.Error, want.Name)
	}
	stepDir := filepath.Join(runDir, "steps", fmt.Sprintf("%02d-%s", s.Index, s.Name))
	for _, f := range []string{JobFileName, OutputFileName, "summary.json"} {
		if _, err := os.Stat(filepath.Join(stepDir, f)); err != nil {
			t.Errorf("step %s: %v", s.Name, err)
		}
	}
	if hdr, _ := filepath.Glob(filepath.Join(stepDir, "latency-*.hdr")); len(hdr) == 0 {
		t.Errorf("step %s: no latency histogram", s.Name)
	}
	var detail results.FioPoint
	if s.Fio == nil {
		t.Fatalf("step %s has no fio detail", s.Name)
	}
	stored, _ := json.Marshal(s.Fio)
	if err := json.Unmarshal(stored, &detail); err != nil {
		t.Fatalf("step %s detail: %v", s.Name, err)
	}
	if detail.Engine != "io_uring" || !detail.Direct {
		t.Errorf("step %s: engine %s direct %v, want io_uring with O_DIRECT on this host", s.Name, detail.Engine, detail.Direct)
	}
	out, err := readOutput(filepath.Join(stepDir, OutputFileName))
	if err != nil {
		t.Fatal(err)
	}
	g := out.Groups[0]
	again := results.FioPoint{FioPlan: detail.FioPlan, FioDirections: g.FioDirections, UsrCPU: g.UsrCPU, SysCPU: g.SysCPU,
		ElapsedS: g.ElapsedS, Steady: g.SteadyState, Seconds: detail.Seconds, IOPSStdev: detail.IOPSStdev}
	if a, b := fmt.Sprint(figures(again)), fmt.Sprint(s.Figures); a != b {
		t.Errorf("step %s: stored figures are not fio's:\nstored %s\nfio    %s", s.Name, b, a)
	}
	if iops, _ := s.Figure(results.FigureIOPS); iops <= 0 {
		t.Errorf("step %s: %v IOPS", s.Name, iops)
	}
	for _, name := range []results.FigureName{results.FigureMBPerSec, results.FigureLatMeanUS, results.FigureLatP99US, results.FigureLatP999US} {
		if _, ok := s.Figure(name); !ok {
			t.Errorf("step %s: no %s figure", s.Name, name)
		}
	}
	// The latency histograms fio logged each second are kept, compressed.
	if gz, _ := filepath.Glob(filepath.Join(stepDir, "*_clat_hist.*.log.gz")); len(gz) == 0 {
		t.Errorf("step %s: no compressed histogram logs", s.Name)
	}
	if raw, _ := filepath.Glob(filepath.Join(stepDir, "*_clat_hist.*.log")); len(raw) > 0 {
		t.Errorf("step %s: histogram logs left uncompressed: %v", s.Name, raw)
	}
}

// checkPerSecond re-reads a step's per-second rows: each second's p99 lies
// within the fastest and the slowest I/O of the whole point (up to fio's
// bin width, under 1 %), and the step's IOPS standard deviation is that of
// its rows.
func checkPerSecond(t *testing.T, l *results.Loaded, s results.Step) {
	t.Helper()
	iopsCol, p99Col := l.Series.Column("fio_iops"), l.Series.Column("fio_lat_p99_us")
	if p99Col < 0 {
		t.Fatalf("series.csv has no fio_lat_p99_us: %v", l.Series.Columns)
	}
	var secs []fioformat.Second
	var rows []results.LoadedRow
	for _, r := range l.Series.Rows {
		if r.Step == s.Name {
			rows = append(rows, r)
			secs = append(secs, fioformat.Second{ReadIOPS: r.Values[iopsCol]})
		}
	}
	for i, r := range rows {
		p99, c := r.Values[p99Col], s.Fio.Total.Completion
		// fio does not write the histogram of a job's last, unfinished
		// window, so the point's last second may have no p99 (an empty
		// cell), never a partial one; every other second has one.
		if math.IsNaN(p99) && i == len(rows)-1 && i > 0 {
			continue
		}
		if !(p99 >= c.MinUS*0.99 && p99 <= c.MaxUS*1.01) {
			t.Errorf("step %s at %.0f s (second %d of %d): p99 %v µs outside the point's %v to %v µs", s.Name, r.ElapsedS, i+1, len(rows), p99, c.MinUS, c.MaxUS)
		}
	}
	sd, ok := s.Figure(results.FigureIOPSStdev)
	if len(secs) < 2 {
		if ok {
			t.Errorf("step %s: an IOPS spread over %d second(s)", s.Name, len(secs))
		}
		return
	}
	if want := fioformat.IOPSStdev(secs); !ok || math.Abs(sd-want) > 1e-5*want+1e-9 || s.Fio.IOPSStdev != sd {
		t.Errorf("step %s: IOPS stdev %v (figure %v, detail %v), want %v from its %d seconds", s.Name, sd, ok, s.Fio.IOPSStdev, want, len(secs))
	}
}

// seriesSteps counts series.csv rows per step name, and checks the fio
// columns are there when any second was logged: a run of one-second points
// may log none (fio may leave out a point's last second), and series.csv is
// then not written at all.
func seriesSteps(t *testing.T, l *results.Loaded) map[string]int {
	t.Helper()
	if len(l.Series.Rows) == 0 {
		if len(l.Series.Columns) != 0 {
			t.Errorf("series.csv has columns %v and no row", l.Series.Columns)
		}
		return map[string]int{}
	}
	for _, c := range []string{"fio_iops", "fio_mb_s", "fio_lat_mean_us"} {
		if l.Series.Column(c) < 0 {
			t.Errorf("series.csv has no %s column: %v", c, l.Series.Columns)
		}
	}
	n := map[string]int{}
	col := l.Series.Column("fio_iops")
	for _, r := range l.Series.Rows {
		if r.Phase != "measure" || col < 0 || !(r.Values[col] > 0) {
			t.Errorf("series row %+v", r)
		}
		n[r.Step]++
	}
	return n
}

// TestFourCorners runs the profile on the disk and on tmpfs, one target per
// subtest so that the two run side by side, then checks that a second run
// reuses the working file.
func TestFourCorners(t *testing.T) {
	for i, fsName := range []string{"disk", "tmpfs"} {
		t.Run(fsName, func(t *testing.T) {
			t.Parallel()
			c := short(Config{Profile: "four-corners", Targets: targets(t)[i : i+1]}, time.Second)
			l, _, out := runProfile(t, c)
			if len(l.Steps) != 8 || l.Steps[0].Name != "4k-randread" || l.Steps[5].Name != "128k-write" {
				t.Errorf("steps %s ... %s", l.Steps[0].Name, l.Steps[len(l.Steps)-1].Name)
			}
			checkLogWrites(t, l, out)
			if got := l.Run.Environment.Targets[0].Storage.FSType; (got == "tmpfs") != (fsName == "tmpfs") {
				t.Errorf("target filesystem %s on the %s target", got, fsName)
			}
			rows := seriesSteps(t, l)
			for _, s := range l.Steps {
				// A one-second point logs at most one whole second (fio may leave out the last).
				if rows[s.Name] > 1 {
					t.Errorf("%s: %d per-second rows, want at most 1", s.Name, rows[s.Name])
				}
			}
			if !strings.Contains(out, "laying out the 64.0 MiB working file") {
				t.Errorf("progress does not mention the layout:\n%s", out)
			}
			// A second run of the same size reuses the working file.
			d := newDir(t, c)
			c.Profile, c.RatePcts = "curve", []float64{50}
			if _, err := Run(context.Background(), c, d, 0, execx.Real{Proc: "/proc"}, io.Discard); err != nil {
				t.Fatal(err)
			}
			if notes := strings.Join(d.Run().Notes, "\n"); !strings.Contains(notes, "reused the working file") {
				t.Errorf("second run did not reuse the working file:\n%s", notes)
			}
		})
	}
}

// checkLogWrites checks the log-write points a four-corners run ends with:
// fio opened the file with O_DSYNC (its own account of the job's options),
// one write in flight from one job, and the p50 and p99 a commit's cost is
// read by, in the figures, on the terminal and in run.json's notes.
func checkLogWrites(t *testing.T, l *results.Loaded, out string) {
	t.Helper()
	var seen []string
	for _, s := range l.Steps {
		if s.Fio == nil || !s.Fio.LogWrite() {
			continue
		}
		seen = append(seen, s.Name)
		if s.Fio.RW != "write" || s.Fio.IODepth != 1 || s.Fio.Jobs != 1 || !s.Fio.WriteThrough {
			t.Errorf("%s: %s, %d job(s) × queue %d, write-through %v; want sequential writes, one at a time, O_DSYNC",
				s.Name, s.Fio.RW, s.Fio.Jobs, s.Fio.IODepth, s.Fio.WriteThrough)
		}
		raw, err := os.ReadFile(filepath.Join(l.Path, "steps", fmt.Sprintf("%02d-%s", s.Index, s.Name), OutputFileName))
		if err != nil {
			t.Fatal(err)
		}
		var report struct {
			Jobs []struct {
				Options map[string]string `json:"job options"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal(raw, &report); err != nil || len(report.Jobs) == 0 {
			t.Fatalf("%s: fio's report: %v", s.Name, err)
		}
		if o := report.Jobs[0].Options; o["sync"] != "dsync" || o["direct"] != "1" {
			t.Errorf("%s: fio ran the job with sync=%q direct=%q, want dsync and 1 (O_DSYNC and O_DIRECT, as pg_test_fsync's open_datasync)", s.Name, o["sync"], o["direct"])
		}
		for _, name := range []results.FigureName{results.FigureLatP50US, results.FigureLatP99US} {
			if v, ok := s.Figure(name); !ok || v <= 0 {
				t.Errorf("%s: %s = %v (recorded %v)", s.Name, name, v, ok)
			}
		}
		p50, _ := s.Figure(results.FigureLatP50US)
		p99, _ := s.Figure(results.FigureLatP99US)
		if p50 > p99 {
			t.Errorf("%s: p50 %v µs above p99 %v µs", s.Name, p50, p99)
		}
		line := s.Name + ": a commit's log write costs the device "
		if !strings.Contains(out, line) || !strings.Contains(strings.Join(l.Run.Notes, "\n"), line) {
			t.Errorf("no %q line on the terminal or in run.json's notes:\n%s\nnotes: %q", line, out, l.Run.Notes)
		}
	}
	if want := []string{"8k-log-write", "16k-log-write"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("log-write points %v, want %v", seen, want)
	}
}

func TestSqlioSubset(t *testing.T) {
	t.Parallel()
	c := short(Config{Profile: "sqlio", Targets: targets(t), BlockSizes: []int64{64 << 10}, IODepths: []int{8},
		RW: []string{"randread", "write"}, LatencyStat: results.StatP99}, time.Second)
	l, pts, out := runProfile(t, c)
	if len(l.Steps) != 4 {
		t.Fatalf("%d steps", len(l.Steps))
	}
	// The latency-bounded table is drawn from these points by the runner
	// (runner.TestFioConclusions); fio records every pattern on every target.
	seen := map[string]bool{}
	for _, st := range Steps(pts) {
		seen[st.Fio.Label+" "+st.Fio.Series] = true
	}
	for _, want := range []string{"disk randread", "disk write", "shm randread", "shm write"} {
		if !seen[want] {
			t.Errorf("no point of %q among %v (output:\n%s)", want, seen, out)
		}
	}
}

func TestMixDiskAndTmpfs(t *testing.T) {
	t.Parallel()
	c := short(Config{Profile: "mix", Targets: targets(t), BlockSizes: []int64{8 << 10}, ReadPct: intp(75)}, 2*time.Second)
	l, pts, _ := runProfile(t, c)
	rows := seriesSteps(t, l)
	for _, s := range l.Steps {
		r, _ := s.Figure(results.FigureReadIOPS)
		w, _ := s.Figure(results.FigureWriteIOPS)
		all, _ := s.Figure(results.FigureIOPS)
		if share := r / all; math.Abs(share-0.75) > 0.05 || math.Abs(r+w-all) > 0.01*all {
			t.Errorf("%s: reads %.0f + writes %.0f of %.0f IOPS, want 75 %% reads", s.Name, r, w, all)
		}
	}
	for _, c := range []string{"fio_read_iops", "fio_write_lat_mean_us", "fio_read_lat_p99_us", "fio_write_lat_p99_us"} {
		if l.Series.Column(c) < 0 {
			t.Errorf("series.csv lacks the per-direction column %s of a mix: %v", c, l.Series.Columns)
		}
	}
	for _, s := range l.Steps {
		checkPerSecond(t, l, s)
	}
	for _, s := range l.Steps {
		// A two-second point logs one or two whole seconds (fio may leave out the last).
		if rows[s.Name] < 1 || rows[s.Name] > 2 {
			t.Errorf("%s: %d per-second rows, want 1 or 2", s.Name, rows[s.Name])
		}
	}
	checkRerun(t, l, pts[1], 0.75)
}

// checkRerun re-runs a stored job file with fio, as a reader of the results
// would, and checks it is the same measurement: fio reads the same options,
// and the figures agree within what run-to-run noise on a shared two-core
// machine allows (a factor of three: the check is that the job is the same,
// not that the machine is quiet).
func checkRerun(t *testing.T, l *results.Loaded, p results.FioPoint, readShare float64) {
	t.Helper()
	stepDir := filepath.Join(l.Path, "steps", fmt.Sprintf("%02d-%s", p.Step, p.Name))
	stored, err := readOutput(filepath.Join(stepDir, OutputFileName))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	job, err := os.ReadFile(filepath.Join(stepDir, JobFileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, JobFileName), job, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (execx.Real{Proc: "/proc"}).Run(context.Background(), execx.Cmd{Name: "fio", Args: []string{"--output-format=json+", "--output=" + OutputFileName, JobFileName}, Dir: work}); err != nil {
		t.Fatal(err)
	}
	rerun, err := readOutput(filepath.Join(work, OutputFileName))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rerun.GlobalOptions) != fmt.Sprint(stored.GlobalOptions) || fmt.Sprint(rerun.Groups[0].Options) != fmt.Sprint(stored.Groups[0].Options) {
		t.Errorf("the re-run read other options:\nstored %v %v\nre-run %v %v", stored.GlobalOptions, stored.Groups[0].Options, rerun.GlobalOptions, rerun.Groups[0].Options)
	}
	s, r := stored.Groups[0], rerun.Groups[0]
	if (s.Read == nil) != (r.Read == nil) || (s.Write == nil) != (r.Write == nil) {
		t.Fatalf("directions differ: stored read %v write %v, re-run read %v write %v", s.Read != nil, s.Write != nil, r.Read != nil, r.Write != nil)
	}
	// The options above already prove it is the same job; the IOPS only
	// guard against a re-run that did next to nothing. A tmpfs point is
	// CPU bound, so a machine busy with other work makes it 3-4x slower
	// (27,863 against 99,045 IOPS at load 25): hence a 10x bound.
	if ratio := r.Total.IOPS / s.Total.IOPS; ratio < 1.0/10 || ratio > 10 {
		t.Errorf("re-run gave %.0f IOPS against %.0f stored", r.Total.IOPS, s.Total.IOPS)
	}
	for _, g := range []fioformat.Group{s, r} {
		if share := float64(g.Read.IOs) / float64(g.Total.IOs); math.Abs(share-readShare) > 0.05 {
			t.Errorf("read share %.2f, want %.2f", share, readShare)
		}
	}
	if logs, _ := filepath.Glob(filepath.Join(work, "*_iops.*.log")); len(logs) != 4 {
		t.Errorf("the re-run wrote %d IOPS logs, want one per job (4)", len(logs))
	}
}

func TestCurveDiskAndTmpfs(t *testing.T) {
	t.Parallel()
	c := short(Config{Profile: "curve", Targets: targets(t), RatePcts: []float64{20, 50}}, time.Second)
	l, pts, _ := runProfile(t, c)
	byName := map[string]results.FioPoint{}
	for _, p := range pts {
		byName[p.Name] = p
	}
	for _, p := range pts {
		if p.RateOf == "" {
			continue
		}
		max := byName[p.RateOf]
		want := RateFor(max.Total.IOPS, p.RatePct)
		if p.RateIOPS != want {
			t.Errorf("%s: rate %d, want %d%% of %.0f = %d", p.Name, p.RateIOPS, int(p.RatePct), max.Total.IOPS, want)
		}
		job, _ := os.ReadFile(filepath.Join(l.Path, "steps", fmt.Sprintf("%02d-%s", p.Step, p.Name), JobFileName))
		if line := "rate_iops=" + jobRate(want, p.Jobs, p.RW, 0); !strings.Contains(string(job), line+"\n") {
			t.Errorf("%s: job file lacks %s", p.Name, line)
		}
		// fio's limiter never lets a point run faster than asked. It may
		// run far slower when the disk is shared: a one-second point on
		// the real disk made 440 IOPS at a limit of 8,896 while a clean
		// CI run's database tests wrote to it. The job file above proves
		// the limit asked; below it, the point only has to have run.
		if p.Total.IOPS > float64(want)*1.05 || p.Total.IOPS <= 0 {
			t.Errorf("%s: %.0f IOPS at a limit of %d", p.Name, p.Total.IOPS, want)
		}
	}
}

func TestPreconditionDiskAndTmpfs(t *testing.T) {
	t.Parallel()
	c := short(Config{Profile: "precondition", Targets: targets(t), SteadyState: "iops_slope:20%", SteadyWindow: 2 * time.Second}, 4*time.Second)
	l, pts, out := runProfile(t, c)
	for _, p := range pts {
		if p.Loops > 0 {
			if p.Total.Bytes != 2*testSize {
				t.Errorf("%s wrote %d bytes, want two passes of %d", p.Name, p.Total.Bytes, testSize)
			}
			continue
		}
		if p.Steady == nil {
			t.Fatalf("%s: no steady-state verdict", p.Name)
		}
		if p.Steady.WindowS != 2 || !strings.HasPrefix(p.Steady.Criterion, "iops_slope:20") {
			t.Errorf("%s: %+v", p.Name, p.Steady)
		}
	}
	if !strings.Contains(out, "steady state (") && !strings.Contains(out, "never settled") {
		t.Errorf("no steady-state summary:\n%s", out)
	}
	if _, ok := l.Steps[1].Figure(results.FigureSteadyAttained); !ok {
		t.Errorf("no steady_attained figure")
	}
}

func TestDriveGroup(t *testing.T) {
	t.Parallel()
	c := short(Config{Profile: "mix", Targets: targets(t), Group: true, BlockSizes: []int64{4096}, Jobs: 1}, 2*time.Second)
	l, pts, _ := runProfile(t, c)
	if len(pts) != 1 || pts[0].Label != "group" || len(pts[0].Targets) != 2 {
		t.Fatalf("%+v", pts)
	}
	job, _ := os.ReadFile(filepath.Join(l.Path, "steps", "00-"+pts[0].Name, JobFileName))
	if strings.Count(string(job), "filename=") != 2 {
		t.Errorf("group job file has no section per target:\n%s", job)
	}
	// Two jobs (one per target), so fio's logs come from both.
	logs, _ := filepath.Glob(filepath.Join(l.Path, "steps", "00-"+pts[0].Name, "*_iops.*.log"))
	if len(logs) != 2 {
		t.Errorf("%d IOPS logs, want 2", len(logs))
	}
}

// progressWatch signals when a line containing a marker is written.
type progressWatch struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	seen   chan struct{}
	once   sync.Once
}

func (p *progressWatch) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf.Write(b)
	if strings.Contains(p.buf.String(), p.marker) {
		p.once.Do(func() { close(p.seen) })
	}
	return len(b), nil
}

func TestInterruptKeepsFinishedPoints(t *testing.T) {
	t.Parallel()
	requireFio(t)
	c := short(Config{Profile: "four-corners", Targets: targets(t)[1:]}, 2*time.Second)
	d := newDir(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	plan, err := NewPlan(c, BuiltinProfiles())
	if err != nil {
		t.Fatal(err)
	}
	watch := &progressWatch{marker: fmt.Sprintf("[2/%d]", len(plan.Points)), seen: make(chan struct{})}
	go func() {
		// Interrupt the second point once its fio is doing I/O.
		<-watch.seen
		waitForJobs(ctx, func() int { return fioIn(d.Path) })
		cancel()
	}()
	pts, err := Run(ctx, c, d, 3, execx.Real{Proc: "/proc"}, watch)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want one wrapping context.Canceled", err)
	}
	if len(pts) != 2 || pts[0].Status != results.StatusCompleted || pts[1].Status != results.StatusInterrupted {
		t.Fatalf("results %+v", pts)
	}
	l, err := results.Load(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Steps) != 2 || l.Steps[0].Index != 3 || l.Steps[1].Status != results.StatusInterrupted || l.Steps[1].Figures != nil {
		t.Errorf("steps %+v", l.Steps)
	}
}

// killingRunner is the real runner, except that it kills the fio of the
// point whose job runs as the n-th fio point, as an OOM killer or an
// operator would: from outside, while execx.Real.Run waits for it, so what
// Run does after a killed program (its orphaned jobs swept) is what runs.
type killingRunner struct {
	execx.Real
	n, points int
}

func (k *killingRunner) Run(ctx context.Context, c execx.Cmd) (execx.Result, error) {
	if len(c.Args) == 0 || c.Args[len(c.Args)-1] != JobFileName {
		return k.Real.Run(ctx, c)
	}
	k.points++
	if k.points != k.n {
		return k.Real.Run(ctx, c)
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return execx.Result{}, err
	}
	watch, stop := context.WithCancel(ctx)
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		// The main fio is the oldest in the directory: /proc lists by PID.
		main := func() int { return fioIn(filepath.Dir(dir)) }
		waitForJobs(watch, main)
		if pid := main(); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	res, err := k.Real.Run(ctx, c)
	stop()
	<-killed
	return res, err
}

// fioIn is the PID of a fio running in a directory below dir (a point's
// fio runs in its step directory), or 0.
func fioIn(dir string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if strings.TrimSpace(string(comm)) == "fio" && strings.HasPrefix(cwd, dir+"/") {
			return pid
		}
	}
	return 0
}

// waitForJobs waits until the fio that pid names (0: none yet) has
// started its jobs, the processes that do its I/O: the point is under way.
func waitForJobs(ctx context.Context, pid func() int) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for ctx.Err() == nil {
		if p := pid(); p != 0 && hasChild(p) {
			return
		}
		<-tick.C
	}
}

// hasChild says whether process pid has a child.
func hasChild(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	return err == nil && len(strings.TrimSpace(string(b))) > 0
}

func TestFioKilled(t *testing.T) {
	t.Parallel()
	requireFio(t)
	c := short(Config{Profile: "four-corners", Targets: targets(t)[1:]}, time.Second)
	d := newDir(t, c)
	pts, err := Run(context.Background(), c, d, 0, &killingRunner{Real: execx.Real{Proc: "/proc"}, n: 2}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "fio was killed by signal 9 (killed) during point 4k-randwrite; the points before it are kept") {
		t.Fatalf("error %v", err)
	}
	if len(pts) != 2 || pts[0].Status != results.StatusCompleted || pts[1].Status != results.StatusFailed {
		t.Errorf("results %+v", pts)
	}
	l, _ := results.Load(d.Path)
	if len(l.Steps) != 2 || l.Steps[1].Status != results.StatusFailed || !strings.Contains(l.Steps[1].Error, "killed") {
		t.Errorf("steps %+v", l.Steps)
	}
	// fio's jobs, orphaned by the kill, each in a session of their own, are
	// swept once it has ended: they go as soon as the SIGKILL lands.
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for pid := fioIn(d.Path); pid != 0; pid = fioIn(d.Path) {
		select {
		case <-deadline:
			t.Fatalf("fio process %d outlived the killed point", pid)
		case <-tick.C:
		}
	}
}

func TestFioMissing(t *testing.T) {
	c := short(Config{Profile: "four-corners", Targets: []string{t.TempDir()}}, time.Second)
	d := newDir(t, c)
	_, err := Run(context.Background(), c, d, 0, &execx.Fake{}, io.Discard)
	if !errors.Is(err, ErrFioMissing) || !strings.Contains(err.Error(), "apt-get install -y fio") {
		t.Errorf("error %v", err)
	}
}

func TestNoSpaceForTheWorkingFile(t *testing.T) {
	requireFio(t)
	c := short(Config{Profile: "four-corners", Targets: []string{t.TempDir()}}, time.Second)
	c.Size = 1 << 50
	d := newDir(t, c)
	_, err := Run(context.Background(), c, d, 0, execx.Real{Proc: "/proc"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "free but the fio working file needs 1.0 PiB") || !strings.Contains(err.Error(), "--size") {
		t.Errorf("error %v", err)
	}
}

// fakeFio answers the probe runs: fail says why an engine/direct pair is refused.
func fakeFio(fail func(engine string, direct bool) string) *execx.Fake {
	return &execx.Fake{
		Paths: map[string]string{"fio": "/usr/bin/fio"},
		Respond: func(c execx.Cmd) (execx.Result, error) {
			args := strings.Join(c.Args, " ")
			engine := strings.TrimPrefix(strings.Fields(args[strings.Index(args, "--ioengine="):])[0], "--ioengine=")
			direct := strings.Contains(args, "--direct=1")
			if why := fail(engine, direct); why != "" {
				return execx.Result{Stderr: []byte(why + "\n")}, &execx.ExitError{Cmd: c.String(), ExitCode: 1, Stderr: why}
			}
			return execx.Result{Stdout: []byte(`{"fio version":"fio-3.33","jobs":[{"jobname":"probe","error":0,"read":{"total_ios":256,"io_bytes":1048576}}]}`)}, nil
		},
	}
}

func TestProbeFallbacks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		engine   string
		fail     func(string, bool) string
		want     string
		direct   bool
		warnings []string
		err      string
	}{
		{"io_uring with O_DIRECT", "", func(string, bool) string { return "" }, "io_uring", true, nil, ""},
		{"no io_uring: libaio, said", "", func(e string, _ bool) string {
			if e == "io_uring" {
				return "fio: engine io_uring not loadable"
			}
			return ""
		}, "libaio", true, []string{"ioengine io_uring is not usable here (fio: engine io_uring not loadable); using libaio instead"}, ""},
		{"an unknown asked engine falls back", "spdk", func(e string, _ bool) string {
			if e == "spdk" {
				return "fio: engine spdk not loadable"
			}
			return ""
		}, "io_uring", true, []string{"ioengine spdk is not usable here (fio: engine spdk not loadable); using io_uring instead"}, ""},
		{"O_DIRECT refused: buffered, said", "", func(_ string, d bool) string {
			if d {
				return "fio: looks like your file system does not support direct=1/buffered=0"
			}
			return ""
		}, "io_uring", false, []string{"/x (ramfs) refuses O_DIRECT (fio: looks like your file system does not support direct=1/buffered=0): buffered I/O, so figures include page-cache effects"}, ""},
		{"nothing works", "", func(string, bool) string { return "fio: Permission denied" }, "", false, nil, "fio cannot do I/O in /x with any engine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &runner{plan: Plan{Config: Config{Engine: tc.engine}}, exec: fakeFio(tc.fail), fioPath: "/usr/bin/fio"}
			var warnings []string
			engine, direct, err := r.probe(context.Background(), &here{r: r}, "/x", "ramfs", func(w string) { warnings = append(warnings, w) })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || engine != tc.want || direct != tc.direct || fmt.Sprint(warnings) != fmt.Sprint(tc.warnings) {
				t.Errorf("got %s direct=%v %q %v\nwant %s direct=%v %q", engine, direct, warnings, err, tc.want, tc.direct, tc.warnings)
			}
		})
	}
}

// While the working file is laid out, a meter says how far it got; while
// a point runs, the live line shows fio's figures of its last second (IOPS, MB/s, mean and p99 once fio times completions), within an
// 80-column terminal, and the step keeps fio's final report alone.
func TestTheLiveLineShowsFiosFigures(t *testing.T) {
	t.Parallel()
	var screen bytes.Buffer
	c := short(Config{Profile: "mix", Targets: targets(t)[:1], BlockSizes: []int64{4 << 10}, IODepths: []int{4}, ReadPct: intp(70)}, 3*time.Second)
	c.Ramp, c.Live = durp(time.Second), progress.NewTerminal(&screen, 80)
	l, pts, _ := runProfile(t, c)
	drawn := screen.String()
	if !regexp.MustCompile(`\[measure\] .*IOPS [0-9,]+  MB/s [0-9.]+  mean [0-9.]+[µm]?s  p99 [0-9.]+[µm]?s`).MatchString(drawn) {
		t.Errorf("the live line never showed fio's figures:\n%q", drawn)
	}
	// The layout's meter ends at its last report, fio's final one.
	if !strings.Contains(drawn, "\rlaying out: 100% (67 of 67 MB), ") {
		t.Errorf("the layout's meter was not drawn:\n%q", drawn)
	}
	for _, seg := range strings.Split(drawn, "\r") {
		if n := utf8.RuneCountInString(seg); n > 79 {
			t.Errorf("a line of %d columns on an 80-column terminal: %q", n, seg)
		}
	}
	for _, p := range pts {
		report, err := os.ReadFile(filepath.Join(l.Path, "steps", fmt.Sprintf("%02d-%s", p.Step, p.Name), OutputFileName))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(report), `"fio version"`); n != 1 {
			t.Errorf("%s: %s holds %d reports, want fio's final one", p.Name, OutputFileName, n)
		}
	}
}
