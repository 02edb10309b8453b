package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"dbio/internal/analysis"
	"dbio/internal/engine"
	"dbio/internal/report"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/suite"
	"dbio/internal/workload"
)

// workloadFlags are a workload command's flags: those every workload
// shares, and the workload's own settings, bound by its definition.
type workloadFlags struct {
	run      runFlags
	def      workload.Definition
	settings workload.Settings
	// pace are the open-loop and goal flags, on the commands that have them.
	pace pacingFlags
	// repeat runs the whole run this many times into one repeat set.
	repeat int
	// tenants are the hosts a run on several hosts is on, on the commands
	// that offer it.
	tenants tenantFlags
	// dryRun prints the plan, its time and space, and runs nothing.
	dryRun bool
	// gates are --threshold and --junit.
	gates gateFlags
	// capture records the block I/O under the targets during the steps.
	capture bool
}

// bindRepeat adds --repeat, for the commands whose runs can be repeated,
// and the thresholds every such command's runs may be judged by.
func (f *workloadFlags) bindRepeat(cmd *cobra.Command) {
	bindRepeat(cmd, &f.repeat)
	f.gates.register(cmd.Flags())
}

// bindRepeat adds --repeat to any command whose runs can be repeated: one
// flag, one meaning, in every command that has it.
func bindRepeat(cmd *cobra.Command, n *int) {
	cmd.Flags().IntVar(n, "repeat", 1, "run the whole run this many times, one after the other, into one repeat set: every figure is then reported as the median with its 95 % confidence interval and the spread between repeats (4 or more let dbio compare call a difference significant, 6 or more give each median an interval)")
}

// bind adds the flags to cmd, the run flags with the command's defaults.
func (f *workloadFlags) bind(cmd *cobra.Command, engines *engine.Registry, def workload.Definition, defaults runFlags) {
	fs := cmd.Flags()
	f.def = def
	f.run.register(fs, engines, defaults)
	f.settings = def.New()
	before := flagNames(fs)
	def.BindFlags(f.settings, fs)
	markGroup(fs, before, workloadGroup)
	if def.RunDefaults.OwnSteps != "" {
		// The workload's own flags set its users.
		fs.MarkHidden("users")
	}
}

// newWorkloadCmd is the command of a registered workload: its help and
// flags come from the definition.
func newWorkloadCmd(app *App, def workload.Definition) *cobra.Command {
	var f workloadFlags
	h := def.Help
	cmd := &cobra.Command{
		Use:     def.Name,
		Short:   h.Short,
		Long:    h.Long,
		Example: h.Example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.dryRun {
				plan, err := workloadPlan(app, f, def.Name, nil)
				if err != nil {
					return err
				}
				return workloadDryRun(app, f, plan)
			}
			ctx, done, withBarrier, err := tenantContext(cmd.Context(), app, f)
			if err != nil {
				return err
			}
			defer done()
			return executeRepeatable(ctx, app, f.repeat, f.gates, func() (runner.Plan, error) {
				plan, err := workloadPlan(app, f, def.Name, nil)
				withBarrier(&plan)
				return plan, err
			})
		},
	}
	f.bindCommand(cmd, app.Engines, def)
	bindDryRun(cmd, &f.dryRun)
	groupFlagsInHelp(cmd, def.Title+" settings")
	return cmd
}

// bindCommand adds every flag of a workload's command to cmd: the command
// line's, and the one a suite's run on hosts is resolved through.
func (f *workloadFlags) bindCommand(cmd *cobra.Command, engines *engine.Registry, def workload.Definition) {
	d := def.RunDefaults
	f.bind(cmd, engines, def, runFlags{engine: "sqlite", users: d.Users, rampup: d.RampUp, step: d.Step})
	f.pace.register(cmd.Flags())
	f.bindRepeat(cmd)
	f.run.registerSteady(cmd.Flags())
	f.tenants.register(cmd.Flags())
	cmd.Flags().BoolVar(&f.capture, "capture", false, "record the block I/O of the devices under the data and log targets while the steps run (as dbio capture does; needs root), into the results directory, for dbio replay RESULTS_DIR --target DIR")
}

