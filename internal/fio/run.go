package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/execx"
	"dbio/internal/fioformat"
	"dbio/internal/fleet"
	"dbio/internal/metrics"
	"dbio/internal/progress"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/units"
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
func RunPlan(ctx context.Context, plan Plan, sink Sink, firstStep int, exec execx.Runner, progress io.Writer) ([]results.FioPoint, error) {
	if progress == nil {
		progress = io.Discard
	}
	r := &runner{plan: plan, sink: sink, exec: exec, out: progress, now: plan.Config.Now, places: map[string]*placement{}}
	if r.now == nil {
		r.now = time.Now
	}
	if plan.Config.Fleet() {
		return r.runFleet(ctx, firstStep)
	}
	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	var done []results.FioPoint
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

type runner struct {
	plan    Plan
	sink    Sink
	exec    execx.Runner
	out     io.Writer
	now     func() time.Time
	fioPath string
	places  map[string]*placement
}

func (r *runner) say(format string, a ...any) { fmt.Fprintf(r.out, format+"\n", a...) }

// live draws a status line every second while point n runs: its phase
// (warm-up or measuring), elapsed time and what is left of it and of the
// plan, so that a long point is not silent. It returns the function that
// stops and clears it.
func (r *runner) live(n int, pt results.FioPlan) (stop func()) {
	line := r.plan.Config.Live
	if line == nil {
		return func() {}
	}
	ramp, run := time.Duration(pt.RampS)*time.Second, time.Duration(pt.RuntimeS)*time.Second
	var later time.Duration
	for _, p := range r.plan.Points[n+1:] {
		later += time.Duration(p.RampS+p.RuntimeS) * time.Second
	}
	start := r.now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			elapsed := r.now().Sub(start)
			phase := "measure"
			if elapsed < ramp {
				phase = "warm-up"
			}
			left := max(ramp+run-elapsed, 0)
			line.Update(progress.Status{Step: n + 1, Steps: len(r.plan.Points), Name: pt.Name, Phase: phase,
				Elapsed: elapsed, Remaining: left, RunRemaining: left + later}, r.now())
		}
	}()
	return func() {
		close(done)
		<-finished
		line.Clear()
	}
}

// Check finds fio, or says how to install it.
func Check(exec execx.Runner) (string, error) {
	path, err := exec.LookPath("fio")
	if err != nil {
		return "", fmt.Errorf("%w: install it with '%s' (Debian/Ubuntu) and run again", ErrFioMissing, InstallHint)
	}
	return path, nil
}

// prepare finds fio, and on each target probes the engine, sizes and lays
// out the working file, recording all of it in run.json.
func (r *runner) prepare(ctx context.Context) error {
	path, err := Check(r.exec)
	if err != nil {
		return err
	}
	r.fioPath = path
	res, err := r.exec.Run(ctx, execx.Cmd{Name: path, Args: []string{"--version"}})
	if err != nil {
		return fmt.Errorf("fio --version: %w", err)
	}
	version := strings.TrimSpace(string(res.Stdout))
	if err := r.sink.UpdateRun(func(run *results.Run) {
		if run.Environment.Versions == nil {
			run.Environment.Versions = map[string]string{}
		}
		run.Environment.Versions["fio"] = version
	}); err != nil {
		return err
	}
	labels := TargetLabels(r.plan.Config.Targets)
	for i, t := range r.plan.Config.Targets {
		pl, err := r.prepareTarget(ctx, t, labels[i])
		if err != nil {
			return err
		}
		r.places[t] = pl
	}
	return nil
}

