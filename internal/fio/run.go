package fio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/execx"
	"dbio/internal/fioformat"
	"dbio/internal/fleet"
	"dbio/internal/metrics"
	"dbio/internal/progress"
	"dbio/internal/results"
)

// ErrFioMissing is returned when fio is not installed.
var ErrFioMissing = errors.New("fio is not installed")

// InstallHint is the command that installs the fio dbio is tested with.
const InstallHint = "apt-get install -y fio"

// Files a point leaves in its step directory.
const (
	JobFileName    = "job.fio"
	OutputFileName = "fio.json"
)

// figures are the step's headline numbers, all read from fio's report,
// in their catalogue units.
func figures(r results.FioPoint) []results.Figure {
	if r.Total == nil {
		return nil
	}
	t := r.Total
	figs := []results.Figure{results.FigureIOPS.With(t.IOPS)}
	if Mixed(r.RW) {
		if r.Read != nil {
			figs = append(figs, results.FigureReadIOPS.With(r.Read.IOPS))
		}
		if r.Write != nil {
			figs = append(figs, results.FigureWriteIOPS.With(r.Write.IOPS))
		}
	}
	figs = append(figs, results.FigureMBPerSec.With(t.MBPerSec()), results.FigureLatMeanUS.With(t.Completion.MeanUS))
	for _, p := range []struct {
		name results.FigureName
		p    float64
	}{{results.FigureLatP50US, 50}, {results.FigureLatP95US, 95}, {results.FigureLatP99US, 99}, {results.FigureLatP999US, 99.9}} {
		if v, ok := t.Completion.At(p.p); ok {
			figs = append(figs, p.name.With(v))
		}
	}
	figs = append(figs, results.FigureLatMaxUS.With(t.Completion.MaxUS), results.FigureFioUsrCPU.With(r.UsrCPU), results.FigureFioSysCPU.With(r.SysCPU))
	if r.Seconds > 1 {
		figs = append(figs, results.FigureIOPSStdev.With(results.Round6(r.IOPSStdev)))
	}
	if r.RateIOPS > 0 {
		figs = append(figs, results.FigureRateTargetIOPS.With(float64(r.RateIOPS)))
	}
	if ss := r.Steady; ss != nil {
		attained := 0.0
		if ss.Attained {
			attained = 1
		}
		figs = append(figs, results.FigureSteadyAttained.With(attained), results.FigureSteadyElapsedS.With(float64(r.ElapsedS)),
			results.FigureSteadyWindow.With(ss.WindowIOPSMean))
	}
	return figs
}

// PointFigureNames name the figures a point's step may record, in the
// order figures writes them.
func PointFigureNames() []results.FigureName {
	return []results.FigureName{results.FigureIOPS, results.FigureReadIOPS, results.FigureWriteIOPS, results.FigureMBPerSec,
		results.FigureLatMeanUS, results.FigureLatP50US, results.FigureLatP95US, results.FigureLatP99US, results.FigureLatP999US,
		results.FigureLatMaxUS, results.FigureFioUsrCPU, results.FigureFioSysCPU, results.FigureIOPSStdev, results.FigureRateTargetIOPS,
		results.FigureSteadyAttained, results.FigureSteadyElapsedS, results.FigureSteadyWindow}
}

// Sink is where a run records its points: a results directory that its
// caller created and will finish (*results.Dir). fio writes into it and
// never owns it, so that a fio pass can be a phase of any run.
type Sink interface {
	// UpdateRun changes run.json: fio adds its version, targets, notes and warnings.
	UpdateRun(change func(*results.Run)) error
	// StepDir makes the directory of step index, where fio runs the point.
	StepDir(index int, name string) (string, error)
	WriteStep(s results.Step, hists map[string]*hdrhistogram.Histogram) error
	AppendSeries(row results.SeriesRow) error
}

