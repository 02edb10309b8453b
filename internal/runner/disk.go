package runner

import (
	"context"
	"fmt"
	"sort"
	"time"

	"dbio/internal/execx"
	"dbio/internal/fio"
	"dbio/internal/iolimit"
	"dbio/internal/results"
	"dbio/internal/target"
)

// FioPhase is a fio characterization run as a phase of a run: its points
// become steps of the run's results directory, which the runner created and
// finishes. `dbio disk` and a suite's disk runs are this phase alone;
// `dbio quick` runs it on the data target before the engine starts.
type FioPhase struct {
	// Config is the characterization; no Targets means the run's data target.
	Config fio.Config
	// Exec runs fio.
	Exec execx.Runner
	// Limits put fio under a storage-class emulation on its targets' devices.
	Limits iolimit.Limits
	// Optional makes a missing fio a warning in run.json instead of a
	// failure: the phase is then skipped (dbio quick's device pass).
	Optional bool
}

// run runs the phase's points into dir as steps first, first+1, ...; a
// configuration that names no /sys and /proc resolves its targets through env's.
func (f FioPhase) run(ctx context.Context, dir *results.Dir, first int, env Env) ([]results.FioPoint, error) {
	out := env.Out
	if f.Config.SysFS == (target.SysFS{}) {
		f.Config.SysFS = env.SysFS
	}
	if f.Config.Live == nil {
		f.Config.Live = env.Progress
	}
	if f.Optional {
		if _, err := fio.Check(f.Exec); err != nil {
			fmt.Fprintf(out, "skipping the device pass: %v\n", err)
			_ = dir.UpdateRun(func(r *results.Run) { r.Warnings = append(r.Warnings, "device pass skipped: "+err.Error()) })
			return nil, nil
		}
	}
	plan, err := fio.NewPlan(f.Config, fio.BuiltinProfiles())
	if err != nil {
		return nil, err
	}
	exec := f.Exec
	if !f.Limits.IsZero() && f.Config.Fleet() {
		return nil, fmt.Errorf("storage-class limits (%s) cap devices on this machine, and the targets are on other hosts: run the fleet without a limit", f.Limits)
	}
	if !f.Limits.IsZero() {
		g, note, err := fioLimits(f.Config.SysFS, f.Config.Targets, f.Limits, dir.Run().ID)
		if err != nil {
			return nil, err
		}
		exec = wrapRunner{Runner: exec, wrap: g.Wrap}
		// The caps bind from the first point: laid out under a slow
		// class's caps, the SATA class's 256 MB working file took 12 s
		// instead of 3, and no point's figures are the layout's.
		plan.Config.Prepared = g.Apply
		note += ", binding from the first point (the working files laid out at the device's own speed)"
		_ = dir.UpdateRun(func(r *results.Run) { r.Notes = append(r.Notes, note) })
		pts, runErr := fio.RunPlan(ctx, plan, dir, first, exec, out)
		if runErr == nil {
			concludeFio(dir, plan, pts, out)
		}
		if err := g.Remove(); err != nil && runErr == nil {
			runErr = err
		}
		// fio records its targets as it prepares them: mark them now.
		capped := map[string]bool{}
		for _, t := range f.Config.Targets {
			if tg, err := target.Open(t); err == nil {
				capped[tg.Path] = true
			}
		}
		if err := recordLimit(dir, storageLimit(g), func(t results.TargetInfo) bool { return capped[t.Path] }); err != nil && runErr == nil {
			runErr = err
		}
		return pts, runErr
	}
	pts, err := fio.RunPlan(ctx, plan, dir, first, exec, out)
	if err == nil {
		concludeFio(dir, plan, pts, out)
	}
	return pts, err
}

// kindDisk is a disk run's kind in run.json.
const kindDisk = "disk"