// workloadPlan validates the flags, all problems at once, and resolves them
// into a runner plan of the given kind ("tpcc", or "quick" for TPC-C with a
// device pass first). Its body is the user steps, or the goal search the
// flags ask for; scenario, when set, gives the body the run has instead
// (backup cycles, the noisy-neighbour study), from the plan and the user
// steps the flags ask for.
func workloadPlan(app *App, f workloadFlags, kind string, scenario func(p *runner.Plan, steps runner.Steps) (runner.Body, error)) (runner.Plan, error) {
	problems := f.settings.Validate()
	steps := f.def.RunDefaults.OwnSteps
	if o, ok := f.settings.(workload.StepsOwner); ok && steps == "" {
		steps = o.OwnSteps()
	}
	if steps != "" && f.run.flags.Changed("users") {
		problems = append(problems, fmt.Errorf("--users: %s", steps))
	}
	// The pacing is checked against the users asked for; a workload that
	// steps its own users probes a goal with its first step's.
	asked, _ := workload.ParseUsers(f.run.users) // a bad list is reported below
	users, _ := f.settings.Steps(asked)
	if f.def.RunDefaults.OwnSteps != "" && len(users) > 0 {
		users = users[:1]
	}
	pacing, search, pacingProblems := f.pace.resolve(users, f.run.flags != nil && f.run.flags.Changed("users"))
	problems = append(problems, pacingProblems...)
	// On hosts, each host's dbio checks its own target and engine; a
	// server driven from here is checked by its DSN.
	f.run.onHosts = f.onHosts() && !(f.coordinatorDrives() && (f.run.dsn != "" || f.run.dsnFile != ""))
	r, err := f.run.resolveWith(app.SysFS, f.def.Name, problems)
	if err != nil {
		return runner.Plan{}, err
	}
	built, err := workload.Build(f.settings, workload.BuildOptions{Users: r.users, SkipChecks: f.run.skipChecks})
	if err != nil {
		return runner.Plan{}, err
	}
	if err := f.pace.checkType(search, built.Workload.TxTypes()); err != nil {
		return runner.Plan{}, err
	}
	if search != nil && r.precision != nil {
		return runner.Plan{}, usagef("--precision: a goal search's probes each judge a rate over their whole --runtime: drop --precision, or run the rate --goal finds as a step of its own with --precision")
	}
	if g, err := f.gates.resolve(app); err != nil {
		return runner.Plan{}, err
	} else if err := g.checkTxTypes(built.Workload.TxTypes()); err != nil {
		return runner.Plan{}, err
	}
	r.options.Fresh = !built.Reuse
	name := f.run.name
	if name == "" {
		name = kind + "-" + r.engine.Name()
	}
	plan := runner.Plan{Setup: runner.Setup{
		Name:          name,
		Kind:          kind,
		Command:       app.Args,
		Engine:        r.engine,
		EngineOptions: r.options,
		Workload:      built.Workload,
		SpaceNeeded:   built.SpaceNeeded,
		SkipChecks:    f.run.skipChecks,
		ResultsBase:   f.run.results,
		Limits:        r.limits,
		DropAfter:     f.run.dropAfter,
	}}
	userSteps := runner.Steps{Users: built.Users, RampUp: f.run.rampup, Step: f.run.step, Steady: r.steady, Precision: r.precision}
	if built.Ceiling != nil {
		c := analysis.Ceiling(*built.Ceiling)
		userSteps.StopWhen = c.Stop
		userSteps.Conclude = func(steps []results.Step, stopped bool) []results.Figure {
			figs := c.Conclude(steps, stopped)
			fmt.Fprintln(app.Stdout, c.Verdict(figs))
			return figs
		}
	}
	plan.Body = userSteps
	if pacing != nil {
		// The schedule draws from the run's recorded seed: --seed again
		// gives the same arrivals.
		pacing.Seed = built.Seed
		userSteps.Pacing = pacing
		plan.Body = userSteps
		if search != nil {
			// The probes replace the user steps, and a stepping workload's
			// own stop and conclusion with the search's answer.
			g := *search
			g.RampUp, g.Step, g.Steady, g.Pacing = userSteps.RampUp, userSteps.Step, userSteps.Steady, pacing
			plan.Body = g
		}
	}
	// The scenario's own problems come after the run's: a run on hosts
	// names what it cannot take first.
	var scenarioErr error
	if scenario != nil {
		plan.Body, scenarioErr = scenario(&plan, userSteps)
	}
	recordedTarget := f.run.target
	if f.onHosts() && f.tenants.driver == suite.DriverHost {
		// A run of tenants records every host's target.
		recordedTarget = strings.Join(f.run.targets, ",")
	}
	if plan.Config, err = plan.RunConfig(userSteps, f.def.Name, recordedTarget, f.run.logTarget, built.Stepping, built.Recorded); err != nil {
		return plan, err
	}
	if r.options.DSN == "" {
		plan.DataPath, plan.LogPath = f.run.target, f.run.logTarget
		plan.CreateTargets = f.run.createTarget
	}
	if f.capture {
		if plan.Beside, err = stepsCapture(app, plan, f.onHosts(), scenario != nil || search != nil); err != nil {
			return plan, err
		}
	}
	if f.onHosts() {
		if plan, err = tenantsPlan(app, f, plan); err != nil {
			return plan, err
		}
		return plan, scenarioErr
	}
	if f.tenants.registered && f.tenants.driver != suite.DriverHost {
		// The server of a run of this machine is on this machine, next to
		// its driver: host is what it is already.
		return runner.Plan{}, usagef("--driver %s: chooses where the users run for a --target on a host (NAME:/path); a run of this machine drives its server here: drop --driver", f.tenants.driver)
	}
	if f.tenants.registered && f.run.flags.Changed("node-exporter") {
		// This machine is sampled through /proc, not an exporter.
		return runner.Plan{}, usagef("--node-exporter: reads the server's host with --driver coordinator and a --target on that host (NAME:/path); a run of this machine samples it itself: drop --node-exporter")
	}
	return plan, scenarioErr
}