// Run runs the configured profile on its targets and records every point in
// sink as steps firstStep, firstStep+1, ... runner.FioPhase calls it for
// `dbio disk`, a suite's disk runs and the short device pass of `dbio quick`.
//
// For each point it saves the job file (job.fio), fio's json+ report
// (fio.json), fio's per-second logs and latency histograms in the step
// directory, writes summary.json with fio's figures, and appends the
// per-second IOPS, MB/s and latency to series.csv (columns fio_*). It adds
// the fio version, the targets, engine fallbacks and the working files to
// run.json, but leaves finishing run.json to the caller.
//
// It stops at the first point that fails (fio killed, an I/O error) or when
// ctx is cancelled; finished points stay recorded, the unfinished one is a
// step with status failed or interrupted, and the returned results include
// it. A cancelled run returns an error wrapping ctx.Err().
func Run(ctx context.Context, c Config, sink Sink, firstStep int, exec execx.Runner, progress io.Writer) ([]results.FioPoint, error) {
	plan, err := NewPlan(c, BuiltinProfiles())
	if err != nil {
		return nil, err
	}
	return RunPlan(ctx, plan, sink, firstStep, exec, progress)
}

// RunPlan is Run for an already validated plan.
func RunPlan(ctx context.Context, plan Plan, sink Sink, firstStep int, exec execx.Runner, progress io.Writer) (done []results.FioPoint, err error) {
	if progress == nil {
		progress = io.Discard
	}
	r := &runner{plan: plan, sink: sink, exec: exec, out: progress, now: plan.Config.Now}
	if r.now == nil {
		r.now = time.Now
	}
	if r.fioPath, err = Check(r.exec); err != nil {
		return nil, err
	}
	res, err := r.exec.Run(ctx, execx.Cmd{Name: r.fioPath, Args: []string{"--version"}})
	if err != nil {
		return nil, fmt.Errorf("fio --version: %w", err)
	}
	version := strings.TrimSpace(string(res.Stdout))
	if err := r.sink.UpdateRun(func(run *results.Run) {
		if run.Environment.Versions == nil {
			run.Environment.Versions = map[string]string{}
		}
		run.Environment.Versions["fio"] = version
	}); err != nil {
		return nil, err
	}
	r.place = &thisMachine{r: r}
	if plan.Config.Fleet() {
		r.place = newHostsPlace(r)
	}
	// Whatever happens from here, the place is ended: the servers dbio
	// started are stopped before Run returns, the targets let go.
	defer func() { err = errors.Join(err, r.place.end(ctx)) }()
	if err := r.place.reach(ctx, version); err != nil {
		return nil, err
	}
	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	if plan.Config.Prepared != nil {
		if err := plan.Config.Prepared(); err != nil {
			return nil, err
		}
	}
	// settled are the series whose rounds are over (steady, or the most
	// rounds run); their later rounds are not run.
	settled := map[[2]string]bool{}
	step := firstStep
	for i, pt := range plan.Points {
		if settled[[2]string{pt.Label, pt.Series}] {
			continue
		}
		res, err := r.point(ctx, step, i, pt, done)
		step++
		done = append(done, res)
		if err != nil {
			return done, err
		}
		if res.Rounds != nil && res.Rounds.Last {
			settled[[2]string{pt.Label, pt.Series}] = true
		}
	}
	r.summarize(done)
	return done, nil
}

// runner runs a plan's points at its place, recording them in sink.
type runner struct {
	plan    Plan
	sink    Sink
	exec    execx.Runner
	out     io.Writer
	now     func() time.Time
	fioPath string
	place   place
	// measuring is the precision bound's watch of the point running, nil
	// without a bound: its step records how it ended.
	measuring *pointPrecision
}

func (r *runner) say(format string, a ...any) { fmt.Fprintf(r.out, format+"\n", a...) }

// prepare prepares every target on its site (target.go); a site the run
// goes on without is left out.
func (r *runner) prepare(ctx context.Context) error {
	labels := TargetLabels(r.plan.Config.Targets)
	for i, t := range r.plan.Config.Targets {
		// A site that leaves the run leaves the list.
		for _, s := range slices.Clone(r.place.sites()) {
			path, ok := s.paths[t]
			if !ok {
				continue
			}
			pl, err := r.prepareTarget(ctx, s, path, t, labels[i])
			if err != nil && !r.place.goesOnWithout(ctx, s, err) {
				return err
			}
			if err == nil {
				s.places = append(s.places, pl)
			}
		}
	}
	return r.place.ready(ctx)
}