// DiskPlan is a run that is one fio phase: `dbio disk`, a suite's disk run.
type DiskPlan struct {
	// Name names the results directory (<timestamp>-<name>).
	Name    string
	Command []string
	// Fio is the phase; its fio configuration is run.json's config, so
	// that `dbio disk` and a suite's disk run record one shape for
	// compare and report to read.
	Fio FioPhase
	// RecordHost describes the machine in run.json and gives fio its CPUs
	// and memory from there; without it run.json holds what fio records.
	RecordHost bool
	// CreateTargets and TargetsHeld are Plan's.
	CreateTargets bool
	TargetsHeld   bool
	ResultsBase   string
	// Notes go into run.json's notes, e.g. the DiskSpd line the run was translated from.
	Notes []string
}

// DiskOutcome is what a disk run produced.
type DiskOutcome struct {
	Dir    string
	Status results.Status
	// Points are the points run, the unfinished one included; Planned how many the plan has.
	Points  []results.FioPoint
	Planned int
}

// RunDisk executes a disk run: it takes the targets, creates the results
// directory, runs the fio phase into it and finishes it with the run's
// status, whatever happens. A plan that does not validate writes nothing.
func RunDisk(ctx context.Context, p DiskPlan, env Env) (DiskOutcome, error) {
	if env.Now == nil {
		env.Now = time.Now
	}
	var out DiskOutcome
	run := results.Run{Kind: kindDisk, Command: p.Command, Notes: p.Notes}
	if p.RecordHost {
		run.Environment, run.Warnings = hostEnvironment(env)
		p.Fio.Config.CPUs, p.Fio.Config.MemoryBytes = run.Environment.CPUs, run.Environment.MemoryBytes
	}
	plan, err := fio.NewPlan(p.Fio.Config, fio.BuiltinProfiles())
	if err != nil {
		return out, err
	}
	out.Planned = len(plan.Points)
	// Targets on other hosts are held over ssh by the fleet run itself
	// (fio's fleet path), once it has reached them.
	if !p.TargetsHeld && !p.Fio.Config.Fleet() {
		release, err := LockTargets(env.SysFS, p.Fio.Config.Targets, p.CreateTargets, Holder(p.Command, env.Now()))
		if err != nil {
			return out, err
		}
		defer release()
	}
	disk := p.Fio.Config.Record()
	run.Config = results.RunConfig{Disk: &disk}
	out.Dir, out.Status, err = recorded(ctx, p.ResultsBase, p.Name, run, env, func(dir *results.Dir) (err error) {
		out.Points, err = p.Fio.run(ctx, dir, 0, env)
		return err
	})
	return out, err
}

// fioLimits makes the group that puts fio under limits on the devices
// behind its targets, its caps not yet applied (Group.Apply).
func fioLimits(sys target.SysFS, targets []string, l iolimit.Limits, name string) (*iolimit.Group, string, error) {
	seen := map[string]bool{}
	var devs []string
	for _, path := range targets {
		tg, err := target.Open(path)
		if err != nil {
			return nil, "", err
		}
		st, err := tg.Storage(sys)
		if err != nil {
			return nil, "", err
		}
		for _, d := range st.Physical {
			if !seen[d.DevNumber] {
				seen[d.DevNumber] = true
				devs = append(devs, d.DevNumber)
			}
		}
	}
	sort.Strings(devs)
	g, err := iolimit.SystemHost(sys.Sys).Prepare(name, devs, l)
	if err != nil {
		return nil, "", fmt.Errorf("limit %s: %w", l, err)
	}
	return g, fmt.Sprintf("storage-class emulation: fio ran under %s on devices %v (%s cgroup)", l, devs, g.Version), nil
}

// wrapRunner runs every program through wrap, e.g. inside a cgroup.
type wrapRunner struct {
	execx.Runner
	wrap func(execx.Cmd) execx.Cmd
}

func (w wrapRunner) Run(ctx context.Context, c execx.Cmd) (execx.Result, error) {
	return w.Runner.Run(ctx, w.wrap(c))
}

func (w wrapRunner) Start(ctx context.Context, c execx.Cmd) (execx.Process, error) {
	return w.Runner.Start(ctx, w.wrap(c))
}
