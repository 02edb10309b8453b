package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/runner"
	"dbio/internal/suite"
	"dbio/internal/workload/tpcc"
)

func init() {
	commandConstructors = append(commandConstructors, newBackupCmd, newNoisyCmd)
}

var scenarioDefaults = runFlags{engine: "sqlite", users: "1", rampup: 10 * time.Second, step: time.Minute}

func newBackupCmd(app *App) *cobra.Command {
	var f workloadFlags
	var b runner.Backups
	var backupTarget string
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Backup and restore cycles of a TPC-C database with the engine's native tools",
		Long: `Build a TPC-C database on the target, then run backup (and, with --restore,
restore) cycles with the engine's native tools: SQLite's online backup API,
pg_basebackup, mariadb-backup. Per cycle: duration, bytes, mean and per-second
MB/s, and the disk latency while it ran; restores are verified by the TPC-C
consistency conditions (and row counts when the database was idle).`,
		Example: `  dbio backup --engine postgres --target /mnt/nvme --backup-target /mnt/sata --warehouses 10 --cycles 3 --restore`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseFlags(cmd.Flags(), "does not apply to dbio backup, which runs backup cycles instead of timed user steps; --load-users sets the users running during each backup",
				"users", "runtime", "ramp-time"); err != nil {
				return err
			}
			plan := func() (runner.Plan, error) {
				return workloadPlan(app, f, "backup", func(plan *runner.Plan, _ runner.Steps) (runner.Body, error) {
					if b.Cycles < 1 {
						return nil, usagef("--cycles %d: run at least one cycle", b.Cycles)
					}
					if b.Users < 0 || b.Interval < 0 {
						return nil, usagef("--load-users and --interval must not be negative")
					}
					plan.BackupPath = backupTarget
					return b, nil
				})
			}
			if f.dryRun {
				p, err := plan()
				if err != nil {
					return err
				}
				return workloadDryRun(app, f, p)
			}
			return executeRepeatable(cmd.Context(), app, f.repeat, f.gates, plan)
		},
	}
	f.bind(cmd, app.Engines, tpcc.Definition(), scenarioDefaults)
	fs := cmd.Flags()
	// Backup cycles replace the timed user steps: the step flags have no use here.
	for _, name := range []string{"users", "runtime", "ramp-time"} {
		_ = fs.MarkHidden(name)
	}
	fs.StringVar(&backupTarget, "backup-target", "", "directory for the backups (default: the data target)")
	fs.IntVar(&b.Cycles, "cycles", 3, "backup cycles")
	fs.BoolVar(&b.Restore, "restore", false, "restore after each backup and verify the restored database")
	fs.DurationVar(&b.Interval, "interval", 0, "pause between cycles")
	fs.IntVar(&b.Users, "load-users", 0, "TPC-C users running during each backup (0: back up an idle database)")
	f.bindRepeat(cmd)
	bindDryRun(cmd, &f.dryRun)
	groupOwnFlags(cmd, "Backup cycles", "backup-target", "cycles", "restore", "interval", "load-users")
	groupFlagsInHelp(cmd, "TPC-C settings")
	return cmd
}

// noisyCommand is dbio noisy's flags: the command line's, and those a
// suite's noisy-neighbour run on hosts is resolved through.
type noisyCommand struct {
	f            workloadFlags
	n            runner.Noisy
	backupTarget string
}

func newNoisyCmd(app *App) *cobra.Command {
	var nc noisyCommand
	cmd := &cobra.Command{
		Use:   "noisy",
		Short: "Noisy neighbours: several tenant databases on one storage, some backing up on a schedule",
		Long: `Start --tenants managed instances on the shared target, each with its own
TPC-C database, and run them all at once for --runtime (the quiet baseline); then
the last --backup-tenants stop their workload and take a backup every
--interval for --cycles cycles while the others keep running. Reports each
tenant's TPM and NOPM against the baseline, aggregate IOPS and latency
timelines with each backup marked, and each backup's duration.

With --host and --target NAME:/path (one per host), dbio runs on every host
at once, each with its own --tenants and backups on its target, both phases
started on all hosts at one instant; the run's figures are the hosts'
summed, and each host's backups are marked on the fleet's timelines (see
docs/fleet.md).`,
		Example: `  dbio noisy --engine postgres --target /mnt/nvme --tenants 12 --backup-tenants 4 \
             --users 8 --interval 100s --cycles 10 --buffer-pool 256MB
  dbio noisy --engine postgres --host db1=admin@10.0.0.21 --host db2=admin@10.0.0.22 \
             --target db1:/srv/db --target db2:/srv/db --tenants 6 --backup-tenants 2 --interval 100s --cycles 10`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if nc.f.dryRun {
				plan, err := nc.plan(app)
				if err != nil {
					return err
				}
				return workloadDryRun(app, nc.f, plan)
			}
			ctx, done, withBarrier, err := tenantContext(cmd.Context(), app, nc.f)
			if err != nil {
				return err
			}
			defer done()
			return executeRepeatable(ctx, app, nc.f.repeat, nc.f.gates, func() (runner.Plan, error) {
				plan, err := nc.plan(app)
				withBarrier(&plan)
				return plan, err
			})
		},
	}
	nc.bind(cmd, app)
	groupOwnFlags(cmd, "Tenants and backups", "tenants", "backup-tenants", "backup-target", "cycles", "interval")
	groupFlagsInHelp(cmd, "TPC-C settings")
	return cmd
}

