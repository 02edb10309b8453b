package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/engine"
	"dbio/internal/engine/txerr"
	"dbio/internal/iolimit"
	"dbio/internal/memlimit"
	"dbio/internal/progress"
	"dbio/internal/results"
	"dbio/internal/secret"
	"dbio/internal/target"
	"dbio/internal/telemetry"
	"dbio/internal/units"
	"dbio/internal/workload"
)

// Plan is one fully resolved run: its setup, done once, and its body,
// which runs in what the setup made.
type Plan struct {
	Setup
	// Body is what the run does once set up: user steps, a goal search,
	// backup cycles, the noisy-neighbour study, tenants on hosts. A plan
	// without a body is its setup alone (a fio pass, when it has one).
	Body Body
}

// Setup is what a run does once, whatever its body: its targets taken and
// opened, its results directory, the fio pass, and, when the body asks for
// them, the limits and memory caps, the engine started and the workload
// prepared.
type Setup struct {
	// Name names the results directory (<timestamp>-<name>).
	Name string
	// Kind is the run's kind in run.json ("tpcc", "quick"...).
	Kind string
	// Command is the command line as typed; Config the resolved configuration.
	Command []string
	Config  results.RunConfig

	Engine        engine.Engine
	EngineOptions engine.Options
	// DataPath, LogPath and BackupPath are the targets; empty LogPath and
	// BackupPath mean "same as data". External engines (a DSN) need no target.
	DataPath, LogPath, BackupPath string
	// CreateTargets makes targets that do not exist yet (--create-target);
	// otherwise a missing target is refused.
	CreateTargets bool
	// TargetsHeld says the caller has taken the targets already (a suite
	// holds all of its targets for its whole length); Run takes them otherwise.
	TargetsHeld bool

	Workload workload.Workload
	// SpaceNeeded is the free space the data target must have (0: no check).
	SpaceNeeded uint64
	SkipChecks  bool
	Tick        time.Duration

	ResultsBase string

	// Fio, when set, runs after the results directory exists and before the
	// engine starts (dbio quick's device pass); its points are the first steps.
	Fio *FioPhase

	// Limits emulate a storage class on the targets' devices (a block-I/O cgroup).
	Limits iolimit.Limits
	// Barrier, when set, is waited for before each step of the body's (the
	// first after the load, before the workload's background sessions
	// start): a tenant's start barrier, released by its coordinator, which
	// starts each step on every host at one instant. A goal search waits
	// for it before its first probe only, a noisy-neighbour study before
	// each phase.
	Barrier func(ctx context.Context) error
	// ServerHost, when set, is the host of the server the DSN reaches
	// (--driver coordinator), which runs no dbio: its node exporter is read
	// with this machine's telemetry (see watchServerHost).
	ServerHost *ServerHost
	// Beside, when set, runs alongside the user steps (--capture's block
	// I/O capture): started as the first step begins, after the load, and
	// stopped once the last has ended, before the consistency checks.
	Beside Beside
	// DropAfter drops the database dbio created on the user's server (--dsn)
	// when the run ends (--drop-after); otherwise the run ends saying it
	// is left there, and how to drop it.
	DropAfter bool
}

// Env is the process state a run uses.
type Env struct {
	Out io.Writer // messages
	// Live, when set, receives every per-second row of a database run
	// (dbio's OpenMetrics endpoint).
	Live     Publisher
	Progress *progress.Line
	Now      func() time.Time
	Version  string
	// HostFS is where telemetry reads /proc; telemetry.HostFS() normally.
	HostFS telemetry.FS
	// SysFS is where targets are resolved to their disks and cgroups are
	// found; target.HostFS() normally. A zero SysFS leaves storage unresolved.
	SysFS target.SysFS
	// Getenv reads the environment, for the engines' password variables.
	Getenv func(string) string
	// StepThresholds are the thresholds that name a step: each is judged
	// from that step's summary and printed as the step ends, so that a
	// long run says early that it broke one. The command judges every
	// threshold again from the finished run, and that verdict is the one
	// recorded and the exit code's.
	StepThresholds []results.Threshold

	// memoryGroup reads the memory cgroup capping this run's server, set
	// while the run holds it (--server-memory), so that every sampler the
	// run makes records its usage.
	memoryGroup func() (telemetry.MemoryGroup, error)
	// ioGroup reads the block-I/O cgroup capping this run's storage, set
	// while the run holds it (--limit, a storage class), so that every
	// sampler the run makes records what the group was served against
	// its caps.
	ioGroup func() (telemetry.IOGroup, error)
	// serverHosts are the hosts whose node exporters every sampler the run
	// makes reads too (Setup.ServerHost), set once they have been checked.
	serverHosts []telemetry.RemoteHost
}

