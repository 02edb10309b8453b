package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/iolimit"
	"dbio/internal/report"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/target"
	"dbio/internal/workload/tpcc"
)

func init() { commandConstructors = append(commandConstructors, newTPCCCmd) }

type tpccFlags struct {
	run            runFlags
	warehouses     int
	keyingThinking bool
	seed           uint64
	loadWorkers    int
	reuse          bool
}

func newTPCCCmd(app *App) *cobra.Command {
	var f tpccFlags
	cmd := &cobra.Command{
		Use:   "tpcc",
		Short: "Run TPC-C on an engine placed on the storage under test",
		Long: `Run TPC-C (specification revision 5.11) on a database engine whose files sit on
the target: build the database (or reuse one with --reuse), run one timed step
per virtual-user count after a ramp-up, check the consistency conditions, and
write a results directory with TPM, NOPM and latency percentiles per step.`,
		Example: `  dbio tpcc --engine sqlite --target /mnt/nvme --warehouses 4 \
            --users 1,2,3,5,8 --rampup 30s --step 2m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTPCC(cmd.Context(), app, f, "tpcc", nil)
		},
	}
	registerTPCCFlags(cmd, &f, app.Engines, runFlags{engine: "sqlite", target: "", users: "1,2,3,5,8", rampup: 30 * time.Second, step: 2 * time.Minute})
	return cmd
}

// tpccConfig is the resolved configuration recorded in run.json.
type tpccConfig struct {
	Engine        string          `json:"engine"`
	Target        string          `json:"target,omitempty"`
	LogTarget     string          `json:"log_target,omitempty"`
	Users         []int           `json:"users"`
	RampUpS       float64         `json:"rampup_s"`
	StepS         float64         `json:"step_s"`
	TPCC          tpcc.Config     `json:"tpcc"`
	EngineOptions engineOptions   `json:"engine_options"`
	Limits        iolimit.Limits  `json:"limits,omitzero"`
	Backups       *runner.Backups `json:"backups,omitempty"`
	Noisy         *runner.Noisy   `json:"noisy,omitempty"`
}

type engineOptions struct {
	BufferPoolBytes int64             `json:"buffer_pool_bytes,omitempty"`
	Settings        map[string]string `json:"settings,omitempty"`
	External        bool              `json:"external"`
	Database        string            `json:"database"`
	Transport       string            `json:"transport"`
}

// runTPCC validates, runs and summarizes a TPC-C run; quick reuses it with a
// preface that characterizes the disk first.
func runTPCC(ctx context.Context, app *App, f tpccFlags, kind string, before func(ctx context.Context, dir *results.Dir, tgt *target.Target) (int, error)) error {
	plan, err := tpccPlan(app, f, kind)
	if err != nil {
		return err
	}
	plan.Before = before
	return executePlan(ctx, app, plan)
}

// tpccPlan validates the TPC-C flags and resolves them into a runner plan.
func tpccPlan(app *App, f tpccFlags, kind string) (runner.Plan, error) {
	cfg := tpcc.Config{Warehouses: f.warehouses, KeyingThinking: f.keyingThinking, Seed: f.seed, LoadWorkers: f.loadWorkers, Reuse: f.reuse, SkipChecks: f.run.skipChecks}
	r, err := f.run.resolveWith("tpcc", cfg.Validate())
	if err != nil {
		return runner.Plan{}, err
	}
	r.options.Fresh = !f.reuse
	name := f.run.name
	if name == "" {
		name = kind + "-" + r.engine.Name()
	}
	plan := runner.Plan{
		Name:    name,
		Kind:    kind,
		Command: app.Args,
		Config: tpccConfig{
			Engine: r.engine.Name(), Target: f.run.target, LogTarget: f.run.logTarget, Users: r.users,
			RampUpS: f.run.rampup.Seconds(), StepS: f.run.step.Seconds(), TPCC: cfg, Limits: r.limits,
			EngineOptions: engineOptions{BufferPoolBytes: r.options.BufferPool, Settings: r.options.Settings,
				External: r.options.DSN != "", Database: r.options.Database, Transport: f.run.transport},
		},
		Engine:        r.engine,
		EngineOptions: r.options,
		Workload:      tpcc.New(cfg),
		SpaceNeeded:   tpcc.EstimatedBytes(cfg.Warehouses),
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

// executePlan runs a plan, prints the summary rendered from its results
// directory, and turns the outcome into the command's error.
func executePlan(ctx context.Context, app *App, plan runner.Plan) error {
	out, runErr := runner.Run(ctx, plan, runnerEnv(app))
	if runner.IsBadInput(runErr) {
		// Found before anything was written: bad input, with every problem.
		return &usageError{msg: runErr.Error()}
	}
	if out.Dir != "" {
		if l, err := results.Load(out.Dir); err == nil {
			report.Text(app.Stdout, l)
		}
		if path, err := report.WriteRunReport(out.Dir, report.Options{Now: app.Now, Version: version()}); err == nil {
			fmt.Fprintf(app.Stdout, "report:  %s\n", path)
		} else {
			fmt.Fprintf(app.Stdout, "warning: report not written: %v\n", err)
		}
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
	return nil
}