func (r *runner) prepareTarget(ctx context.Context, path, label string) (*placement, error) {
	t, err := target.Open(path)
	if err != nil {
		return nil, err
	}
	info := results.TargetInfo{Role: target.RoleData, Path: t.Path}
	var warnings, notes []string
	if st, err := t.Storage(r.plan.Config.SysFS); err == nil {
		info.Storage = st
	} else {
		warnings = append(warnings, fmt.Sprintf("target %s: storage not resolved: %v", t.Path, err))
	}
	work, err := t.Sub(WorkSubdir)
	if err != nil {
		return nil, err
	}
	pl := &placement{Label: label, File: filepath.Join(work, workFile)}
	// fio opens its files by name: a link planted in the place of one would
	// send its writes somewhere else.
	for _, f := range []string{pl.File, pl.File + ".partial", filepath.Join(work, probeFile)} {
		if err := target.CheckFile(f); err != nil {
			return nil, err
		}
	}
	engine, direct, warns, err := r.probe(ctx, work, info.Storage.FSType, r.tryEngine)
	os.Remove(filepath.Join(work, probeFile))
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Path, err)
	}
	pl.Engine, pl.Direct = engine, direct
	warnings = append(warnings, warns...)

	existing := int64(-1)
	if fi, err := os.Lstat(pl.File); err == nil {
		existing = fi.Size()
	}
	free, err := t.FreeBytes()
	if err != nil {
		return nil, err
	}
	info.FreeBytes = free
	pl.Size = r.plan.Config.Size
	if pl.Size == 0 {
		avail := free + uint64(max(existing, 0))
		size, why, err := DefaultSize(r.plan.Config.MemoryBytes, avail, info.Storage.FSType)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.Path, err)
		}
		pl.Size = size
		notes = append(notes, fmt.Sprintf("%s: %s", t.Path, why))
	}
	if existing == pl.Size && !fullyAllocated(pl.File, pl.Size) {
		// A purge whose fill did not finish left holes, which read as zeros
		// without touching the device: lay the file out again.
		notes = append(notes, fmt.Sprintf("%s: the working file %s had unallocated blocks (a purge not followed by its fill): laid out again", t.Path, pl.File))
		existing = -1
		held := allocatedAt(pl.File)
		if err := os.Remove(pl.File); err != nil {
			return nil, fmt.Errorf("target %s: replace working file: %w", t.Path, err)
		}
		free += uint64(held)
	}
	if existing == pl.Size {
		notes = append(notes, fmt.Sprintf("%s: reused the working file %s (%s) laid out by an earlier run", t.Path, pl.File, units.FormatBytes(uint64(pl.Size))))
	} else {
		if existing >= 0 {
			// Our own file of another size: replaced, never grown in place,
			// so that no part of it is a sparse hole.
			if err := os.Remove(pl.File); err != nil {
				return nil, fmt.Errorf("target %s: replace working file: %w", t.Path, err)
			}
			free += uint64(existing)
		}
		if uint64(pl.Size) > free {
			return nil, fmt.Errorf("target %s has %s free but the fio working file needs %s: free some space, choose another target, or pass a smaller --size",
				t.Path, units.FormatBytes(free), units.FormatBytes(uint64(pl.Size)))
		}
		note, err := r.layout(ctx, pl)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.Path, err)
		}
		notes = append(notes, fmt.Sprintf("%s: %s", t.Path, note))
	}
	if _, ok := r.plan.Profile.(purger); ok {
		note, err := purgeWorkFile(pl.File, pl.Size)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.Path, err)
		}
		r.say("%s", note)
		notes = append(notes, fmt.Sprintf("%s: %s", t.Path, note))
	}
	err = r.sink.UpdateRun(func(run *results.Run) {
		run.Environment.Targets = append(run.Environment.Targets, info)
		run.Warnings = append(run.Warnings, warnings...)
		run.Notes = append(run.Notes, notes...)
	})
	for _, w := range warnings {
		r.say("warning: %s", w)
	}
	return pl, err
}

// WorkSubdir is fio's directory in dbio's directory on a target; workFile
// is the working file in it.
const (
	WorkSubdir = "fio"
	workFile   = "work.dat"
)

// probeFile is the small file the engine probe reads in dbio's fio directory.
const probeFile = "probe.dat"

// probe finds an engine and O_DIRECT setting fio can use in dir: the asked
// engine (io_uring by default), then libaio, then psync; with O_DIRECT if
// the filesystem takes it, else buffered. Every fallback is a warning.
// try runs the probe on the target's machine.
func (r *runner) probe(ctx context.Context, dir, fsType string, try func(ctx context.Context, file, engine string, direct bool) (string, error)) (engine string, direct bool, warnings []string, err error) {
	want := r.plan.Config.Engine
	if want == "" {
		want = "io_uring"
	}
	candidates := []string{want}
	for _, e := range []string{"io_uring", "libaio", "psync"} {
		if e != want {
			candidates = append(candidates, e)
		}
	}
	file := filepath.Join(dir, probeFile)
	failures := map[string]string{}
	for _, d := range []bool{true, false} {
		for _, e := range candidates {
			why, err := try(ctx, file, e, d)
			if err != nil {
				return "", false, nil, err
			}
			if why != "" {
				failures[fmt.Sprintf("%s/direct=%d", e, boolInt(d))] = why
				continue
			}
			if e != want {
				warnings = append(warnings, fmt.Sprintf("ioengine %s is not usable here (fio: %s); using %s instead",
					want, failures[fmt.Sprintf("%s/direct=%d", want, boolInt(d))], e))
			}
			if !d {
				warnings = append(warnings, fmt.Sprintf("%s (%s) refuses O_DIRECT (fio: %s): buffered I/O, so figures include page-cache effects",
					dir, fsType, failures[fmt.Sprintf("%s/direct=1", e)]))
			}
			if e == "psync" {
				warnings = append(warnings, "with the psync engine each job has one I/O in flight: queue depths above 1 are not reached")
			}
			return e, d, warnings, nil
		}
	}
	var all []string
	for k, v := range failures {
		all = append(all, k+": "+v)
	}
	return "", false, nil, fmt.Errorf("fio cannot do I/O in %s with any engine (%s)", dir, strings.Join(all, "; "))
}

