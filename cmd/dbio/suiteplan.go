package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"dbio/internal/analysis"
	"dbio/internal/capture"
	"dbio/internal/engine"
	"dbio/internal/fio"
	"dbio/internal/fleet"
	"dbio/internal/replay"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/stats"
	"dbio/internal/steady"
	"dbio/internal/suite"
	"dbio/internal/units"
	"dbio/internal/workload"
)

// suitePlans resolves a suite's runs into the plans the runner executes:
// a database run into the same runner.Plan, and the same run.json config,
// as its workload's command resolves its flags to; a disk run into the
// runner.DiskPlan `dbio disk` runs. Problems are what the preflight must
// report before anything is written; a run that cannot be built carries
// its error, and fails when its turn comes. A database run on hosts whose
// hosts drive their own servers resolves through its workload's command
// line (hostsPlan); createTargets is the suite's --create-target, which
// each host's dbio is given.
func suitePlans(app *App, plan *suite.Plan, registry *workload.Registry, createTargets bool) (runs []runner.PlannedRun, problems []error) {
	// Every run's configuration key is read before any run is built:
	// building settles a workload's settings (its data policy, say) in the
	// definition all its runs share, and a key read after one run was
	// built would set the runs before it apart from the rest.
	keys := make([]string, len(plan.Runs))
	for i, r := range plan.Runs {
		wl, _ := json.Marshal(r.Workload)
		keys[i] = string(wl)
	}
	designs := map[int]*stats.Sequential{}
	for i, r := range plan.Runs {
		pr := runner.PlannedRun{Name: r.Name, Kind: r.Kind, Variant: r.VariantLabel(), Rep: r.Rep}
		if r.UntilDecided {
			pr.Sequential, pr.Margin = sequentialDesign(designs, plan, r), r.MarginPct/100
		}
		pr.Group = r.Kind
		if r.Scenario != "" {
			pr.Group += "-" + r.Scenario
		}
		pr.Config = pr.Group + keys[i]
		if r.Rep > 0 {
			pr.Set = r.Base
		}
		if r.Kind == suite.KindReplay {
			var err error
			if pr.Plan, err = replayPlan(app, r); err != nil {
				problems = append(problems, err)
				pr.Err = err
			}
		} else if r.Kind == "disk" {
			c := suiteDiskConfig(r, plan.Hosts)
			c.SysFS = app.SysFS
			if c.Precision != nil {
				// What fio's points record, and the bound against the
				// profile's points, only fio's configuration knows: a
				// bound it refuses is refused before anything runs.
				if errs := c.Validate(fio.BuiltinProfiles()); len(errs) > 0 {
					err := fmt.Errorf("precision: %w", errors.Join(errs...))
					problems = append(problems, fmt.Errorf("run %s: %w", r.Name, err))
					pr.Err = err
				}
			}
			pr.Disk = &runner.DiskPlan{Name: r.Name, Command: app.Args, RecordHost: true,
				Fio: runner.FioPhase{Config: c, Exec: app.Exec, Limits: r.Data.Limits}}
		} else if r.Driver == suite.DriverHost {
			p, err := hostsPlan(app, r, plan, registry, createTargets)
			if err != nil {
				// Nothing of a run on hosts is checked here but its
				// command line: what it refuses is refused before anything runs.
				problems = append(problems, fmt.Errorf("run %s: %w", r.Name, err))
				pr.Err = err
			} else {
				pr.Plan = &p
			}
		} else {
			var problem error
			pr.Plan, pr.Err, problem = databasePlan(app, r, registry)
			if problem != nil {
				problems = append(problems, problem)
			}
			// Driven from here by its DSN, the server's host runs no
			// dbio: its node exporter is read, as the command line does.
			if t, err := fleet.ParseTarget(r.Data.Path); pr.Plan != nil && r.Driver == suite.DriverCoordinator && err == nil && t.Remote() {
				pr.Plan.ServerHost = serverHost(app, plan.Hosts, t)
			}
		}
		runs = append(runs, pr)
	}
	return runs, problems
}