// live draws a status line every second while point n runs: its phase
// (warm-up or measuring), elapsed time and what is left of it and of the
// plan, and the IOPS, MB/s, mean and p99 latency of fio's last status
// report in output (fio's report file, which fio appends a report to every
// second when asked), so that a long point is not silent. It returns the
// function that stops and clears it.
//
// With a precision bound (prec), every second fio reports after its
// warm-up is also fed to it, and interrupt is closed once the bound is
// reached: fio is then asked to stop.
func (r *runner) live(n int, pt results.FioPlan, output string, prec *pointPrecision, interrupt chan struct{}) (stop func()) {
	line := r.plan.Config.Live
	if line == nil && prec == nil {
		return func() {}
	}
	ramp, run := time.Duration(pt.RampS)*time.Second, time.Duration(pt.RuntimeS)*time.Second
	later := r.plan.Config.After
	for _, p := range r.plan.Points[n+1:] {
		later += time.Duration(p.RampS+p.RuntimeS) * time.Second
	}
	start := r.now()
	done := make(chan struct{})
	finished := make(chan struct{})
	status := &statusTail{path: output}
	if prec != nil {
		status.second = func(l fioformat.Live) {
			// fio times no completion in its warm-up: a second without
			// one is not measured yet.
			if l.HasMean && prec.add(l) {
				close(interrupt)
			}
		}
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			var last bool
			select {
			case <-done:
				// fio has ended and its reports are all written
				// (fio holds back the end of the latest until it
				// writes the next): the last second's figures are
				// drawn once, then cleared.
				last = true
			case <-tick.C:
			}
			figs := status.figures()
			if line == nil {
				if last {
					return
				}
				continue
			}
			if last && figs == nil {
				return
			}
			elapsed := r.now().Sub(start)
			phase := progress.Measure
			if elapsed < ramp {
				phase = progress.WarmUp
			}
			left := max(ramp+run-elapsed, 0)
			line.Update(progress.Status{Step: n + 1, Steps: len(r.plan.Points), Name: pt.Name, Phase: phase,
				Elapsed: elapsed, Remaining: left, RunRemaining: left + later, Figures: figs}, r.now())
			if last {
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		if line != nil {
			line.Clear()
		}
	}
}

// statusTail reads the reports fio appends to its report file every
// second, as the file grows.
type statusTail struct {
	path   string
	offset int64
	reader fioformat.StatusReader
	last   *fioformat.Output
	shown  [][2]string
	// second, when set, is given every stretch between two reports long
	// enough to stand for a second.
	second func(fioformat.Live)
}

// liveMinSeconds is the shortest stretch whose figures replace those
// shown: the report fio writes as it ends covers a few milliseconds.
const liveMinSeconds = 0.5

// figures reads what fio appended since the last call and returns the
// figures of its latest report's second, or the last shown when there is
// no new one.
func (t *statusTail) figures() [][2]string {
	f, err := os.Open(t.path)
	if err != nil {
		return t.shown
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		n, err := f.ReadAt(buf, t.offset)
		t.offset += int64(n)
		for _, rep := range t.reader.Add(buf[:n]) {
			if l, ok := fioformat.Between(t.last, rep); ok && l.Seconds >= liveMinSeconds {
				t.shown = liveFigures(l)
				if t.second != nil {
					t.second(l)
				}
			}
			t.last = rep
		}
		if err != nil || n == 0 {
			return t.shown
		}
	}
}

// liveFigures are a status report's figures as the live line shows them.
func liveFigures(l fioformat.Live) [][2]string {
	// "930µs" rather than "930 µs": the line must fit 80 columns.
	tight := func(us float64) string { return strings.ReplaceAll(formatUS(us), " ", "") }
	figs := [][2]string{{"IOPS", groupThousands(l.IOPS)}, {"MB/s", fmt.Sprintf("%.1f", l.MBPerSec)}}
	if l.HasMean {
		figs = append(figs, [2]string{"mean", tight(l.MeanUS)})
	}
	if l.HasP99 {
		figs = append(figs, [2]string{"p99", tight(l.P99US)})
	}
	return figs
}

// Check finds fio, or says how to install it.
func Check(exec execx.Runner) (string, error) {
	path, err := exec.LookPath("fio")
	if err != nil {
		return "", fmt.Errorf("%w: install it with '%s' (Debian/Ubuntu) and run again", ErrFioMissing, InstallHint)
	}
	return path, nil
}

// fioComplaint picks fio's most telling error line.
func fioComplaint(stderr, stdout []byte) string {
	lines := splitLines(strings.TrimSpace(string(stderr)))
	for _, l := range lines {
		if strings.Contains(l, "does not support") || strings.Contains(l, "not loadable") {
			return strings.TrimPrefix(l, "fio: ")
		}
	}
	if len(lines) > 0 {
		return strings.TrimPrefix(lines[len(lines)-1], "fio: ")
	}
	if s := strings.TrimSpace(string(stdout)); s != "" && !strings.HasPrefix(s, "{") {
		return strings.SplitN(s, "\n", 2)[0]
	}
	return "failed without a message"
}

// point runs one planned point as step index, on every site still in the
// run at once: each site's job file written in its directory of the step,
// fio run through the place, each site's part of fio's report and its
// per-second logs read, and the parts added up by the place.
func (r *runner) point(ctx context.Context, index, n int, pt results.FioPlan, done []results.FioPoint) (results.FioPoint, error) {
	sites := r.place.sites()
	// The point runs on the targets of the sites still in the run.
	pt.Targets = slices.DeleteFunc(slices.Clone(pt.Targets), func(t string) bool {
		return !slices.ContainsFunc(sites, func(s *site) bool { return len(s.placements([]string{t})) > 0 })
	})
	res := results.FioPoint{Step: index, FioPlan: pt, Profile: r.plan.Profile.Name(), JobFile: JobFileName, Output: OutputFileName}
	if sites[0].host != "" {
		res.JobFile = filepath.Join(HostsDir, "*", JobFileName)
	}
	for _, s := range sites {
		if places := s.placements(pt.Targets); len(places) > 0 {
			res.Engine, res.Direct = places[0].Engine, places[0].Direct && !pt.Buffered
			break
		}
	}
	fail := func(status results.Status, err error) (results.FioPoint, error) { return r.failed(res, status, err) }
	if pt.RateOf != "" {
		rate, err := resolveRate(pt, done)
		if err != nil {
			return fail(results.StatusFailed, err)
		}
		res.RateIOPS = rate
		pt.RateIOPS = rate
	}
	stepDir, err := r.sink.StepDir(index, pt.Name)
	if err != nil {
		return res, err
	}
	for _, s := range sites {
		dir := s.dir(stepDir)
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			var job string
			if job, err = JobFile(pt, r.plan.Profile.Name(), s.placements(pt.Targets)); err == nil {
				err = results.WriteFileAtomic(filepath.Join(dir, JobFileName), []byte(job))
			}
		}
		if err != nil {
			return fail(results.StatusFailed, err)
		}
	}
	r.say("[%d/%d] %s: %s", n+1, len(r.plan.Points), pt.Name, Describe(pt))
	prec, err := newPointPrecision(r.plan.Config.Precision, time.Duration(pt.RuntimeS)*time.Second)
	if err != nil {
		return fail(results.StatusFailed, err)
	}
	r.measuring = prec
	defer func() { r.measuring = nil }()
	interrupt := make(chan struct{})
	runErr, fileErr := r.place.run(ctx, stepDir, pt, func(args []string) ([]byte, error) {
		res.Started = r.now()
		stopLive := r.live(n, pt, filepath.Join(stepDir, OutputFileName), prec, interrupt)
		out, err := r.exec.Run(ctx, execx.Cmd{Name: r.fioPath, Args: args, Dir: stepDir, Setsid: true, ParentDeathSignal: syscall.SIGTERM, Interrupt: interrupt})
		stopLive()
		res.Ended = r.now()
		return out.Stdout, err
	})
	precise := prec != nil && prec.ended == results.PrecisionReached
	out, parseErr := readOutput(filepath.Join(stepDir, OutputFileName))
	if out != nil {
		res.FioNotes = out.Notes
	}
	if ctx.Err() != nil {
		return fail(results.StatusInterrupted, &stopped{err: ctx.Err(), msg: fmt.Sprintf("point %s was interrupted after %.0f s (fio's partial report is in %s, not counted)",
			pt.Name, res.Ended.Sub(res.Started).Seconds(), filepath.Join(stepDir, OutputFileName))})
	}
	gone, err := r.place.lost(ctx, pt, out, res.Ended)
	if err != nil {
		return fail(results.StatusFailed, err)
	}
	if len(gone) > 0 {
		// fio failed, if it did, for the sites that are gone.
		runErr, parseErr = nil, nil
		if out == nil {
			parseErr = fmt.Errorf("fio's client left no report after host(s) %s failed", strings.Join(gone, ", "))
		}
		sites = r.place.sites()
	}
	if precise && parseErr == nil && runErr != nil {
		// fio ends with a failure's status when interrupted, as dbio
		// asked it to: its report, written as it stopped, is whole.
		runErr = nil
	}
	switch {
	case runErr != nil:
		return fail(results.StatusFailed, explainFioFailure(pt.Name, runErr))
	case parseErr != nil:
		return fail(results.StatusFailed, fmt.Errorf("point %s: %w", pt.Name, parseErr))
	case fileErr != nil:
		return fail(results.StatusFailed, fmt.Errorf("point %s: %w", pt.Name, fileErr))
	}
	parts := make([]part, 0, len(sites))
	for _, s := range sites {
		pa, err := r.partOf(s, pt, out, stepDir)
		if err != nil {
			return fail(results.StatusFailed, err)
		}
		parts = append(parts, pa)
	}
	lines, err := r.place.add(&res, parts)
	if err != nil {
		return fail(results.StatusFailed, err)
	}
	for _, pa := range parts {
		res.HistsWrapped += pa.wrapped
	}
	res.Status = results.StatusCompleted
	if res.Total != nil {
		prec.finish(true, time.Duration(res.Total.RuntimeMS)*time.Millisecond)
	}
	if j, ok := r.plan.Profile.(rounder); ok && pt.Round > 0 {
		res.Rounds = j.judge(r.plan.Config, done, res)
	}
	if err := r.writeStep(res, histograms(res.FioDirections)); err != nil {
		return res, err
	}
	for _, l := range lines {
		r.say("%s", l)
	}
	if v := res.Rounds; v != nil {
		r.say("  %s", roundVerdict(res))
	}
	if line := prec.said(); line != "" {
		r.say("  %s", line)
	}
	return res, nil
}