// Outcome is what a run produced.
type Outcome struct {
	Dir    string
	Status results.Status
	Steps  []results.Step
	Checks []results.Check
	// Stopped says why the steps' StopWhen ended the run early; empty when every step ran.
	Stopped string
	// Figures are what the steps' Conclude drew from them.
	Figures []results.Figure
	// LeftOnServer says what the run left on the user's server (--dsn): the
	// database dbio created, its size and how to drop it; or that it was
	// dropped. Empty for a managed server.
	LeftOnServer string
}

// Run executes p. Whatever happens, a results directory that exists is
// finished with the run's status, and a started engine is stopped.
func Run(ctx context.Context, p Plan, env Env) (Outcome, error) {
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Progress == nil {
		env.Progress = progress.Discard()
	}
	var out Outcome
	p = p.withConnectionRoom()
	// Nothing is written before the preflight has passed and the targets are this run's.
	release, err := prepareTargets(ctx, p, env)
	if err != nil {
		return out, err
	}
	defer release()
	placement, infos, err := openTargets(p, env.SysFS)
	if err != nil {
		return out, err
	}
	run := results.Run{Kind: p.Kind, Command: p.Command, Config: p.Config}
	run.Environment, run.Warnings = hostEnvironment(env)
	run.Environment.Targets = append(infos, p.needs().targets...)
	run.Environment.Versions["go"] = runtime.Version()
	if p.EngineOptions.Getenv == nil {
		p.EngineOptions.Getenv = env.Getenv
	}
	out.Dir, out.Status, err = recorded(ctx, p.ResultsBase, p.Name, run, env, func(dir *results.Dir) error {
		runErr := execute(ctx, p, env, dir, placement, &out)
		// A driver's message may quote the DSN; what run.json, the suite and
		// the terminal get of it never holds the password.
		runErr = secret.ScrubError(runErr, secret.Values(p.EngineOptions.DSN))
		return interrupted(ctx, runErr, dir)
	})
	return out, err
}

// interrupted says, of a run that ctx's end stopped, what stopped it and
// where what it had done is kept; other errors are returned as they are.
func interrupted(ctx context.Context, runErr error, dir *results.Dir) error {
	if runErr == nil || statusOf(ctx, runErr) != results.StatusInterrupted {
		return runErr
	}
	// The cause says what stopped the run: the signal received, for dbio.
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		runErr = fmt.Errorf("%w (%v)", runErr, cause)
	}
	return fmt.Errorf("%w: results so far kept in %s", runErr, dir.Path)
}

// opening says what the run is about to do before it does it: where (each
// target's filesystem and device, and the limit it will be capped at) and
// what (the fio pass, then what the body does).
func opening(w io.Writer, p Plan, targets []results.TargetInfo) {
	for _, t := range targets {
		if t.Host != "" {
			continue // a host's target is its dbio's to describe
		}
		line := fmt.Sprintf("%s (%s): %s", t.Path, t.Role, t.Describe())
		if !p.Limits.IsZero() && (t.Role == target.RoleData || t.Role == target.RoleLog) {
			// The same words the results and the report will use, before
			// the cgroup exists to say which version it is.
			line += ", to be " + limitRecord(p.Limits, "block-I/O cgroup").Describe()
		}
		fmt.Fprintf(w, "target:  %s\n", line)
	}
	if d := p.Describe(); d != "" {
		fmt.Fprintf(w, "plan:    %s\n", d)
	}
}