// sequentialDesign is the sequential test of a run whose variants are
// compared until decided: at most as many runs a side as its entry
// repeats, designed once for every run that shares that maximum.
func sequentialDesign(designs map[int]*stats.Sequential, plan *suite.Plan, r suite.Run) *stats.Sequential {
	most := 0
	for _, o := range plan.Runs {
		if o.Base == r.Base {
			most = max(most, o.Rep)
		}
	}
	if d, ok := designs[most]; ok {
		return d
	}
	d, err := stats.NewSequential(stats.DefaultAlpha, most)
	if err != nil {
		return nil // the suite's validation refused fewer than 5 already
	}
	designs[most] = &d
	return &d
}

// databasePlan is a suite's database run as the runner's plan. The plan
// holds what could be resolved even when building the run failed (err),
// so that the preflight still checks its places; problem is an error the
// preflight reports (a goal the workload cannot meet).
func databasePlan(app *App, r suite.Run, registry *workload.Registry) (p *runner.Plan, err, problem error) {
	p = &runner.Plan{Setup: runner.Setup{
		Name:    r.Name,
		Kind:    r.Kind,
		Command: app.Args,
		EngineOptions: engine.Options{BufferPool: r.BufferPool, ServerMemory: r.ServerMemory, Settings: r.Settings, DSN: r.DSN.Reveal(), Transport: r.Transport,
			Database: "dbio_" + r.Kind, Fresh: true, Getenv: app.Getenv},
		Limits: r.Data.Limits,
	}}
	steps := runner.Steps{Users: r.Users, RampUp: r.RampUp, Step: r.Step, Steady: steadyOf(r)}
	steps.Precision = precisionOf(r, steps.Steady)
	if p.EngineOptions.Transport == "" && r.DSN == "" {
		// An existing server is reached the way its DSN says.
		p.EngineOptions.Transport = "socket"
	}
	if r.DSN == "" {
		p.DataPath = r.Data.Path
		if r.Log != nil {
			p.LogPath = r.Log.Path
		}
	}
	if r.Backup != nil {
		p.BackupPath = r.Backup.Path
	}
	// The body, set before anything can fail, so that the preflight
	// still judges what the run would need.
	p.Body = scenarioBody(r, steps)
	if _, ok := registry.Get(r.Kind); !ok || r.Workload.Settings == nil {
		return p, fmt.Errorf("no workload of kind %q", r.Kind), nil
	}
	if p.Engine, err = app.Engines.Lookup(r.Engine); err != nil {
		return p, err, nil
	}
	built, err := workload.Build(r.Workload.Settings, workload.BuildOptions{Users: r.Users})
	if err != nil {
		return p, err, nil
	}
	if built.Users != nil {
		r.Users = built.Users
	}
	// Data kept as earlier runs left it (data = "reuse") is not re-created
	// by the engine first; a pristine copy's run decides at its start.
	p.EngineOptions.Fresh = !built.Reuse
	pacing, search, err := openLoop(r, built.Workload.TxTypes(), built.Seed)
	if err != nil {
		return p, err, err
	}
	p.Workload, p.SpaceNeeded = built.Workload, scenarioSpace(r, built.SpaceNeeded)
	steps.Users, steps.Pacing = r.Users, pacing
	if built.Ceiling != nil {
		c := analysis.Ceiling(*built.Ceiling)
		steps.StopWhen, steps.Conclude = c.Stop, c.Conclude
	}
	p.Body = scenarioBody(r, steps)
	if search != nil && r.Scenario == "" {
		// The probes replace the user steps and a stepping workload's stop.
		g := *search
		g.RampUp, g.Step, g.Steady, g.Pacing = steps.RampUp, steps.Step, steps.Steady, pacing
		p.Body = g
	}
	// The config the workload's command records, so that a suite's run
	// and a command's compare alike.
	logTarget := ""
	if r.Log != nil {
		logTarget = r.Log.Path
	}
	if p.Config, err = p.RunConfig(steps, r.Kind, r.Data.Path, logTarget, built.Stepping, built.Recorded); err != nil {
		return p, err, nil
	}
	if r.Capture {
		// What --capture cannot trace is the preflight's to report.
		if p.Beside, err = stepsCapture(app, *p, false, search != nil); err != nil {
			err = fmt.Errorf("run %s: %w", r.Name, err)
			return p, err, err
		}
	}
	return p, nil, nil
}