// bind adds dbio noisy's flags to cmd.
func (nc *noisyCommand) bind(cmd *cobra.Command, app *App) {
	nc.f.bind(cmd, app.Engines, tpcc.Definition(), scenarioDefaults)
	fs := cmd.Flags()
	setUsage(fs, "users", "virtual users of each tenant: one count, e.g. 8")
	setUsage(fs, "runtime", "length of the quiet baseline, all tenants running TPC-C before any backup")
	setUsage(fs, "ramp-time", "warm-up before the baseline, excluded from its figures")
	fs.StringVar(&nc.backupTarget, "backup-target", "", "directory for the tenants' backups (default: each tenant's own directory)")
	fs.IntVar(&nc.n.Tenants, "tenants", 2, "tenant instances (on hosts: on each host)")
	fs.IntVar(&nc.n.BackupTenants, "backup-tenants", 0, "tenants that back up during the interference phase instead of running TPC-C (on hosts: on each host)")
	fs.DurationVar(&nc.n.Interval, "interval", 100*time.Second, "time between the starts of a tenant's backups")
	fs.IntVar(&nc.n.Cycles, "cycles", 1, "backups per backup tenant")
	nc.f.bindRepeat(cmd)
	bindDryRun(cmd, &nc.f.dryRun)
	// On hosts (--host, --target NAME:/path), each host's dbio runs its own
	// tenants and backups on its target, all hosts' phases at one instant.
	nc.f.tenants.register(fs)
	nc.f.tenants.command = "noisy"
}

// plan is the run the flags ask for.
func (nc *noisyCommand) plan(app *App) (runner.Plan, error) {
	return noisyPlan(app, nc.f, nc.n, nc.backupTarget)
}

// noisyPlan is a noisy-neighbour run's plan, its own flags checked.
func noisyPlan(app *App, f workloadFlags, n runner.Noisy, backupTarget string) (runner.Plan, error) {
	if f.tenants.driver != suite.DriverHost {
		return runner.Plan{}, usagef("--driver %s: a noisy-neighbour run's tenants are servers dbio starts on each host's target and drives there: drop --driver", f.tenants.driver)
	}
	return workloadPlan(app, f, "noisy", func(plan *runner.Plan, steps runner.Steps) (runner.Body, error) {
		var errs []error
		if f.onHosts() && backupTarget != "" {
			errs = append(errs, errors.New("--backup-target: not on hosts yet: each host's tenants back up into their own directories on its target; drop --backup-target"))
		}
		if n.Tenants < 1 {
			errs = append(errs, errors.New("--tenants: at least 1"))
		}
		if n.BackupTenants < 0 || (n.BackupTenants > 0 && n.BackupTenants >= n.Tenants) {
			errs = append(errs, errors.New("--backup-tenants: between 0 and --tenants - 1"))
		}
		if n.BackupTenants > 0 && (n.Cycles < 1 || n.Interval <= 0) {
			errs = append(errs, errors.New("--cycles and --interval: backups need at least one cycle and a positive interval"))
		}
		if len(steps.Users) != 1 {
			errs = append(errs, errors.New("--users: give one count, the users of each tenant"))
		}
		if plan.EngineOptions.DSN != "" {
			errs = append(errs, errors.New("--dsn: tenants are managed instances dbio starts on the target"))
		}
		if len(errs) > 0 {
			return nil, usageErrors(errs)
		}
		n.Users, n.RampUp, n.Quiet = steps.Users[0], steps.RampUp, steps.Step
		plan.BackupPath = backupTarget
		return n, nil
	})
}