// partOf is site s's part of point pt: its one group of fio's report, and
// its per-second logs in its directory of the step (stepDir) merged into
// seconds on this machine's clock, the histogram logs compressed once
// read.
func (r *runner) partOf(s *site, pt results.FioPlan, out *fioformat.Output, stepDir string) (part, error) {
	groups := out.HostGroups(s.addr)
	if len(groups) != 1 {
		return part{}, fmt.Errorf("point %s: %s reported %d groups, want 1", pt.Name, s.fio(), len(groups))
	}
	g := groups[0]
	if g.Error != 0 {
		return part{}, fmt.Errorf("point %s: %s reported error %d (%s)", pt.Name, s.fio(), g.Error, syscall.Errno(g.Error))
	}
	if g.Total == nil {
		return part{}, fmt.Errorf("point %s: %s did no I/O", pt.Name, s.fio())
	}
	dir := s.dir(stepDir)
	logs, err := fioformat.ReadLogs(dir)
	if err != nil {
		whose := "per-second logs"
		if s.host != "" {
			whose = "host " + s.host + "'s " + whose
		}
		return part{}, fmt.Errorf("point %s: %s: %w", pt.Name, whose, err)
	}
	// The site's seconds on this machine's clock, before any window is
	// drawn: a window then pairs seconds measured at the same time.
	secs, dropped := fioformat.MergeSeconds(logs)
	secs = onThisClock(secs, s.offset)
	if err := fioformat.CompressHistLogs(dir); err != nil {
		return part{}, fmt.Errorf("point %s: %w", pt.Name, err)
	}
	wrapped := 0
	for _, j := range logs {
		wrapped += j.WrappedHists()
	}
	return part{site: s, group: g, seconds: secs, dropped: dropped, wrapped: wrapped}, nil
}