// scenarioBody is the body of a suite's run: its scenario's, or its user
// steps.
func scenarioBody(r suite.Run, steps runner.Steps) runner.Body {
	switch r.Scenario {
	case "backup":
		return runner.Backups{Cycles: r.Backups.Cycles, Restore: r.Backups.Restore, Interval: r.Backups.Interval, Users: r.Backups.Users}
	case "noisy-neighbour":
		n := runner.Noisy{Tenants: r.Noisy.Tenants, BackupTenants: r.Noisy.Backups, Interval: r.Noisy.Interval, Cycles: r.Noisy.Cycles,
			Users: r.Noisy.Users, RampUp: r.RampUp, Quiet: r.Step}
		if n.Users == 0 && len(r.Users) > 0 {
			n.Users = r.Users[0]
		}
		return n
	}
	return steps
}

// openLoop is a suite run's pacing and goal search (nil when it runs
// closed loop), its objective checked against the workload's transaction
// types, its schedule drawn from the workload's seed.
func openLoop(r suite.Run, types []string, seed uint64) (*runner.Pacing, *runner.Goal, error) {
	o := r.Workload.OpenLoop(r.Users)
	if o == nil {
		return nil, nil, nil
	}
	p := &runner.Pacing{Process: o.Process, Rate: o.Rate, PerUser: o.PerUser, LateTolerance: o.LateTolerance, Seed: seed}
	if o.Search == nil {
		return p, nil, nil
	}
	g := &runner.Goal{Search: *o.Search, Users: o.Users}
	obj, err := g.Search.Objective.For(types)
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: goal: %w", r.Name, err)
	}
	g.Search.Objective = obj
	return p, g, nil
}

// steadyOf is a suite run's ramp-up until steady state, nil without one.
// The suite has validated it.
func steadyOf(r suite.Run) *runner.SteadyRampUp {
	if r.RampUpUntil == "" {
		return nil
	}
	c, err := steady.Parse(r.RampUpUntil)
	if err != nil {
		return nil
	}
	return &runner.SteadyRampUp{Criterion: c, Window: r.SteadyWindow, Ignore: r.SteadyRamp}
}

// steadySeries is the series a ramp-up until steady judges, which a
// measurement until precise judges too; empty without one (the headline).
func steadySeries(st *runner.SteadyRampUp) string {
	if st == nil {
		return ""
	}
	return st.Criterion.Metric
}

// precisionOf is a suite run's measurement until precise, nil without
// one; its steadiness is judged on ramp_until's series when given. The
// suite has validated it.
func precisionOf(r suite.Run, st *runner.SteadyRampUp) *runner.PrecisionBound {
	if r.Precision == "" {
		return nil
	}
	p, err := steady.ParsePrecision(r.Precision)
	if err != nil {
		return nil
	}
	return &runner.PrecisionBound{Precision: p, Min: r.PrecisionMin, Series: steadySeries(st)}
}

