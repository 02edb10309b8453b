package main

import (
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/fio"
	"dbio/internal/runner"
	"dbio/internal/workload/tpcc"
)

func init() { commandConstructors = append(commandConstructors, newQuickCmd) }

// quickDefaults keep dbio quick under three minutes on a 2-core machine: a
// short four-corners pass (the corners and the two log-write points, 4 s
// each), a one-warehouse TPC-C database on SQLite and three short user steps.
var quickDefaults = runFlags{
	engine: "sqlite",
	target: "dbio-data",
	users:  "1,2,4",
	rampup: 5 * time.Second,
	step:   20 * time.Second,
}

func newQuickCmd(app *App) *cobra.Command {
	var f workloadFlags
	var diskRuntime time.Duration
	cmd := &cobra.Command{
		Use:   "quick",
		Short: "The embedded default: the device and TPC-C on SQLite side by side, in under three minutes",
		Long: `Characterize the target's device with a short four-corners fio pass, which
ends with what a commit's log write costs there (8k and 16k sequential writes,
one at a time, O_DSYNC: p50 and p99), then build a one-warehouse TPC-C
database on SQLite in the target directory (default ./dbio-data, created when
missing; a --target you name must exist, or pass --create-target), run a short
user sequence, print a summary table, and write a results directory with
report.html. Every flag of 'dbio tpcc' applies.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if diskRuntime < 0 {
				return usagef("--disk-runtime %s: must not be negative (0 skips the fio pass)", diskRuntime)
			}
			var devicePass *runner.FioPhase
			if diskRuntime > 0 {
				// Without fio the TPC-C part still runs: the pass is skipped with a warning.
				devicePass = &runner.FioPhase{Config: fio.QuickCorners(diskRuntime), Exec: app.Exec, Optional: true}
			}
			if !cmd.Flags().Changed("target") {
				// dbio quick's own default (./dbio-data) is made on first use;
				// a target the user names must exist, or be asked for with --create-target.
				f.run.createTarget = true
			}
			if f.dryRun {
				plan, err := workloadPlan(app, f, "quick", nil)
				if err != nil {
					return err
				}
				plan.Fio = devicePass
				return workloadDryRun(app, f, plan)
			}
			return executeRepeatable(cmd.Context(), app, f.repeat, f.gates, func() (runner.Plan, error) {
				plan, err := workloadPlan(app, f, "quick", nil)
				plan.Fio = devicePass
				if devicePass != nil && err == nil && !f.settings.LoadingSettings().Reuse {
					// The device pass's time left of the run counts the
					// load's estimate; the runner adds the steps.
					pass := *devicePass
					pass.Config.After = loadEstimate(f.settings, plan).Load
					plan.Fio = &pass
				}
				return plan, err
			})
		},
	}
	f.bind(cmd, app.Engines, tpcc.Definition(), quickDefaults)
	f.pace.register(cmd.Flags())
	f.bindRepeat(cmd)
	f.run.registerSteady(cmd.Flags())
	setUsage(cmd.Flags(), "runtime", "measured time of each TPC-C step (each user count); --disk-runtime times the device pass")
	bindDryRun(cmd, &f.dryRun)
	cmd.Flags().DurationVar(&diskRuntime, "disk-runtime", 3*time.Second, "measured time of each point of the four-corners device pass, its log-write points included (0 skips the pass)")
	groupFlagsInHelp(cmd, "TPC-C settings")
	return cmd
}
