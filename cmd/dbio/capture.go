package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/blocktrace"
	"dbio/internal/capture"
	"dbio/internal/execx"
	"dbio/internal/iolimit"
	"dbio/internal/replay"
	"dbio/internal/report"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/target"
	"dbio/internal/telemetry"
	"dbio/internal/units"
)

func init() { commandConstructors = append(commandConstructors, newCaptureCmd) }

func newCaptureCmd(app *App) *cobra.Command {
	var (
		devices, targets []string
		duration         time.Duration
		resultsBase      string
		name             string
		traceFS          string
	)
	cmd := &cobra.Command{
		Use:   "capture (--device DEV | --target DIR)... --duration D",
		Short: "Record a database's block I/O while its own workload runs, for replay on other storage",
		Long: `dbio capture records every block request on the devices holding a database
(data and log may be on two: repeat --device or --target) while the database's
own workload runs: when it was issued, read or write or flush, offset, size,
FUA, the issuing process, how long it took and how many were in flight. It
writes a results directory with the compressed trace (trace.dbt.gz) and its
signature (capture.json: IOPS and MB/s by direction second by second, sizes,
read/write mix, sequentiality, flushes, queue depths, latency percentiles).
'dbio replay' plays it on other storage.

Capture only reads the traced devices, through the kernel's block tracepoints
in a tracing instance of its own. It needs root.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if duration <= 0 {
				return usagef("--duration must be positive (e.g. --duration 60s)")
			}
			if len(devices)+len(targets) == 0 {
				return usagef("give the device to capture: --device /dev/sdb, or --target with a directory of the database")
			}
			if err := capture.NeedRoot(os.Geteuid()); err != nil {
				return usagef("%v", err)
			}
			var devs []blocktrace.Device
			var places []results.TargetInfo
			seen := map[string]bool{}
			add := func(path string, d blocktrace.Device, err error) error {
				if err != nil {
					return usagef("%v", err)
				}
				if !seen[d.Number()] {
					seen[d.Number()] = true
					devs = append(devs, d)
					storage, rerr := results.Storage{}, error(nil)
					if abs, aerr := filepath.Abs(path); aerr != nil {
						rerr = aerr
					} else {
						storage, rerr = app.SysFS.Resolve(abs)
					}
					if rerr != nil || storage.DevNumber != d.Number() {
						// A device node is on devtmpfs: what is
						// behind it is the device itself.
						storage = results.Storage{FSType: "block device", Device: d.Name, DevNumber: d.Number()}
					}
					place := results.TargetInfo{Role: "data", Path: path, Storage: storage}
					var st syscall.Statfs_t
					if rerr == nil && syscall.Statfs(path, &st) == nil {
						place.FreeBytes = st.Bavail * uint64(st.Bsize)
					}
					places = append(places, place)
				}
				return nil
			}
			for _, p := range devices {
				d, err := capture.DeviceAt(app.SysFS, p)
				if err := add(p, d, err); err != nil {
					return err
				}
			}
			for _, p := range targets {
				d, err := capture.DeviceUnder(app.SysFS, p)
				if err := add(p, d, err); err != nil {
					return err
				}
			}
			tracer, err := capture.OpenTracer(traceFS, app.SysFS.Sys, devs)
			if err != nil {
				return usagef("%v", err)
			}
			defer tracer.Close()
			dir, err := results.Create(resultsBase, name, blockIORun(app, results.KindCapture, places), app.Now())
			if err != nil {
				return err
			}
			for _, d := range devs {
				fmt.Fprintf(app.Stdout, "capturing %s (%s) for %s into %s\n", d.Name, d.Number(), duration, dir.Path)
			}
			started := app.Now()
			rec, tr, err := capture.Run(cmd.Context(), tracer, capture.Config{
				Devices: devs, Duration: duration, TraceFS: traceFS, Proc: app.SysFS.Proc,
				Command: app.Args, Now: app.Now,
			})
			if err == nil {
				err = capture.WriteDir(dir.Path, rec, tr)
			}
			if err == nil {
				step, rows := capture.Step(rec, tr, started, app.Now())
				err = writeBlockIO(dir, step, rows)
			}
			if err := finishBlockIO(cmd, app, dir, err); err != nil {
				return err
			}
			printSignature(app, rec)
			fmt.Fprintf(app.Stdout, "results: %s\n", dir.Path)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&devices, "device", nil, "block device to capture (repeatable), e.g. /dev/nvme0n1")
	fs.StringArrayVar(&targets, "target", nil, "capture the device holding this directory's file system (repeatable)")
	fs.DurationVar(&duration, "duration", 0, "how long to capture, e.g. 60s")
	fs.StringVar(&resultsBase, "results", "results", "directory the capture's results directory is created in")
	fs.StringVar(&name, "name", "capture", "name of the capture's results directory (after its timestamp)")
	fs.StringVar(&traceFS, "tracefs", capture.DefaultTraceFS, "where the kernel's tracing file system is (mounted there when it is not)")
	groupOwnFlags(cmd, "Capture", "device", "duration", "tracefs")
	groupFlagsInHelp(cmd, "")
	return cmd
}

// blockIORun is run.json as a capture or a replay (kind) begins it, on
// its targets.
func blockIORun(app *App, kind string, places []results.TargetInfo) results.Run {
	// The command line is the whole of its configuration, and run.json
	// keeps it; the captured devices and the replay's target and pace are
	// in its step's detail.
	host, _ := telemetry.ReadHost(telemetry.HostFS())
	return results.Run{
		Kind: kind, Command: app.Args,
		Environment: results.Environment{Host: host, Targets: places, Versions: map[string]string{"dbio": version()}},
	}
}

// writeBlockIO writes a capture's or a replay's step and its seconds.
func writeBlockIO(dir *results.Dir, step results.Step, rows []results.SeriesRow) error {
	for _, r := range rows {
		if err := dir.AppendSeries(r); err != nil {
			return err
		}
	}
	return dir.WriteStep(step, nil)
}

// finishBlockIO ends a capture's or a replay's results directory with
// the status its error gives, and returns the error the command ends with.
func finishBlockIO(cmd *cobra.Command, app *App, dir *results.Dir, err error) error {
	status := results.StatusCompleted
	switch {
	case cmd.Context().Err() != nil:
		status, err = results.StatusInterrupted, errInterrupted
	case err != nil:
		status = results.StatusFailed
	}
	if ferr := dir.Finish(status, err, app.Now()); err == nil {
		err = ferr
	}
	return err
}

// printSignature writes a capture's signature for the terminal.
func printSignature(app *App, rec capture.Record) {
	s := rec.Signature
	w := app.Stdout
	fmt.Fprintf(w, "captured %d requests in %.1f s (dbio's CPU for tracing: %.2f s)\n", rec.Requests, rec.DurationSeconds, rec.TracerCPUSeconds)
	for _, op := range []struct {
		name string
		f    blocktrace.OpFigures
	}{{"reads", s.Reads}, {"writes", s.Writes}, {"flushes", s.Flushes}, {"discards", s.Discards}} {
		if op.f.Requests == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-8s %9d  %9.1f/s  %8.2f MB/s  latency p50 %s  p99 %s  p99.9 %s\n", op.name, op.f.Requests, op.f.PerSecond, op.f.MBps,
			units.FormatMicros(op.f.Latency.P50), units.FormatMicros(op.f.Latency.P99), units.FormatMicros(op.f.Latency.P999))
	}
	fmt.Fprintf(w, "  reads %.0f %% of requests, %.0f %% sequential, %d FUA writes\n", 100*s.ReadFraction, 100*s.SequentialFraction, s.FUAWrites)
	for _, d := range rec.Devices {
		fmt.Fprintf(w, "  %s counters over the capture: %d reads, %d writes, %d flushes\n", d.Name, d.Stats.Reads, d.Stats.Writes, d.Stats.Flushes)
	}
	if rec.LostEvents > 0 {
		fmt.Fprintf(w, "warning: the kernel dropped %d trace events: the trace misses requests\n", rec.LostEvents)
	}
}

func init() { commandConstructors = append(commandConstructors, newReplayCmd) }

func newReplayCmd(app *App) *cobra.Command {
	var (
		targetDir   string
		pace        string
		speed       float64
		resultsBase string
		name        string
		limit       string
	)
	cmd := &cobra.Command{
		Use:   "replay CAPTURE --target DIR [--pace recorded|max] [--speed N] [--limit CAPS]",
		Short: "Replay a capture's block I/O with fio on candidate storage",
		Long: `dbio replay plays a capture (a results directory 'dbio capture' wrote) with fio on
a working file in DIR/dbio/replay: the devices' offsets are mapped into the file,
which is sized to cover the captured span and written in full first; flushes
become fdatasync, FUA writes a write and an fdatasync. Reads and writes are
direct I/O with the capture's concurrency.

--pace recorded (the default) issues every request at its recorded time: the
latency the candidate gives under the captured load, and whether it kept up.
--pace max issues them as fast as their order and concurrency allow: the
candidate's headroom. --speed N scales the recorded pace (2 is twice as fast).
--limit emulates a slower storage class on the target's disks with a
block-I/O cgroup around the replay (as a benchmark's --limit does).
Discards are not replayed. The working file is removed afterwards.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := replay.ParsePace(pace)
			if err != nil {
				return usagef("%v", err)
			}
			if speed <= 0 || speed > 1000 {
				return usagef("--speed %g must be above 0 (1 is the recorded pace)", speed)
			}
			if p == replay.Max && cmd.Flags().Changed("speed") {
				return usagef("--speed scales the recorded pace; --pace max has none: leave one out")
			}
			if targetDir == "" {
				return usagef("give the candidate storage: --target DIR (a directory on it)")
			}
			var caps iolimit.Limits
			if limit != "" {
				if caps, err = iolimit.Parse(limit); err != nil {
					return usagef("--limit: %v", err)
				}
			}
			fi, err := os.Stat(targetDir)
			switch {
			case err != nil:
				return usagef("--target %s: %v", targetDir, err)
			case fi.Mode()&(os.ModeDevice|os.ModeCharDevice) != 0:
				return usagef("--target %s is a device node: dbio replays onto a file, never a device; mount the device and pass a directory on it", targetDir)
			case !fi.IsDir():
				return usagef("--target %s is not a directory", targetDir)
			}
			capDir := args[0]
			_, tr, err := capture.Load(capDir)
			if err != nil {
				return usagef("%v", err)
			}
			need := replay.Need(tr)
			if need == 0 {
				return usagef("capture %s has no read or write to replay", capDir)
			}
			if len(tr.Requests) > replay.MaxRequests {
				return usagef("capture %s holds %d requests, more than the %d a replay reads back: capture shorter spans (--duration) and replay each", capDir, len(tr.Requests), replay.MaxRequests)
			}
			var st syscall.Statfs_t
			if err := syscall.Statfs(targetDir, &st); err != nil {
				return usagef("--target %s: %v", targetDir, err)
			}
			// The working file, and room for the file system's own blocks.
			if free := st.Bavail * uint64(st.Bsize); free < uint64(need)+uint64(need)/16+(16<<20) {
				return usagef("--target %s has %s free but the replay's working file needs %s: free some space or choose another target",
					targetDir, units.FormatBytes(free), units.FormatBytes(uint64(need)))
			}
			fio, err := app.Exec.LookPath("fio")
			if err != nil {
				return usagef("fio is not installed: install it (apt-get install fio)")
			}
			// A target that cannot be capped is refused before dbio's
			// directory is made there.
			var wrap func(execx.Cmd) execx.Cmd
			var g *iolimit.Group
			if !caps.IsZero() {
				if g, err = replayLimits(app, targetDir, caps); err != nil {
					return usagef("%v", err)
				}
				defer g.Remove()
				wrap = g.Wrap
			}
			t, err := target.Open(targetDir)
			if err != nil {
				return usagef("%v", err)
			}
			// The target is the replay's alone while it runs, as a
			// benchmark's is: another run on it would be in its figures.
			lock, err := t.Lock(app.SysFS, runner.Holder(app.Args, app.Now()))
			if err != nil {
				if errors.Is(err, target.ErrBusy) {
					return usagef("%v", err)
				}
				return err
			}
			defer lock.Release()
			storage, _ := app.SysFS.Resolve(t.Path)
			place := results.TargetInfo{Role: "data", Path: t.Path, Storage: storage, FreeBytes: st.Bavail * uint64(st.Bsize)}
			if g != nil {
				place.Limit = &results.StorageLimit{LimitsConfig: results.LimitsConfig(caps), Mechanism: "cgroup " + g.Version}
				fmt.Fprintf(app.Stdout, "capping %s's devices %v at %s (%s cgroup)\n", t.Path, g.Devices, caps, g.Version)
			}
			dir, err := results.Create(resultsBase, name, blockIORun(app, results.KindReplay, []results.TargetInfo{place}), app.Now())
			if err != nil {
				return err
			}
			work, err := t.Sub("replay")
			if err != nil {
				return finishBlockIO(cmd, app, dir, err)
			}
			defer t.RemoveSub("replay")
			fmt.Fprintf(app.Stdout, "replaying %s (%d requests, %s) on %s at %s pace into %s\n", capDir, len(tr.Requests),
				units.FormatBytes(uint64(need)), t.Path, pace, dir.Path)
			rec, err := replay.Run(cmd.Context(), app.Exec, replay.Config{
				Fio: fio, Capture: capDir, Trace: tr, Target: t.Path, Storage: storage, WorkDir: work,
				ResultsDir: dir.Path, Pace: p, Speed: speed, Command: app.Args, Now: app.Now, Wrap: wrap,
			})
			if err == nil {
				err = replay.WriteRecord(dir.Path, rec)
			}
			if err == nil {
				var devices []string
				for _, d := range tr.Devices {
					devices = append(devices, d.Name)
				}
				step, rows := replay.Step(rec, devices, app.Now())
				err = writeBlockIO(dir, step, rows)
			}
			if err := finishBlockIO(cmd, app, dir, err); err != nil {
				return err
			}
			printReplay(app, rec)
			fmt.Fprintf(app.Stdout, "results: %s\n", dir.Path)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&targetDir, "target", "", "directory on the candidate storage (the working file goes in DIR/dbio/replay)")
	fs.StringVar(&pace, "pace", string(replay.Recorded), "recorded: issue requests at their recorded times; max: as fast as order and concurrency allow")
	fs.Float64Var(&speed, "speed", 1, "scale the recorded pace (2 replays twice as fast)")
	fs.StringVar(&resultsBase, "results", "results", "directory the replay's results directory is created in")
	fs.StringVar(&name, "name", "replay", "name of the replay's results directory (after its timestamp)")
	fs.StringVar(&limit, "limit", "", "emulate a storage class on the target's disks with a block-I/O cgroup around the replay: riops=N,wiops=N,rbps=SIZE,wbps=SIZE or a preset ("+strings.Join(iolimit.PresetNames(), ", ")+")")
	groupOwnFlags(cmd, "Replay", "pace", "speed", "limit")
	groupFlagsInHelp(cmd, "")
	return cmd
}

// replayLimits makes the block-I/O cgroup capping the disks behind the
// replay's target (applied at once: the replay's fio alone joins it).
func replayLimits(app *App, dir string, caps iolimit.Limits) (*iolimit.Group, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("--limit on %s: %w", dir, err)
	}
	st, err := app.SysFS.Resolve(abs)
	if err != nil {
		return nil, fmt.Errorf("--limit on %s: %w", dir, err)
	}
	var devs []string
	for _, d := range st.Physical {
		devs = append(devs, d.DevNumber)
	}
	g, err := iolimit.SystemHost(app.SysFS.Sys).Create("replay", devs, caps)
	if err != nil {
		return nil, fmt.Errorf("--limit %s: %w", caps, err)
	}
	return g, nil
}