// stopped is a point cut short by cancellation: it says what happened in
// words and still matches errors.Is(err, context.Canceled).
type stopped struct {
	msg string
	err error
}

func (s *stopped) Error() string { return s.msg }
func (s *stopped) Unwrap() error { return s.err }

// resolveRate turns a point's share of an earlier maximum into an IOPS limit.
func resolveRate(p results.FioPlan, done []results.FioPoint) (int64, error) {
	for _, d := range done {
		if d.Name != p.RateOf {
			continue
		}
		if d.Status != results.StatusCompleted || d.Total == nil || d.Total.IOPS <= 0 {
			return 0, fmt.Errorf("point %s runs at %g%% of %s, which did not complete", p.Name, p.RatePct, p.RateOf)
		}
		return RateFor(d.Total.IOPS, p.RatePct), nil
	}
	return 0, fmt.Errorf("point %s runs at %g%% of %s, which has not run before it", p.Name, p.RatePct, p.RateOf)
}

func readOutput(path string) (*fioformat.Output, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("fio left no report: %w", err)
	}
	defer f.Close()
	return fioformat.Parse(f)
}

// explainFioFailure says how fio ended: killed by a signal, or failed with its message.
func explainFioFailure(point string, err error) error {
	var ee *execx.ExitError
	if errors.As(err, &ee) {
		var xe *exec.ExitError
		if errors.As(ee.Err, &xe) {
			if ws, ok := xe.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return fmt.Errorf("fio was killed by signal %d (%s) during point %s; the points before it are kept: %w", int(ws.Signal()), ws.Signal(), point, err)
			}
		}
	}
	return fmt.Errorf("fio failed during point %s: %w", point, err)
}