// suiteDiskConfig is a suite's disk run as fio's configuration, on its data
// target (or its targets on hosts). The suite has validated its values.
func suiteDiskConfig(r suite.Run, hosts []fleet.Host) fio.Config {
	c := fio.Config{Profile: r.Workload.Profile, Targets: r.Data.Dirs(), Hosts: hosts}
	if d, err := time.ParseDuration(r.Workload.Runtime); err == nil {
		c.Runtime = d
	}
	if d, err := time.ParseDuration(r.Workload.RampTime); err == nil {
		c.Ramp = &d
	}
	if n, err := units.ParseBytes(r.Workload.Size); err == nil {
		c.Size = n
	}
	if p, err := steady.ParsePrecision(r.Precision); r.Precision != "" && err == nil {
		c.Precision = &fio.PrecisionBound{Precision: p, Min: r.PrecisionMin}
	}
	return c
}

// scenarioSpace is the data target's need for a run whose one dataset needs
// one: a dataset per tenant plus their backups, or a dataset and its backup.
func scenarioSpace(r suite.Run, one uint64) uint64 {
	switch r.Scenario {
	case "noisy-neighbour":
		return one * uint64(r.Noisy.Tenants+r.Noisy.Backups)
	case "backup":
		if r.Backup == nil {
			return one * 2
		}
	}
	return one
}

// hostsPlan is a suite's database run on hosts, each driving its own
// server: the workload's command line that asks for the same run (with
// the suite's hosts) resolved as the command resolves it, into the same
// plan of tenants, each host's dbio given the same flags.
func hostsPlan(app *App, r suite.Run, plan *suite.Plan, registry *workload.Registry, createTargets bool) (runner.Plan, error) {
	def, ok := registry.Get(r.Kind)
	if !ok || r.Workload.Settings == nil {
		return runner.Plan{}, fmt.Errorf("no workload of kind %q", r.Kind)
	}
	var f workloadFlags
	cmd := &cobra.Command{Use: def.Name}
	args := append(suiteRunFlags(r, def), "--results="+plan.Results)
	if createTargets {
		args = append(args, "--create-target")
	}
	// A noisy-neighbour run is dbio noisy's on every host: its tenants and
	// backups on each, its users one count, each tenant's.
	var nc *noisyCommand
	if r.Scenario == "noisy-neighbour" {
		nc = &noisyCommand{}
		cmd.Use = "noisy"
		nc.bind(cmd, app)
		users := r.Noisy.Users
		if users == 0 && len(r.Users) > 0 {
			users = r.Users[0]
		}
		args = slices.DeleteFunc(args, func(a string) bool { return strings.HasPrefix(a, "--users=") })
		args = append(args, "--users="+strconv.Itoa(users), "--tenants="+strconv.Itoa(r.Noisy.Tenants), "--backup-tenants="+strconv.Itoa(r.Noisy.Backups),
			"--interval="+r.Noisy.Interval.String(), "--cycles="+strconv.Itoa(r.Noisy.Cycles))
	} else {
		f.bindCommand(cmd, app.Engines, def)
	}
	if err := cmd.ParseFlags(args); err != nil {
		return runner.Plan{}, fmt.Errorf("as the command line %s: %w", strings.Join(args, " "), err)
	}
	// Not nil: a suite names its hosts in [[host]] tables, not with --host.
	hosts := append([]fleet.Host{}, plan.Hosts...)
	if nc != nil {
		nc.f.tenants.fleet = hosts
		return nc.plan(app)
	}
	f.tenants.fleet = hosts
	return workloadPlan(app, f, def.Name, nil)
}

