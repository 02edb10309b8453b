package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/iolimit"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/workload/as3ap"
)

func init() { commandConstructors = append(commandConstructors, newAS3APCmd) }

type as3apFlags struct {
	run         runFlags
	opts        as3ap.Config
	start, add  int
	maxUsers    int
	ceiling     time.Duration
	ceilingStat string
}

func newAS3APCmd(app *App) *cobra.Command {
	var f as3apFlags
	cmd := &cobra.Command{
		Use:   "as3ap",
		Short: "AS3AP-style stress: interactive users added step by step over batch jobs until response time passes a ceiling",
		Long: `Build the four AS3AP relations (uniques, hundred, tenpct, updates) with --rows
rows each on a database engine whose files sit on the target, start --batch-jobs
background jobs that each read and update --batch-rows rows per transaction
continuously, and add interactive users (single-row transactions, no think
time) step by step: --start users first, --add more each step, until the
interactive response time (--ceiling-stat: mean, p95 or p99) passes --ceiling
or --max-users is reached. The run reports the largest load kept under the
ceiling, and per step the TPS and response time of interactive and batch work
apart.`,
		Example: `  dbio as3ap --engine mariadb --target /mnt/nvme --rows 1000000 --batch-jobs 3 \
            --start 1 --add 5 --ceiling 100ms --step 1m --rampup 10s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := as3apPlan(app, f, cmd.Flags().Changed("users"))
			if err != nil {
				return err
			}
			return executePlan(cmd.Context(), app, plan)
		},
	}
	fs := cmd.Flags()
	f.run.register(fs, app.Engines, runFlags{engine: "sqlite", users: "1", rampup: 10 * time.Second, step: time.Minute})
	// Users come from --start, --add and --max-users here.
	fs.MarkHidden("users")
	f.opts = as3ap.DefaultConfig()
	fs.IntVar(&f.opts.Rows, "rows", f.opts.Rows, "rows in each of the four relations (about 200 bytes each with indexes)")
	fs.IntVar(&f.opts.BatchJobs, "batch-jobs", f.opts.BatchJobs, "background batch jobs, running through every step")
	fs.IntVar(&f.opts.BatchRows, "batch-rows", f.opts.BatchRows, "rows each batch transaction reads and then updates (at least 100)")
	fs.Uint64Var(&f.opts.Seed, "seed", f.opts.Seed, "random seed for data and transaction inputs (recorded; same seed, same data)")
	fs.IntVar(&f.opts.LoadWorkers, "load-workers", 0, "relations loaded in parallel (0: engine's best)")
	fs.BoolVar(&f.opts.Reuse, "reuse", false, "keep relations already loaded by dbio at this row count instead of rebuilding them")
	fs.IntVar(&f.start, "start", 1, "interactive users in the first step")
	fs.IntVar(&f.add, "add", 5, "interactive users added at each step")
	fs.IntVar(&f.maxUsers, "max-users", 500, "stop after the step with this many users even under the ceiling")
	fs.DurationVar(&f.ceiling, "ceiling", 100*time.Millisecond, "interactive response time that ends the stepping once passed")
	fs.StringVar(&f.ceilingStat, "ceiling-stat", "mean", "statistic of the interactive response time held to the ceiling: mean, p95 or p99")
	return cmd
}

// as3apConfig is the resolved configuration recorded in run.json.
type as3apConfig struct {
	Engine        string         `json:"engine"`
	Target        string         `json:"target,omitempty"`
	LogTarget     string         `json:"log_target,omitempty"`
	Users         []int          `json:"users"`
	Start         int            `json:"start"`
	Add           int            `json:"add"`
	MaxUsers      int            `json:"max_users"`
	CeilingMS     float64        `json:"ceiling_ms"`
	CeilingStat   string         `json:"ceiling_stat"`
	RampUpS       float64        `json:"rampup_s"`
	StepS         float64        `json:"step_s"`
	AS3AP         as3ap.Config   `json:"as3ap"`
	EngineOptions engineOptions  `json:"engine_options"`
	Limits        iolimit.Limits `json:"limits,omitzero"`
}

// as3apPlan validates the flags, all problems at once, and resolves them
// into a stepping plan: users from --start by --add up to --max-users,
// stopped by the response-time ceiling.
func as3apPlan(app *App, f as3apFlags, usersGiven bool) (runner.Plan, error) {
	errs := f.opts.Validate()
	if usersGiven {
		errs = append(errs, errors.New("--users: as3ap steps its users: use --start, --add and --max-users"))
	}
	if f.start < 1 {
		errs = append(errs, fmt.Errorf("--start %d: at least 1 interactive user", f.start))
	}
	if f.add < 1 {
		errs = append(errs, fmt.Errorf("--add %d: add at least 1 user per step", f.add))
	}
	if f.maxUsers < f.start || f.maxUsers > 100000 {
		errs = append(errs, fmt.Errorf("--max-users %d: use a count from --start (%d) to 100000", f.maxUsers, f.start))
	}
	if f.ceiling <= 0 {
		errs = append(errs, fmt.Errorf("--ceiling %s: use a positive response time, e.g. 100ms", f.ceiling))
	}
	figure, err := as3ap.InteractiveFigure(f.ceilingStat)
	if err != nil {
		errs = append(errs, err)
	}
	r, err := f.run.resolveWith("as3ap", errs)
	if err != nil {
		return runner.Plan{}, err
	}
	var users []int
	for u := f.start; u <= f.maxUsers; u += f.add {
		users = append(users, u)
	}
	r.options.Fresh = !f.opts.Reuse
	name := f.run.name
	if name == "" {
		name = "as3ap-" + r.engine.Name()
	}
	ceiling := runner.Ceiling{Figure: figure, Max: float64(f.ceiling) / float64(time.Millisecond), Unit: "ms"}
	plan := runner.Plan{
		Name:    name,
		Kind:    "as3ap",
		Command: app.Args,
		Config: as3apConfig{
			Engine: r.engine.Name(), Target: f.run.target, LogTarget: f.run.logTarget, Users: users,
			Start: f.start, Add: f.add, MaxUsers: f.maxUsers, CeilingMS: ceiling.Max, CeilingStat: f.ceilingStat,
			RampUpS: f.run.rampup.Seconds(), StepS: f.run.step.Seconds(), AS3AP: f.opts, Limits: r.limits,
			EngineOptions: engineOptions{BufferPoolBytes: r.options.BufferPool, Settings: r.options.Settings,
				External: r.options.DSN != "", Database: r.options.Database, Transport: f.run.transport},
		},
		Engine:        r.engine,
		EngineOptions: r.options,
		Workload:      as3ap.New(f.opts),
		SpaceNeeded:   as3ap.EstimatedBytes(f.opts),
		Users:         users,
		RampUp:        f.run.rampup,
		Step:          f.run.step,
		SkipChecks:    f.run.skipChecks,
		ResultsBase:   f.run.results,
		Limits:        r.limits,
		StopWhen:      ceiling.Stop,
		Conclude: func(steps []results.Step, stopped bool) []results.Figure {
			figs := ceiling.Conclude(steps, stopped)
			fmt.Fprintln(app.Stdout, ceilingVerdict(ceiling, f.ceilingStat, figs))
			return figs
		},
	}
	if r.options.DSN == "" {
		plan.DataPath, plan.LogPath = f.run.target, f.run.logTarget
		plan.CreateTargets = f.run.createTarget
	}
	return plan, nil
}

// ceilingVerdict is the one line that answers the stepping run's question.
func ceilingVerdict(c runner.Ceiling, stat string, figs []results.Figure) string {
	v := map[results.FigureName]float64{}
	for _, f := range figs {
		v[f.Name] = f.Value
	}
	users := int(v[runner.FigureMaxUsersUnderCeiling])
	switch {
	case users == 0:
		return fmt.Sprintf("largest load under the %s ms %s ceiling: none (the first step was over it)", number(c.Max), stat)
	case v[runner.FigureCeilingReached] == 0:
		return fmt.Sprintf("largest load under the %s ms %s ceiling: at least %d interactive users (%s %.2f ms); the ceiling was not reached, raise --max-users to find it",
			number(c.Max), stat, users, stat, v[results.AtMaxUsers(c.Figure)])
	default:
		return fmt.Sprintf("largest load under the %s ms %s ceiling: %d interactive users (%s %.2f ms)",
			number(c.Max), stat, users, stat, v[results.AtMaxUsers(c.Figure)])
	}
}

func number(v float64) string { return fmt.Sprintf("%g", v) }
