package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/iolimit"
	"dbio/internal/runner"
	"dbio/internal/workload/sysbench"
)

func init() { commandConstructors = append(commandConstructors, newSysbenchCmd) }

type sysbenchFlags struct {
	run  runFlags
	opts sysbench.Config
}

func newSysbenchCmd(app *App) *cobra.Command {
	var f sysbenchFlags
	cmd := &cobra.Command{
		Use:   "sysbench",
		Short: "Run sysbench's OLTP workloads (sysbench 1.0 semantics) on an engine placed on the storage under test",
		Long: `Run one of sysbench 1.0's OLTP workloads, built into dbio, on a database
engine whose files sit on the target: the sbtest1..N tables with sysbench's data,
and its transaction shapes with the same query counts, so that TPS, QPS and
latency mean what they mean in a sysbench report. One timed step per user
count after a ramp-up; figures per step and per second: TPS, QPS, mean, p95 and
p99 latency, errors and reconnects.

Row ids are drawn uniformly by default. sysbench 1.0.20 itself defaults to
--rand-type=special (75 % of accesses on 1 % of the rows): pass
--rand-type special to reproduce a sysbench 1.0 run made with its defaults.`,
		Example: `  dbio sysbench --engine mariadb --target /mnt/nvme --tables 8 --table-size 1000000 \
               --workload oltp_read_write --users 1,8,32 --step 5m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := sysbenchPlan(app, f)
			if err != nil {
				return err
			}
			return executePlan(cmd.Context(), app, plan)
		},
	}
	fs := cmd.Flags()
	f.run.register(fs, app.Engines, runFlags{engine: "sqlite", users: "1,8,32", rampup: 30 * time.Second, step: 2 * time.Minute})
	f.opts = sysbench.DefaultConfig()
	fs.IntVar(&f.opts.Tables, "tables", f.opts.Tables, "number of sbtest tables")
	fs.IntVar(&f.opts.TableSize, "table-size", f.opts.TableSize, "rows per table (about 250 bytes each on disk)")
	fs.StringVar(&f.opts.Workload, "workload", f.opts.Workload, "transaction shape: "+strings.Join(sysbench.Workloads, ", "))
	fs.StringVar(&f.opts.RandType, "rand-type", f.opts.RandType, "distribution of row ids: uniform, special (sysbench 1.0's default), gaussian or pareto")
	fs.IntVar(&f.opts.RangeSize, "range-size", f.opts.RangeSize, "rows per range query")
	fs.BoolVar(&f.opts.SkipTrx, "skip-trx", f.opts.SkipTrx, "run every query in autocommit mode, without BEGIN and COMMIT")
	fs.Uint64Var(&f.opts.Seed, "seed", f.opts.Seed, "random seed for data and transaction inputs (recorded; same seed, same data)")
	fs.IntVar(&f.opts.LoadWorkers, "load-workers", 0, "tables loaded in parallel (0: engine's best)")
	fs.BoolVar(&f.opts.Reuse, "reuse", false, "keep tables already loaded by dbio at this count and size instead of rebuilding them")
	return cmd
}

// sysbenchConfig is the resolved configuration recorded in run.json.
type sysbenchConfig struct {
	Engine        string          `json:"engine"`
	Target        string          `json:"target,omitempty"`
	LogTarget     string          `json:"log_target,omitempty"`
	Users         []int           `json:"users"`
	RampUpS       float64         `json:"rampup_s"`
	StepS         float64         `json:"step_s"`
	Sysbench      sysbench.Config `json:"sysbench"`
	EngineOptions engineOptions   `json:"engine_options"`
	Limits        iolimit.Limits  `json:"limits,omitzero"`
}

// sysbenchPlan validates the flags, all problems at once, and resolves them into a plan.
func sysbenchPlan(app *App, f sysbenchFlags) (runner.Plan, error) {
	r, err := f.run.resolveWith("sysbench", f.opts.Validate())
	if err != nil {
		return runner.Plan{}, err
	}
	r.options.Fresh = !f.opts.Reuse
	name := f.run.name
	if name == "" {
		name = "sysbench-" + r.engine.Name()
	}
	plan := runner.Plan{
		Name:    name,
		Kind:    "sysbench",
		Command: app.Args,
		Config: sysbenchConfig{
			Engine: r.engine.Name(), Target: f.run.target, LogTarget: f.run.logTarget, Users: r.users,
			RampUpS: f.run.rampup.Seconds(), StepS: f.run.step.Seconds(), Sysbench: f.opts, Limits: r.limits,
			EngineOptions: engineOptions{BufferPoolBytes: r.options.BufferPool, Settings: r.options.Settings,
				External: r.options.DSN != "", Database: r.options.Database, Transport: f.run.transport},
		},
		Engine:        r.engine,
		EngineOptions: r.options,
		Workload:      sysbench.New(f.opts),
		SpaceNeeded:   sysbench.EstimatedBytes(f.opts),
		Users:         r.users,
		RampUp:        f.run.rampup,
		Step:          f.run.step,
		SkipChecks:    f.run.skipChecks,
		ResultsBase:   f.run.results,
		Limits:        r.limits,
	}
	if r.options.DSN == "" {
		plan.DataPath, plan.LogPath = f.run.target, f.run.logTarget
		plan.CreateTargets = f.run.createTarget
	}
	return plan, nil
}