func (r *runner) writeStep(res results.FioPoint, hists map[string]*hdrhistogram.Histogram) error {
	detail := res
	step := results.Step{Index: res.Step, Name: res.Name, Kind: results.KindFio, Started: res.Started, Ended: res.Ended,
		RampUpS: float64(res.RampS), Status: res.Status, Error: res.Error, Figures: figures(res), Fio: &detail,
		Precision: r.measuring.record()}
	if res.Total != nil {
		step.MeasureS = float64(res.Total.RuntimeMS) / 1000
	}
	if res.HistsWrapped > 0 {
		step.Notes = append(step.Notes, fmt.Sprintf("%d interval histogram(s) left out: fio logged a bin count past 2^63, its running totals' difference wrapped, so those seconds have no latency percentile (fio's own report is unaffected)", res.HistsWrapped))
	}
	if res.SecondsDropped > 0 {
		step.Notes = append(step.Notes, fmt.Sprintf("%d second(s) left out of series.csv: fio logged them for some jobs only", res.SecondsDropped))
	}
	if res.Steady != nil {
		step.Notes = append(step.Notes, "fio's figures cover the whole point; steady_window_iops is the mean over the last steady-state window")
	}
	switch {
	case res.Status != results.StatusCompleted:
	case res.Buffered:
		step.Notes = append(step.Notes, "buffered I/O, as asked (no O_DIRECT): figures include page-cache hits")
	case !res.Direct:
		step.Notes = append(step.Notes, "buffered I/O: the target refused O_DIRECT")
	}
	if res.WriteThrough && res.Status == results.StatusCompleted {
		step.Notes = append(step.Notes, "writes with O_DSYNC (write-through): each completes once stable")
	}
	return r.sink.WriteStep(step, hists)
}