// executePlan runs a plan, prints the summary rendered from its results
// directory, and turns the outcome into the command's error.
func executePlan(ctx context.Context, app *App, plan runner.Plan, g gates) error {
	env, done, err := runnerEnv(app)
	if err != nil {
		return err
	}
	defer done()
	env.StepThresholds = g.stepThresholds()
	out, runErr := runner.Run(ctx, plan, env)
	if runner.IsBadInput(runErr) {
		// Found before anything was written: bad input, with every problem.
		return &usageError{msg: runErr.Error()}
	}
	var judged []judgedRun
	if out.Dir != "" {
		judged = g.judge(app, out.Dir)
		if l, err := results.Load(out.Dir); err == nil {
			report.Text(app.Stdout, l, reportOptions(app))
		}
		writeRunReport(app, out.Dir)
	}
	gateErr := g.verdict(app, judged)
	if out.LeftOnServer != "" {
		fmt.Fprintln(app.Stdout, out.LeftOnServer)
	}
	if runErr != nil {
		if out.Status == results.StatusInterrupted {
			return fmt.Errorf("%w: %v", errInterrupted, runErr)
		}
		return runErr
	}
	for _, c := range out.Checks {
		if !c.Passed && !c.Skipped {
			return fmt.Errorf("consistency check failed: %s", c.Name)
		}
	}
	return gateErr
}

// executeRepeatable runs the plan build makes once, or, with --repeat N,
// N times into one repeat set, each repeat with a plan of its own.
func executeRepeatable(ctx context.Context, app *App, repeat int, gf gateFlags, build func() (runner.Plan, error)) error {
	if repeat < 1 {
		return usagef("--repeat %d: run at least once (--repeat 5 runs five times)", repeat)
	}
	g, err := gf.resolve(app)
	if err != nil {
		return err
	}
	plan, err := build()
	if err != nil {
		return err
	}
	if repeat == 1 {
		return executePlan(ctx, app, plan, g)
	}
	env, done, err := runnerEnv(app)
	if err != nil {
		return err
	}
	defer done()
	env.StepThresholds = g.stepThresholds()
	out, runErr := runner.RunRepeated(ctx, runner.Repeats{N: repeat, Plan: func(rep int) (runner.Plan, error) {
		if rep == 1 {
			return plan, nil
		}
		return build()
	}}, env)
	return repeatsDone(app, out, runErr, g)
}

// repeatsDone ends a command's repeat set, whatever kind of run it
// repeated: each repeat's report, the set's summary and report rendered
// from its directory, and the outcome as the command's error.
func repeatsDone(app *App, out runner.RepeatOutcome, runErr error, g gates) error {
	if runner.IsBadInput(runErr) {
		return &usageError{msg: runErr.Error()}
	}
	var dirs []string
	for _, o := range out.Runs {
		dirs = append(dirs, o.Dir)
	}
	judged := g.judge(app, dirs...)
	for _, o := range out.Runs {
		if _, err := report.WriteRunReport(o.Dir, reportOptions(app)); err != nil {
			fmt.Fprintf(app.Stdout, "warning: report of %s not written: %v\n", o.Dir, err)
		}
	}
	if len(out.Runs) > 0 {
		if err := report.RepeatText(app.Stdout, out.Dir, reportOptions(app)); err != nil {
			fmt.Fprintf(app.Stdout, "warning: %v\n", err)
		}
		if path, err := report.WriteRepeatReport(out.Dir, reportOptions(app)); err == nil {
			fmt.Fprintf(app.Stdout, "repeat set: %s\nreport:     %s\n", out.Dir, path)
		} else {
			fmt.Fprintf(app.Stdout, "warning: report not written: %v\n", err)
		}
	}
	gateErr := g.verdict(app, judged)
	if runErr != nil && out.Status == results.StatusInterrupted {
		return fmt.Errorf("%w: %v", errInterrupted, runErr)
	}
	if runErr != nil {
		return runErr
	}
	return gateErr
}

// writeRunReport writes the report of one run (a workload's, a disk or
// fleet run's) in its directory and says where, or why it could not: the
// run's results stand without it.
func writeRunReport(app *App, dir string) {
	if path, err := report.WriteRunReport(dir, reportOptions(app)); err == nil {
		fmt.Fprintf(app.Stdout, "report:  %s\n", path)
	} else {
		fmt.Fprintf(app.Stdout, "warning: report not written: %v\n", err)
	}
}

// reportOptions are the options of every report dbio writes: its version,
// the clock, and the registered workloads' titles.
func reportOptions(app *App) report.Options {
	return report.Options{Now: app.Now, Version: version(), Titles: workloads().Title, SettingFlag: workloads().Flag}
}