// Describe says what p does, in the words of its opening's plan line (a
// dry run prints the same): the fio pass, then what the body does.
func (p Plan) Describe() string {
	var what []string
	if p.Fio != nil {
		what = append(what, "fio "+p.Fio.Config.Profile+" on the data target")
	}
	if p.Body != nil {
		if d := p.Body.describe(p.Setup); d != "" {
			what = append(what, d)
		}
	}
	return strings.Join(what, ", then ")
}

// hostEnvironment describes the machine for run.json; what could not be
// read is a warning, since a host we cannot describe still runs.
func hostEnvironment(env Env) (results.Environment, []string) {
	host, err := telemetry.ReadHost(env.HostFS)
	e := results.Environment{Host: host, Versions: map[string]string{"dbio": env.Version}}
	if err != nil {
		return e, []string{err.Error()}
	}
	return e, nil
}

// recorded creates run's results directory, runs body in it and finishes
// it with the status body's error gives, whatever happens: the one place a
// results directory is opened and closed. A directory that cannot be
// finished makes an error of a run that had none.
func recorded(ctx context.Context, base, name string, run results.Run, env Env, body func(*results.Dir) error) (string, results.Status, error) {
	dir, err := results.Create(base, name, run, env.Now())
	if err != nil {
		return "", "", err
	}
	fmt.Fprintf(env.Out, "results: %s\n", dir.Path)
	if len(env.StepThresholds) > 0 {
		dir.AfterStep(func(st results.Step) { judgeAsStepEnds(env, st) })
	}
	runErr := body(dir)
	var refused *workload.ReuseRefused
	if errors.As(runErr, &refused) {
		// Bad input found only once the data could be read: the run
		// ran nothing, so it keeps nothing, as if refused at the preflight.
		if err := dir.Discard(); err != nil {
			return dir.Path, results.StatusFailed, errors.Join(runErr, err)
		}
		fmt.Fprintf(env.Out, "results: %s removed: the run was refused before it ran\n", dir.Path)
		return "", results.StatusFailed, runErr
	}
	status := statusOf(ctx, runErr)
	if err := dir.Finish(status, runErr, env.Now()); err != nil && runErr == nil {
		runErr = err
	}
	return dir.Path, status, runErr
}

// judgeAsStepEnds prints the verdict of each threshold naming st, read
// from st alone.
func judgeAsStepEnds(env Env, st results.Step) {
	for _, t := range env.StepThresholds {
		if t.Step != st.Name {
			continue
		}
		judged := analysis.JudgeThresholds(&results.Loaded{Steps: []results.Step{st}}, []results.Threshold{t})
		fmt.Fprintf(env.Out, "%s (as step %s ended)\n", analysis.ThresholdLine(judged[0]), st.Name)
	}
}

func isReuse(p Plan) bool {
	type reuser interface{ Reusing() bool }
	r, ok := p.Workload.(reuser)
	return ok && r.Reusing()
}

func statusOf(ctx context.Context, err error) results.Status {
	switch {
	case err == nil:
		return results.StatusCompleted
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return results.StatusInterrupted
	default:
		return results.StatusFailed
	}
}