// histograms turns fio's json+ completion-latency bins into HDR histograms
// (microseconds), stored beside the step so that points can be merged and
// re-plotted like every other dbio latency. The figures stay fio's own.
func histograms(figs results.FioDirections) map[string]*hdrhistogram.Histogram {
	out := map[string]*hdrhistogram.Histogram{}
	for name, d := range map[string]*results.FioDirection{"read": figs.Read, "write": figs.Write} {
		if d == nil || len(d.Bins) == 0 {
			continue
		}
		h := metrics.NewHistogram()
		for ns, n := range d.Bins {
			us := min(max(int64(math.Round(float64(ns)/1000)), metrics.LowestMicros), metrics.HighestMicros)
			_ = h.RecordValues(us, n)
		}
		out[name] = h
	}
	return out
}

// summarize prints the profile's own conclusions and keeps them in
// run.json; what analysis draws from the points (see Steps) its caller adds.
func (r *runner) summarize(points []results.FioPoint) {
	c := r.plan.Config
	var lines []string
	if s, ok := r.plan.Profile.(Summarizer); ok {
		lines = append(lines, s.Summarize(c, points)...)
	}
	if len(lines) == 0 {
		return
	}
	for _, l := range lines {
		r.say("%s", l)
	}
	_ = r.sink.UpdateRun(func(run *results.Run) { run.Notes = append(run.Notes, lines...) })
}

// Describe says what the point asks of fio in a line: pattern, queue,
// timing, limits, and whether it runs on a drive group.
func Describe(p results.FioPlan) string {
	s := fmt.Sprintf("%s %s", p.RW, bsName(p.BS))
	if Mixed(p.RW) {
		s += fmt.Sprintf(" %d%% read", p.ReadPct)
	}
	s += fmt.Sprintf(", %d job(s) × queue %d", p.Jobs, p.IODepth)
	if p.Loops > 0 {
		s += fmt.Sprintf(", %d pass(es) over the file", p.Loops)
	} else {
		s += fmt.Sprintf(", %ds after %ds warm-up", p.RuntimeS, p.RampS)
	}
	switch {
	case p.RateIOPS > 0:
		s += fmt.Sprintf(", limited to %s IOPS (%s%% of %s)", groupThousands(float64(p.RateIOPS)), trimFloat(p.RatePct), p.RateOf)
	case p.RateOf != "":
		s += fmt.Sprintf(", limited to %s%% of the IOPS %s reaches", trimFloat(p.RatePct), p.RateOf)
	}
	if p.SteadyState != "" {
		s += fmt.Sprintf(", until steady (%s over %ds", p.SteadyState, p.SteadyWindowS)
		if p.SteadyRampS > 0 {
			s += fmt.Sprintf(" after the first %ds", p.SteadyRampS)
		}
		s += ")"
	}
	if p.Buffered {
		s += ", buffered (page cache)"
	}
	if p.WriteThrough {
		s += ", O_DSYNC writes"
	}
	if p.BlockAlign > 0 {
		s += fmt.Sprintf(", offsets aligned to %s", bsName(p.BlockAlign))
	}
	hosts := map[string]bool{}
	for _, t := range p.Targets {
		if ft, err := fleet.ParseTarget(t); err == nil && ft.Remote() {
			hosts[ft.Host] = true
		}
	}
	switch {
	case len(hosts) > 0 && len(hosts) == len(p.Targets):
		s += fmt.Sprintf(", on %d hosts at once (jobs per host)", len(hosts))
	case len(hosts) > 0:
		s += fmt.Sprintf(", on %d targets of %d hosts at once (jobs per target)", len(p.Targets), len(hosts))
	case len(p.Targets) > 1:
		s += fmt.Sprintf(", on %d targets at once (jobs per target)", len(p.Targets))
	}
	return s
}