// suiteRunFlags are the flags of a suite's run on hosts as its workload's
// command takes them: its engine, users, timing, targets, open-loop load,
// and every workload setting the suite gives a value other than the
// command's default. The suite has refused what a run on hosts cannot
// take (a DSN, a log target, ramp_until, a goal, a scenario).
func suiteRunFlags(r suite.Run, def workload.Definition) []string {
	args := []string{"--engine=" + r.Engine, "--name=" + r.Name}
	if r.Capture {
		// Refused there: a run on hosts traces no device of this machine.
		args = append(args, "--capture")
	}
	for _, dir := range r.Data.Dirs() {
		args = append(args, "--target="+dir)
	}
	ownSteps := def.RunDefaults.OwnSteps != ""
	if o, ok := r.Workload.Settings.(workload.StepsOwner); ok && o.OwnSteps() != "" {
		ownSteps = true
	}
	if !ownSteps {
		args = append(args, "--users="+workload.UserSteps(r.Users))
	}
	args = append(args, "--ramp-time="+r.RampUp.String(), "--runtime="+r.Step.String())
	if r.BufferPool > 0 {
		args = append(args, "--buffer-pool="+strconv.FormatInt(r.BufferPool, 10))
	}
	if r.ServerMemory > 0 {
		args = append(args, "--server-memory="+strconv.FormatInt(r.ServerMemory, 10))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Settings)) {
		args = append(args, "--setting="+k+"="+r.Settings[k])
	}
	if r.Transport != "" {
		args = append(args, "--transport="+r.Transport)
	}
	w := r.Workload
	if w.Rate != 0 {
		args = append(args, "--rate="+strconv.FormatFloat(w.Rate, 'g', -1, 64))
	}
	if w.RatePerUser != 0 {
		args = append(args, "--rate-per-user="+strconv.FormatFloat(w.RatePerUser, 'g', -1, 64))
	}
	if w.Arrival != "" {
		args = append(args, "--arrival="+w.Arrival)
	}
	if w.LateTolerance != "" {
		args = append(args, "--late-tolerance="+w.LateTolerance)
	}
	defaults, given := pflag.NewFlagSet("defaults", pflag.ContinueOnError), pflag.NewFlagSet("given", pflag.ContinueOnError)
	def.BindFlags(def.New(), defaults)
	def.BindFlags(w.Settings, given)
	given.VisitAll(func(fl *pflag.Flag) {
		if d := defaults.Lookup(fl.Name); d == nil || d.Value.String() != fl.Value.String() {
			args = append(args, "--"+fl.Name+"="+fl.Value.String())
		}
	})
	return args
}

// replayPlan is a suite's replay run as the runner's plan: the capture
// played with fio on the run's data target, under its limits, into the
// results directory `dbio replay` writes. A capture that cannot be read
// or replayed, and a missing fio, are problems the preflight reports
// before anything is written; the plan is returned with them, so that the
// preflight still judges its places.
func replayPlan(app *App, r suite.Run) (*runner.Plan, error) {
	w := r.Workload
	body := runner.Replay{Exec: app.Exec, Capture: w.CaptureDir, Pace: replay.Pace(w.Pace), Speed: w.Speed}
	p := &runner.Plan{Setup: runner.Setup{Name: r.Name, Kind: results.KindReplay, Command: app.Args, DataPath: r.Data.Path, Limits: r.Data.Limits}}
	fail := func(format string, a ...any) (*runner.Plan, error) {
		p.Body = body
		return p, fmt.Errorf("run %s: "+format, append([]any{r.Name}, a...)...)
	}
	_, tr, err := capture.Load(w.CaptureDir)
	if err != nil {
		return fail("capture: %v: give the results directory dbio capture wrote", err)
	}
	body.Trace = tr
	for _, d := range tr.Devices {
		body.Devices = append(body.Devices, d.Name)
	}
	need := replay.Need(tr)
	p.SpaceNeeded = uint64(need)
	switch {
	case need == 0:
		return fail("capture %s has no read or write to replay: give a capture of a database's I/O", w.CaptureDir)
	case len(tr.Requests) > replay.MaxRequests:
		return fail("capture %s holds %d requests, more than the %d a replay reads back: capture shorter spans and replay each", w.CaptureDir, len(tr.Requests), replay.MaxRequests)
	}
	if body.Fio, err = app.Exec.LookPath("fio"); err != nil {
		return fail("fio is not installed: install it (apt-get install fio)")
	}
	p.Body = body
	return p, nil
}