func openTargets(p Plan, sys target.SysFS) (engine.Placement, []results.TargetInfo, error) {
	var pl engine.Placement
	var infos []results.TargetInfo
	open := func(path string, role results.TargetRole) (*target.Target, error) {
		if path == "" {
			return nil, nil
		}
		t, err := target.Open(path)
		if err != nil {
			return nil, err
		}
		info := results.TargetInfo{Role: role, Path: t.Path}
		info.Storage, _ = t.Storage(sys) // a filesystem we cannot resolve still runs
		info.FreeBytes, _ = t.FreeBytes()
		info.FreeInodes = target.FreeInodesIfLow(t.Path)
		infos = append(infos, info)
		return t, nil
	}
	var err error
	if pl.Data, err = open(p.DataPath, target.RoleData); err != nil {
		return pl, nil, err
	}
	if p.LogPath != "" && p.LogPath != p.DataPath {
		if pl.Log, err = open(p.LogPath, target.RoleLog); err != nil {
			return pl, nil, err
		}
	}
	if p.BackupPath != "" && p.BackupPath != p.DataPath {
		if pl.Backup, err = open(p.BackupPath, target.RoleBackup); err != nil {
			return pl, nil, err
		}
	}
	return pl, infos, nil
}

// execute is the body of Run between creating and finishing the results
// directory: the setup, then the plan's body in the session it made.
func execute(ctx context.Context, p Plan, env Env, dir *results.Dir, pl engine.Placement, out *Outcome) (err error) {
	opening(env.Out, p, dir.Run().Environment.Targets)
	ss := &session{Setup: p.Setup, env: env, dir: dir, pl: pl, out: out}
	// What the setup made is undone on every way out, the last made first.
	var undo cleanups
	defer func() { err = undo.run(err) }()
	if p.Fio != nil {
		phase := *p.Fio
		if len(phase.Config.Targets) == 0 {
			if pl.Data == nil {
				return errors.New("the fio pass needs a data target")
			}
			phase.Config.Targets = []string{pl.Data.Path}
		}
		// The run's time left, while fio runs, counts the steps after it
		// (and what the caller knows comes before them: a load's estimate).
		n := p.needs()
		phase.Config.After += time.Duration(n.steps) * n.stepTime
		began := env.Now()
		pts, err := phase.run(ctx, dir, ss.first, env)
		ss.phase(results.PhaseDevicePass, began, "")
		if err != nil {
			return err
		}
		ss.first = len(pts)
	}
	if p.Body == nil {
		return nil
	}
	n := p.Body.needs()
	if n.servers > 0 {
		if p.Engine == nil || p.Workload == nil {
			return errors.New("a database run needs an engine and a workload")
		}
		began := env.Now()
		if err := ss.capServers(&undo); err != nil {
			return err
		}
		ss.phase(results.PhaseSetup, began, "")
	}
	if n.engine {
		if err := ss.startEngine(ctx, &undo); err != nil {
			return err
		}
	}
	if ss.applyLimits != nil {
		if err := ss.applyLimits(); err != nil {
			return fmt.Errorf("--limit %s: %w", p.Limits, err)
		}
	}
	return p.Body.run(ctx, ss)
}

// cleanups are what a setup undoes when its run ends, each given the run's
// error and returning it, or the error undoing met when it had none.
type cleanups []func(error) error

func (c *cleanups) add(f func(error) error) { *c = append(*c, f) }

// run undoes everything, the last made first.
func (c cleanups) run(err error) error {
	for i := len(c) - 1; i >= 0; i-- {
		err = c[i](err)
	}
	return err
}

// phase records in run.json that the part name of the run began at began
// and ended now. A run.json that cannot be written is the directory's
// failure (Dir.Err), which fails the run as it finishes.
func (ss *session) phase(name results.PhaseName, began time.Time, detail string) {
	p := results.PhaseSince(name, began, ss.env.Now(), detail)
	_ = ss.dir.UpdateRun(func(r *results.Run) { r.Phases = append(r.Phases, p) })
}