// tryEngine runs a 1 MiB read with the engine; why is fio's complaint, empty on success.
func (r *runner) tryEngine(ctx context.Context, file, engine string, direct bool) (why string, err error) {
	args := []string{"--name=probe", "--filename=" + escapeFilename(file), "--size=1m", "--bs=4k", "--rw=read",
		"--ioengine=" + engine, fmt.Sprintf("--direct=%d", boolInt(direct)), "--output-format=json"}
	res, err := r.exec.Run(ctx, execx.Cmd{Name: r.fioPath, Args: args, Setsid: true, ParentDeathSignal: syscall.SIGTERM})
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err == nil {
		if out, perr := fioformat.Parse(bytes.NewReader(res.Stdout)); perr == nil && len(out.Groups) == 1 && out.Groups[0].Error == 0 {
			return "", nil
		}
	}
	return fioComplaint(res.Stderr, res.Stdout), nil
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

// layout writes the working file once, sequentially, under a temporary name
// renamed when complete, so that an interrupted layout is never reused.
func (r *runner) layout(ctx context.Context, pl *placement) (string, error) {
	partial := pl.File + ".partial"
	os.Remove(partial)
	r.say("laying out the %s working file %s ...", units.FormatBytes(uint64(pl.Size)), pl.File)
	args := []string{"--name=layout", "--filename=" + escapeFilename(partial), fmt.Sprintf("--size=%d", pl.Size), "--rw=write", "--bs=1m",
		"--iodepth=8", "--ioengine=" + pl.Engine, fmt.Sprintf("--direct=%d", boolInt(pl.Direct)), "--end_fsync=1", "--output-format=json"}
	start := r.now()
	res, err := r.exec.Run(ctx, execx.Cmd{Name: r.fioPath, Args: args, Setsid: true, ParentDeathSignal: syscall.SIGTERM})
	took := r.now().Sub(start)
	if err != nil {
		os.Remove(partial)
		if ctx.Err() != nil {
			return "", fmt.Errorf("laying out the working file: %w", ctx.Err())
		}
		return "", fmt.Errorf("laying out the working file %s: %w", partial, err)
	}
	fi, err := os.Stat(partial)
	if err != nil || fi.Size() != pl.Size {
		os.Remove(partial)
		return "", fmt.Errorf("laying out the working file %s: fio left %v bytes, want %d (fio said: %s)", partial, sizeOf(fi), pl.Size, fioComplaint(res.Stderr, res.Stdout))
	}
	if err := os.Rename(partial, pl.File); err != nil {
		return "", fmt.Errorf("working file: %w", err)
	}
	rate := float64(pl.Size) / took.Seconds() / 1e6
	r.say("  done in %.1f s (%.0f MB/s)", took.Seconds(), rate)
	return fmt.Sprintf("laid out the working file %s (%s) in %.1f s (%.0f MB/s, 1m sequential writes)", pl.File, units.FormatBytes(uint64(pl.Size)), took.Seconds(), rate), nil
}

func sizeOf(fi os.FileInfo) int64 {
	if fi == nil {
		return 0
	}
	return fi.Size()
}

// point runs one planned point as step index.
func (r *runner) point(ctx context.Context, index, n int, pt results.FioPlan, done []results.FioPoint) (results.FioPoint, error) {
	res := results.FioPoint{Step: index, FioPlan: pt, Profile: r.plan.Profile.Name(), JobFile: JobFileName, Output: OutputFileName}
	places := make([]placement, 0, len(pt.Targets))
	for _, t := range pt.Targets {
		places = append(places, *r.places[t])
	}
	res.Engine, res.Direct = places[0].Engine, places[0].Direct && !pt.Buffered
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
	job, err := JobFile(pt, r.plan.Profile.Name(), places)
	if err == nil {
		err = results.WriteFileAtomic(filepath.Join(stepDir, JobFileName), []byte(job))
	}
	if err != nil {
		return fail(results.StatusFailed, err)
	}
	r.say("[%d/%d] %s: %s", n+1, len(r.plan.Points), pt.Name, Describe(pt))
	res.Started = r.now()
	stopLive := r.live(n, pt)
	_, runErr := r.exec.Run(ctx, execx.Cmd{Name: r.fioPath, Args: []string{"--output-format=json+", "--output=" + OutputFileName, JobFileName},
		Dir: stepDir, Setsid: true, ParentDeathSignal: syscall.SIGTERM})
	stopLive()
	res.Ended = r.now()
	out, parseErr := readOutput(filepath.Join(stepDir, OutputFileName))
	if out != nil {
		res.FioNotes = out.Notes
	}
	switch {
	case ctx.Err() != nil:
		return fail(results.StatusInterrupted, &stopped{err: ctx.Err(), msg: fmt.Sprintf("point %s was interrupted after %.0f s (fio's partial report is in %s, not counted)",
			pt.Name, res.Ended.Sub(res.Started).Seconds(), filepath.Join(stepDir, OutputFileName))})
	case runErr != nil:
		return fail(results.StatusFailed, explainFioFailure(pt.Name, runErr))
	case parseErr != nil:
		return fail(results.StatusFailed, fmt.Errorf("point %s: %w", pt.Name, parseErr))
	case len(out.Groups) != 1:
		return fail(results.StatusFailed, fmt.Errorf("point %s: fio reported %d groups, want 1", pt.Name, len(out.Groups)))
	}
	g := out.Groups[0]
	if g.Error != 0 {
		return fail(results.StatusFailed, fmt.Errorf("point %s: fio reported error %d (%s)", pt.Name, g.Error, syscall.Errno(g.Error)))
	}
	if g.Total == nil {
		return fail(results.StatusFailed, fmt.Errorf("point %s: fio did no I/O", pt.Name))
	}
	res.FioDirections = g.FioDirections
	res.UsrCPU, res.SysCPU, res.ElapsedS = g.UsrCPU, g.SysCPU, g.ElapsedS
	res.Steady = g.SteadyState
	if err := r.series(stepDir, &res); err != nil {
		return fail(results.StatusFailed, err)
	}
	res.Status = results.StatusCompleted
	if j, ok := r.plan.Profile.(rounder); ok && pt.Round > 0 {
		res.Rounds = j.judge(r.plan.Config, done, res)
	}
	if err := r.writeStep(res, histograms(g.FioDirections)); err != nil {
		return res, err
	}
	r.say("  %s", headline(res))
	if v := res.Rounds; v != nil {
		r.say("  %s", roundVerdict(res))
	}
	return res, nil
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

// series merges the point's per-second logs into series.csv.
func (r *runner) series(stepDir string, res *results.FioPoint) error {
	logs, err := fioformat.ReadLogs(stepDir)
	if err != nil {
		return fmt.Errorf("point %s: per-second logs: %w", res.Name, err)
	}
	secs, dropped := fioformat.MergeSeconds(logs)
	res.Seconds, res.SecondsDropped = len(secs), dropped
	res.IOPSStdev = fioformat.IOPSStdev(secs)
	if err := fioformat.CompressHistLogs(stepDir); err != nil {
		return fmt.Errorf("point %s: %w", res.Name, err)
	}
	mixed := Mixed(res.RW)
	for _, s := range secs {
		vals := []results.Sample{
			{Name: "fio_iops", Value: s.IOPS()},
			{Name: "fio_mb_s", Value: s.MBPerSec},
			{Name: "fio_lat_mean_us", Value: s.LatMeanUS},
			{Name: "fio_lat_p99_us", Value: s.LatP99US},
		}
		if mixed {
			vals = append(vals,
				results.Sample{Name: "fio_read_iops", Value: s.ReadIOPS},
				results.Sample{Name: "fio_write_iops", Value: s.WriteIOPS},
				results.Sample{Name: "fio_read_lat_mean_us", Value: s.ReadLatMeanUS},
				results.Sample{Name: "fio_write_lat_mean_us", Value: s.WriteLatMeanUS},
				results.Sample{Name: "fio_read_lat_p99_us", Value: s.ReadLatP99US},
				results.Sample{Name: "fio_write_lat_p99_us", Value: s.WriteLatP99US})
		}
		if err := r.sink.AppendSeries(results.SeriesRow{Time: s.Time, Step: res.Name, Phase: "measure", Values: vals}); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) writeStep(res results.FioPoint, hists map[string]*hdrhistogram.Histogram) error {
	detail := res
	step := results.Step{Index: res.Step, Name: res.Name, Kind: results.KindFio, Started: res.Started, Ended: res.Ended,
		RampUpS: float64(res.RampS), Status: res.Status, Error: res.Error, Figures: figures(res), Fio: &detail}
	if res.Total != nil {
		step.MeasureS = float64(res.Total.RuntimeMS) / 1000
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
	if werr := r.writeStep(res, nil); werr != nil {
		err = errors.Join(err, werr)
	}
	r.say("  %s: %v", status, err)
	return res, err
}