// roundVerdict says where a series of rounds stands after this one.
func roundVerdict(r results.FioPoint) string {
	v := r.Rounds
	tests := strings.Join(v.Criteria, " and ")
	switch {
	case !v.Judged:
		return fmt.Sprintf("round %d: %d more before the first window of %d rounds is judged", r.Round, v.Window-r.Round, v.Window)
	case v.Steady:
		return fmt.Sprintf("round %d: steady (%s over rounds %d-%d, mean %s IOPS): no more rounds", r.Round, tests, r.Round-v.Window+1, r.Round, groupThousands(v.WindowIOPSMean))
	case v.Last:
		return fmt.Sprintf("round %d: not steady (%s over rounds %d-%d) after the most rounds, %d", r.Round, tests, r.Round-v.Window+1, r.Round, v.Max)
	}
	return fmt.Sprintf("round %d: not steady yet (%s over rounds %d-%d)", r.Round, tests, r.Round-v.Window+1, r.Round)
}

func headline(r results.FioPoint) string {
	t := r.Total
	s := fmt.Sprintf("%s IOPS  %.1f MB/s  mean %s  p99 %s  (fio CPU per job: usr %.0f%% sys %.0f%%)",
		groupThousands(t.IOPS), t.MBPerSec(), formatUS(t.Completion.MeanUS), p99Text(t), r.UsrCPU, r.SysCPU)
	if ss := r.Steady; ss != nil {
		if ss.Attained {
			s += fmt.Sprintf("; steady after %ds", r.ElapsedS)
		} else {
			s += fmt.Sprintf("; not steady after %ds", r.ElapsedS)
		}
	}
	return s
}

// directionLines split a point that mixed reads and writes into its reads,
// its writes and both together, as DiskSpd's tables do: IOPS, MB/s and the
// completion latency's mean, percentiles and maximum, in ms to keep the
// columns narrow. A point that did not mix has none.
func directionLines(r results.FioPoint) []string {
	if !r.Mixed() {
		return nil
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\tIOPS\tMB/s\tmean\t")
	for _, p := range results.SplitPercentiles {
		fmt.Fprintf(tw, "p%s\t", strconv.FormatFloat(p, 'f', -1, 64))
	}
	fmt.Fprint(tw, "max ms\t\n")
	for _, d := range []struct {
		name string
		d    *results.FioDirection
	}{{"read", r.Read}, {"write", r.Write}, {"total", r.Total}} {
		if d.d == nil {
			continue
		}
		c := d.d.Completion
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%s\t", d.name, groupThousands(d.d.IOPS), d.d.MBPerSec(), msText(c.MeanUS))
		for _, p := range results.SplitPercentiles {
			v, ok := c.At(p)
			if !ok {
				fmt.Fprint(tw, "-\t")
				continue
			}
			// fio reads a percentile off its histogram's bin, whose
			// value can lie past the largest latency it measured exactly.
			fmt.Fprintf(tw, "%s\t", msText(min(v, c.MaxUS)))
		}
		fmt.Fprintf(tw, "%s\t\n", msText(c.MaxUS))
	}
	_ = tw.Flush()
	var out []string
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		out = append(out, "   "+l)
	}
	return out
}

// msText writes a latency in ms with three significant figures, as the
// report does: 0.260, 3.92, 20.4, 131.
func msText(us float64) string {
	ms := us / 1000
	switch {
	case ms >= 100:
		return strconv.FormatFloat(math.Round(ms), 'f', 0, 64)
	case ms >= 10:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	case ms >= 1:
		return strconv.FormatFloat(ms, 'f', 2, 64)
	}
	return strconv.FormatFloat(ms, 'f', 3, 64)
}

// failed records point res as ended with status (failed, or interrupted)
// and err, at the time it ended or now, and says so; it returns what the
// point's run returns.
func (r *runner) failed(res results.FioPoint, status results.Status, err error) (results.FioPoint, error) {
	res.Status, res.Error = status, err.Error()
	if res.Ended.IsZero() {
		res.Ended = r.now()
	}
	if res.Started.IsZero() {
		res.Started = res.Ended
	}
	r.measuring.finish(false, max(res.Ended.Sub(res.Started)-time.Duration(res.RampS)*time.Second, 0))
	if werr := r.writeStep(res, nil); werr != nil {
		err = errors.Join(err, werr)
	}
	r.say("  %s: %v", status, err)
	return res, err
}