// capServers readies this machine for the servers a body runs: the kernel's
// delay accounting, the block-I/O limits on the targets' devices and the
// cap on the servers' memory, each undone when the run ends; and the
// engine's options as the servers start with them.
func (ss *session) capServers(undo *cleanups) error {
	p, dir, out := ss.Setup, ss.dir, ss.env.Out
	note := func(msg string) error {
		if msg == "" {
			return nil
		}
		fmt.Fprintf(out, "%s\n", msg)
		return dir.UpdateRun(func(r *results.Run) { r.Notes = append(r.Notes, msg) })
	}
	// The kernel's delay accounting is the machine's: on for the run only,
	// and set back on every way out, a failure or an interruption
	// included (undone last, once the servers have stopped).
	restoreDelays, delays := delayAccounting(ss.env.HostFS.Proc)
	undo.add(func(err error) error {
		if rerr := restoreDelays(); rerr != nil {
			fmt.Fprintf(out, "warning: %v\n", rerr)
			if err == nil {
				err = rerr
			}
		}
		return err
	})
	if delays != "" {
		if err := dir.UpdateRun(func(r *results.Run) { r.Notes = append(r.Notes, delays) }); err != nil {
			return err
		}
	}
	opts := p.EngineOptions
	if opts.LogDir == "" {
		opts.LogDir = dir.Path
	}
	opts.Notice = func(msg string) {
		fmt.Fprintf(out, "%s\n", msg)
		_ = dir.UpdateRun(func(r *results.Run) { r.Notes = append(r.Notes, msg) })
	}
	if opts.Preallocate == engine.PreallocateAuto {
		opts.Preallocate = int64(p.SpaceNeeded)
	}
	applyLimits, liftLimits, release, limitNote, limit, err := limitedPlacement(iolimit.SystemHost(ss.env.SysFS.Sys), ss.env.SysFS, dir.Run().ID, p.Limits, ss.pl, p.Engine.Capabilities(), &opts, &ss.env)
	if err != nil {
		return err
	}
	// Released on every way out, the failure to record it included: a
	// group must not outlive its run.
	undo.add(func(err error) error {
		if rerr := release(); rerr != nil && err == nil {
			err = rerr
		}
		return err
	})
	// The cgroup caps the disks behind the data and log targets.
	if err := recordLimit(dir, limit, func(t results.TargetInfo) bool { return t.Role == target.RoleData || t.Role == target.RoleLog }); err != nil {
		return err
	}
	if err := note(limitNote); err != nil {
		return err
	}
	// The memory cap is removed after the servers stopped (undone later
	// than they are, earlier than the block-I/O group's release).
	releaseMemory, memory, memoryNote, err := cappedMemory(memlimit.SystemHost(ss.env.SysFS.Sys), dir.Run().ID, &opts, &ss.env)
	if err != nil {
		return err
	}
	undo.add(func(err error) error {
		if rerr := releaseMemory(); rerr != nil && err == nil {
			err = rerr
		}
		return err
	})
	ss.opts, ss.memory, ss.applyLimits, ss.liftLimits = opts, memory, applyLimits, liftLimits
	return note(memoryNote)
}