func printReplay(app *App, rec replay.Record) {
	w := app.Stdout
	fmt.Fprintf(w, "replayed in %.2f s; the source took %.2f s\n", rec.RuntimeSeconds, rec.ExpectedSeconds)
	for _, op := range []struct {
		name string
		f    replay.Figures
	}{{"reads", rec.Reads}, {"writes", rec.Writes}, {"syncs", rec.Syncs}} {
		if op.f.Requests == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-7s %9d  %9.1f/s  latency p50 %s  p99 %s  p99.9 %s\n", op.name, op.f.Requests, op.f.PerSecond,
			units.FormatMicros(op.f.Latency.P50), units.FormatMicros(op.f.Latency.P99), units.FormatMicros(op.f.Latency.P999))
	}
	switch {
	case rec.Pace == replay.Max:
		fmt.Fprintf(w, "  as fast as possible: %.2f× the recorded pace\n", rec.ExpectedSeconds/max(rec.RuntimeSeconds, 0.001))
	case rec.KeptUp:
		fmt.Fprintf(w, "  kept up with the recorded pace\n")
	default:
		fmt.Fprintf(w, "  fell behind the recorded pace by %.2f s (%.0f %%)\n", rec.BehindSeconds, 100*rec.BehindSeconds/max(rec.ExpectedSeconds, 0.001))
	}
}