// startEngine starts the plan's engine and prepares its workload, for a
// body that runs on them; the engine is stopped when the run ends, whatever
// happens.
func (ss *session) startEngine(ctx context.Context, undo *cleanups) (err error) {
	p, dir, pl, out := ss.Setup, ss.dir, ss.pl, ss.env.Out
	if p.ServerHost != nil {
		if ss.env.serverHosts, err = watchServerHost(ctx, *p.ServerHost, ss.env, dir); err != nil {
			return err
		}
	}
	if p.EngineOptions.DSN != "" {
		undo.add(func(err error) error {
			ss.out.LeftOnServer = ss.leaveOrDrop(ctx)
			return err
		})
	}
	pr, err := ss.pristineFor(p.Workload)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, startLine(p.Engine, ss.opts))
	began := ss.env.Now()
	inst, err := p.Engine.Start(ctx, pl, ss.opts)
	if err != nil {
		return fmt.Errorf("start %s: %w", p.Engine.Name(), err)
	}
	undo.add(func(err error) error {
		// Stop even when the run was cancelled: the server must not outlive dbio.
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		stopping := ss.env.Now()
		serr := inst.Stop(stopCtx)
		ss.phase(results.PhaseServerStop, stopping, "")
		if serr != nil {
			fmt.Fprintf(out, "warning: stopping %s: %v\n", p.Engine.Name(), serr)
			if err == nil {
				err = fmt.Errorf("stop %s: %w", p.Engine.Name(), serr)
			}
		}
		return err
	})
	undo.add(func(err error) error {
		// An engine's message may not name the disk (PostgreSQL's partial
		// block write does not); its code does, and the user needs to know
		// which filesystem to free.
		if err != nil && !errors.Is(err, results.ErrWriteFailed) && txerr.DiskFull(inst, err) {
			err = fmt.Errorf("%w: the filesystem holding %s is full: free space there, or give a larger target", err, fullestTarget(pl))
		}
		return err
	})
	ss.inst = inst
	if p.EngineOptions.DSN != "" {
		if err := yourServer(out, inst, ss.env.SysFS, dir); err != nil {
			return err
		}
	}
	info := inst.Info()
	info.MemoryLimit = ss.memory
	if notes, ok := p.Workload.(interface {
		EngineNotes(engine.Instance) []string
	}); ok {
		info.Notes = append(info.Notes, notes.EngineNotes(inst)...)
	}
	if err := dir.UpdateRun(func(r *results.Run) {
		r.Engines = append(r.Engines, info)
		r.Environment.Versions[info.Engine] = info.Version
	}); err != nil {
		return err
	}

	fmt.Fprintf(out, "preparing %s on %s %s\n", p.Workload.Name(), info.Engine, info.Version)
	before := placementBytes(pl)
	var dbBefore int64 = -1
	if p.EngineOptions.DSN != "" {
		if _, db, ok := ss.serverDatabase(ctx); ok {
			dbBefore = db.Bytes
		}
	}
	ss.phase(results.PhaseServerStart, began, "")
	began = ss.env.Now()
	origin, err := pr.restoreBefore(ctx, ss, inst)
	if err != nil {
		return err
	}
	if origin != nil {
		ss.phase(results.PhaseReset, began, "the pristine copy restored by "+origin.ResetMethod)
	}
	began = ss.env.Now()
	ls, err := p.Workload.Prepare(ctx, inst, ss.env.Progress.Messages(out))
	if err != nil {
		return fmt.Errorf("prepare %s: %w", p.Workload.Name(), err)
	}
	loadDetail := "loaded"
	if ls.Reused {
		loadDetail = "none: the data there kept, its identity checked"
	}
	ss.phase(results.PhaseLoad, began, loadDetail)
	written := placementBytes(pl) - before
	if dbBefore >= 0 && !ls.Reused {
		// The user's server is on no target of dbio's: the database it
		// loaded says how much it grew.
		if _, db, ok := ss.serverDatabase(ctx); ok {
			written = db.Bytes - dbBefore
		}
	}
	// The copy is kept after the load's bytes are counted: they are the load's.
	began = ss.env.Now()
	if origin, err = pr.keepAfter(ctx, ss, inst, ls, origin); err != nil {
		return err
	}
	if origin.State == results.DataLoaded && origin.Copy != nil {
		ss.phase(results.PhasePristineCopy, began, "kept by "+origin.Copy.Method)
	}
	cold := coldCacheNote(origin)
	if cold != "" {
		fmt.Fprintln(out, cold)
	}
	if err := dir.UpdateRun(func(r *results.Run) {
		r.Load = loadReport(ls, written)
		r.Load.Data = origin
		if cold != "" {
			r.Notes = append(r.Notes, cold)
		}
	}); err != nil {
		return err
	}
	recordFragmentation(dir, pl, inst, "start")
	undo.add(func(err error) error {
		recordFragmentation(dir, pl, inst, "end")
		return err
	})
	return nil
}

// yourServer says what dbio found of the user's server (--dsn) on this
// host: the directories it named and the storage behind them, on the
// terminal (target lines, as a managed server's targets get) and in
// run.json's targets; or that its processes and disks are unknown.
func yourServer(out io.Writer, inst engine.Instance, sys target.SysFS, dir *results.Dir) error {
	places := serverTargets(inst, sys)
	if len(places) == 0 {
		seen := "its processes were not found on this host"
		if ps, ok := inst.(engine.Processes); ok && len(ps.PIDs()) > 0 {
			seen = "its data directory is not known (the DSN's user may not read data_directory or @@datadir)"
		}
		fmt.Fprintf(out, "server:  %s: its CPU, memory and disks are unknown\n", seen)
		return nil
	}
	for _, t := range places {
		fmt.Fprintf(out, "target:  %s (%s, your server's): %s\n", t.Path, t.Role, t.Describe())
	}
	return dir.UpdateRun(func(r *results.Run) { r.Environment.Targets = append(r.Environment.Targets, places...) })
}

// serverTargets are the user's server's data and log directories, as it
// names them, with the storage behind them: none when the server is not on
// this host or would not say.
func serverTargets(inst engine.Instance, sys target.SysFS) []results.TargetInfo {
	sp, ok := inst.(engine.ServerPlaces)
	if !ok {
		return nil
	}
	data, log := sp.ServerDirs()
	var out []results.TargetInfo
	for _, d := range []struct {
		path string
		role results.TargetRole
	}{{data, target.RoleData}, {log, target.RoleLog}} {
		if d.path == "" {
			continue
		}
		st, err := sys.Resolve(d.path)
		if err != nil {
			continue
		}
		info := results.TargetInfo{Role: d.role, Path: d.path, Storage: st}
		var fs syscall.Statfs_t
		if syscall.Statfs(d.path, &fs) == nil {
			info.FreeBytes = fs.Bavail * uint64(fs.Bsize)
		}
		out = append(out, info)
	}
	return out
}

// startLine says what starting the engine is: a server dbio starts, or
// the user's, which dbio connects to and leaves running.
func startLine(e engine.Engine, o engine.Options) string {
	if o.DSN == "" {
		return "starting " + e.Name()
	}
	where := "the server --dsn names"
	if f, ok := e.(engine.DSNForms); ok {
		if addr, err := f.DSNAddress(o.DSN); err == nil {
			where = addr
		}
	}
	return fmt.Sprintf("connecting to %s at %s (your server: dbio will not start or stop it)", e.Name(), where)
}

// leaveOrDrop drops the database dbio created on the user's server when
// the run asks (--drop-after), and says what it did or what it left and how
// to drop it; "" when the server cannot say (the run's error says why).
// It runs after the instance's pools are closed, even when the run was
// interrupted.
func (ss *session) leaveOrDrop(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), connectTimeout)
	defer cancel()
	owned, db, ok := ss.serverDatabase(ctx)
	if !ok {
		return ""
	}
	size := units.FormatBytes(uint64(max(db.Bytes, 0)))
	if ss.DropAfter {
		if err := owned.DropOwned(ctx, ss.opts, db.Name); err != nil {
			return fmt.Sprintf("left on your server: database %s (%s), which --drop-after could not drop: %v", db.Name, size,
				secret.ScrubError(err, secret.Values(ss.opts.DSN)))
		}
		return fmt.Sprintf("dropped database %s (%s) from your server (--drop-after)", db.Name, size)
	}
	return fmt.Sprintf("left on your server: database %s (%s), created by dbio: drop it with dbio clean --dsn '%s' --yes, or run with --drop-after",
		db.Name, size, secret.RedactDSN(ss.opts.DSN))
}

// serverDatabase is the database dbio created for the run on the user's
// server (--dsn), as the server lists it, with its size.
func (ss *session) serverDatabase(ctx context.Context) (engine.OwnedDatabases, engine.OwnedDatabase, bool) {
	owned, ok := ss.Engine.(engine.OwnedDatabases)
	if !ok {
		return nil, engine.OwnedDatabase{}, false
	}
	dbs, err := owned.OwnedDatabases(ctx, ss.opts)
	if err != nil {
		return nil, engine.OwnedDatabase{}, false
	}
	i := slices.IndexFunc(dbs, func(d engine.OwnedDatabase) bool { return d.Name == ss.opts.Database })
	if i < 0 {
		return nil, engine.OwnedDatabase{}, false
	}
	return owned, dbs[i], true
}