func init() { commandConstructors = append(commandConstructors, newReplaysCmd) }

func newReplaysCmd(app *App) *cobra.Command {
	var markdown bool
	var base string
	cmd := &cobra.Command{
		Use:   "replays CAPTURE REPLAY...",
		Short: "Compare a capture and its replays side by side, in a table for the terminal",
		Long: `dbio replays lays a capture (what the source storage did) beside its replays on
candidate storage, in one table for the terminal: IOPS and syncs per second,
latency percentiles by direction and of the syncs, how long the requests took,
how far each second's IOPS were from the source's, and whether each replay
kept up with the recorded pace. A replay on the source storage itself is the
fidelity check. Everything is read from the results directories alone.

'dbio compare CAPTURE REPLAY...' writes the same table into its report, with
the per-second charts overlaid.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, runs, err := loadNamedRuns(app, base, args)
			if err != nil {
				return err
			}
			if err := runsAsCaptures(runs); err != nil {
				return err
			}
			if err := report.WriteBlockIOTable(&terminalText{w: app.Stdout}, runs, markdown); err != nil {
				return usagef("%v", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "write the table as Markdown")
	cmd.Flags().StringVar(&base, "results", "results", "where to find a run given by name (as dbio runs lists it) instead of by path")
	return cmd
}

// stepsCapture is --capture's capture of the devices under a run's data
// and log targets while its user steps run, refused (as bad input, before
// anything is written) where dbio cannot trace them: not root, a server
// of the user's (--dsn, whose files dbio does not know), a run on hosts,
// a body other than user steps, or devices the kernel cannot trace.
func stepsCapture(app *App, plan runner.Plan, onHosts, otherBody bool) (runner.Beside, error) {
	switch {
	case plan.EngineOptions.DSN != "":
		return nil, usagef("--capture traces the devices under the server dbio starts on --target; with --dsn dbio does not know where your server keeps its files: drop --capture and run 'sudo dbio capture --target DIR' on the server's host, DIR its data directory, while this run runs")
	case onHosts:
		return nil, usagef("--capture traces this machine's devices: a run on hosts cannot take it; drop --capture")
	case otherBody:
		return nil, usagef("--capture records a run's user steps: a goal search, backup cycles and the noisy-neighbour study cannot take it; drop --capture")
	}
	if err := capture.NeedRoot(os.Geteuid()); err != nil {
		return nil, usagef("--capture: %v", err)
	}
	var devs []blocktrace.Device
	seen := map[string]bool{}
	for _, p := range []string{plan.DataPath, plan.LogPath} {
		if p == "" {
			continue
		}
		d, err := capture.DeviceUnder(app.SysFS, p)
		if err != nil {
			return nil, usagef("--capture: %v", err)
		}
		if !seen[d.Number()] {
			seen[d.Number()] = true
			devs = append(devs, d)
		}
	}
	// The tracer is opened here once, so that one that cannot be set up
	// is refused before the run writes anything, and again as the steps
	// begin: a run that never reaches them leaves no tracing instance.
	tracer, err := capture.OpenTracer(capture.DefaultTraceFS, app.SysFS.Sys, devs)
	if err != nil {
		return nil, usagef("--capture: %v", err)
	}
	if err := tracer.Close(); err != nil {
		return nil, err
	}
	return &runCapture{app: app, devices: devs}, nil
}

// runCapture traces a run's devices from its first step to its last.
type runCapture struct {
	app     *App
	devices []blocktrace.Device
}

// Start begins the trace and returns once it has begun; stop ends it and
// writes capture.json and the trace into the run's results directory.
func (c *runCapture) Start(ctx context.Context) (func(dir string) error, error) {
	tracer, err := capture.OpenTracer(capture.DefaultTraceFS, c.app.SysFS.Sys, c.devices)
	if err != nil {
		return nil, fmt.Errorf("--capture: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	type result struct {
		rec capture.Record
		tr  blocktrace.Trace
		err error
	}
	started, done := make(chan struct{}), make(chan result, 1)
	go func() {
		// The steps end the capture; its duration only bounds it.
		rec, tr, err := capture.Run(ctx, tracer, capture.Config{
			Devices: c.devices, Duration: 100 * 24 * time.Hour, TraceFS: capture.DefaultTraceFS, Proc: c.app.SysFS.Proc,
			Command: c.app.Args, Now: c.app.Now, Started: func() { close(started) },
		})
		done <- result{rec, tr, err}
	}()
	select {
	case <-started:
	case r := <-done:
		cancel()
		tracer.Close()
		return nil, fmt.Errorf("--capture: %w", errors.Join(r.err, errors.New("the trace did not begin")))
	}
	return func(dir string) error {
		cancel()
		r := <-done
		cerr := tracer.Close()
		if r.err != nil {
			return fmt.Errorf("--capture: %w", r.err)
		}
		if err := capture.WriteDir(dir, r.rec, r.tr); err != nil {
			return fmt.Errorf("--capture: %w", err)
		}
		fmt.Fprintf(c.app.Stdout, "captured %d requests over the steps into %s (replay them: dbio replay %s --target DIR)\n", r.rec.Requests, dir, dir)
		return cerr
	}, nil
}

// runsAsCaptures shows, among runs laid beside replays, each run that
// captured its own steps (--capture, a suite's capture key) as its
// capture: the step and seconds dbio capture would have written, read
// from its capture.json and trace, under the run's own name and command.
// So `dbio compare RUN REPLAY` and `dbio replays RUN REPLAY` set the
// run's I/O beside its replays, as they do a capture's. Runs are left as
// they are when none is a replay.
func runsAsCaptures(runs []*results.Loaded) error {
	replays := false
	for _, l := range runs {
		replays = replays || l.Run.Kind == results.KindReplay
	}
	if !replays {
		return nil
	}
	for _, l := range runs {
		if results.IsBlockIO(l.Run.Kind) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(l.Path, capture.RecordName)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		rec, tr, err := capture.Load(l.Path)
		if err != nil {
			return err
		}
		started := rec.Started
		step, rows := capture.Step(rec, tr, started, started.Add(time.Duration(rec.DurationSeconds*float64(time.Second))))
		l.Run.Kind = results.KindCapture
		l.Steps = []results.Step{step}
		l.Series = loadedSeries(rows, started)
	}
	return nil
}

// loadedSeries is rows as series.csv would read back, their elapsed
// seconds counted from started.
func loadedSeries(rows []results.SeriesRow, started time.Time) results.Series {
	s := results.Series{Every: 1}
	index := map[string]int{}
	for _, r := range rows {
		for _, v := range r.Values {
			if _, ok := index[v.Name]; !ok {
				index[v.Name] = len(s.Columns)
				s.Columns = append(s.Columns, v.Name)
			}
		}
	}
	for _, r := range rows {
		values := make([]float64, len(s.Columns))
		for i := range values {
			values[i] = math.NaN()
		}
		for _, v := range r.Values {
			values[index[v.Name]] = v.Value
		}
		s.Rows = append(s.Rows, results.LoadedRow{Time: r.Time, ElapsedS: r.Time.Sub(started).Seconds(), Step: r.Step, Phase: r.Phase, Values: values})
	}
	return s
}