// loadReport turns load statistics into run.json's figures. Bytes written
// are the growth of dbio's directories on the targets: what the engine kept,
// not what it wrote and later freed.
func loadReport(ls workload.LoadStats, written int64) *results.LoadReport {
	r := &results.LoadReport{Rows: ls.Rows, Scale: ls.Scale, Reused: ls.Reused, Seconds: ls.Duration.Seconds()}
	if ls.Dataset.Workload != "" {
		r.Dataset = &ls.Dataset
	}
	if ls.Reused {
		r.Seconds = 0
		return r
	}
	if written > 0 {
		r.BytesWritten = written
	}
	if r.Seconds > 0 {
		r.RowsPerSec = float64(ls.Rows) / r.Seconds
		r.ScalePerMin = float64(ls.Scale) / (r.Seconds / 60)
		r.MBPerSec = float64(r.BytesWritten) / 1e6 / r.Seconds
	}
	return r
}

// fullestTarget is the placement's target with the least space left: the one
// that filled, when data and log sit on different filesystems.
func fullestTarget(pl engine.Placement) string {
	best, least := "", uint64(math.MaxUint64)
	for _, t := range []*target.Target{pl.Data, pl.Log} {
		if t == nil {
			continue
		}
		var st syscall.Statfs_t
		if syscall.Statfs(t.Dir, &st) != nil {
			continue
		}
		if free := st.Bavail * uint64(st.Bsize); best == "" || free < least {
			best, least = t.Path, free
		}
	}
	if best == "" && pl.Data != nil {
		best = pl.Data.Path
	}
	return best
}

// placementBytes is the size of dbio's directories on the placement's targets.
func placementBytes(pl engine.Placement) int64 {
	var n int64
	seen := map[string]bool{}
	for _, t := range []*target.Target{pl.Data, pl.Log} {
		if t == nil || seen[t.Dir] {
			continue
		}
		seen[t.Dir] = true
		n += dirBytes(t.Dir)
	}
	return n
}

// newSampler watches the physical disks behind the targets, dbio itself and
// the engine's server processes and counters, and the server's host
// through its node exporter when the server is on another (Setup.ServerHost).
func newSampler(env Env, pl engine.Placement, inst engine.Instance, external bool) (*telemetry.Sampler, error) {
	if env.HostFS.Proc == "" {
		return nil, errors.New("no /proc root configured")
	}
	seen := map[string]bool{}
	var devices []string
	for _, t := range []*target.Target{pl.Data, pl.Log, pl.Backup} {
		if t == nil {
			continue
		}
		s, err := t.Storage(env.SysFS)
		if err != nil {
			continue
		}
		for _, d := range s.Physical {
			if !seen[d.Name] {
				seen[d.Name] = true
				devices = append(devices, d.Name)
			}
		}
	}
	for _, t := range serverTargets(inst, env.SysFS) {
		// The user's server's own directories, found on this host.
		for _, d := range t.Storage.Physical {
			if !seen[d.Name] {
				seen[d.Name] = true
				devices = append(devices, d.Name)
			}
		}
	}
	o := telemetry.Options{FS: env.HostFS, Devices: devices, SelfPID: os.Getpid()}
	ps, ok := inst.(engine.Processes)
	switch {
	case ok && external && len(ps.PIDs()) == 0:
		// The user's server, not found on this host: unknown, not idle.
		o.ServerUnknown = true
	case ok:
		o.ServerPIDs = ps.PIDs
		o.ServerChildren = true
	default:
		o.InProcessEngine = true
	}
	if c, ok := inst.(engine.StatsSource); ok {
		o.Counters = c
	}
	o.MemoryGroup = env.memoryGroup
	o.IOGroup = env.ioGroup
	o.Hosts = env.serverHosts
	return telemetry.New(o)
}
