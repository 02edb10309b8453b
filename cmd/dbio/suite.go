package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/fio"
	"dbio/internal/report"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/suite"
	"dbio/internal/units"
	"dbio/internal/workload/as3ap"
	"dbio/internal/workload/sysbench"
	"dbio/internal/workload/tpcc"
)

func init() { commandConstructors = append(commandConstructors, newSuiteCmd) }

func newSuiteCmd(app *App) *cobra.Command {
	var dryRun, createTargets bool
	var resultsBase string
	cmd := &cobra.Command{
		Use:   "suite FILE.toml",
		Short: "Run a whole study from a suite file and compare its runs",
		Long: `Run every run of a suite file (targets with roles and limits, engines with
their settings, workloads, scenarios, and variants to cross), each into its own
results directory under one suite directory, then write a comparison report for
each group of runs that differ only in their variants. The whole file is
validated before anything starts, and every run's targets, DSN and free
space are checked before anything is written; --dry-run prints the expanded
plan with its estimated duration and disk space. See examples/ for one suite
per study.

An engine on an existing server takes its DSN from dsn, or, to keep the
password out of the file, from dsn_env (an environment variable holding the
DSN) or dsn_file (a file holding it); PGPASSWORD and MYSQL_PWD work too. The
DSN is recorded without its password.`,
		Example: `  dbio suite examples/nvme-vs-sata.toml --dry-run
  dbio suite examples/nvme-vs-sata.toml --create-target`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			suite.Engines = app.Engines.Names()
			plan, err := suite.Load(args[0], app.Getenv)
			if err != nil {
				var ps *suite.Problems
				if errors.As(err, &ps) {
					return &usageError{msg: "invalid suite:\n" + ps.Error()}
				}
				return err
			}
			if resultsBase != "" {
				plan.Results = resultsBase
			}
			if dryRun {
				return plan.DryRun(app.Stdout, estimate)
			}
			out, err := runner.RunSuite(cmd.Context(), runner.Suite{
				Plan:      plan,
				Workloads: suiteWorkloads,
				Engines:   app.Engines,
				Exec:      app.Exec,
				Compare:   compareRuns,
				Report: func(dir string) (string, error) {
					if l, err := results.Load(dir); err == nil {
						report.Text(app.Stdout, l)
					}
					return report.WriteRunReport(dir, report.Options{Now: app.Now, Version: version()})
				},
				Command:       app.Args,
				CreateTargets: createTargets,
			}, runnerEnv(app))
			if runner.IsBadInput(err) {
				// Found before anything was written: every problem of every run.
				return &usageError{msg: "the suite cannot start:\n  " + err.Error()}
			}
			if out.Dir != "" {
				fmt.Fprintf(app.Stdout, "\nsuite results: %s\n", out.Dir)
				for _, r := range out.Runs {
					line := fmt.Sprintf("  %-30s %-10s %s", r.Name, r.Status, r.Dir)
					if r.Error != "" {
						line += "  (" + r.Error + ")"
					}
					fmt.Fprintln(app.Stdout, line)
				}
			}
			if err != nil && cmd.Context().Err() != nil {
				return fmt.Errorf("%w: %v", errInterrupted, err)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the expanded plan with estimated duration and disk space, run nothing")
	cmd.Flags().BoolVar(&createTargets, "create-target", false, "create the suite's targets that do not exist; without it a missing target is refused, so that a typo or an unmounted mount point never benchmarks the disk underneath")
	cmd.Flags().StringVar(&resultsBase, "results", "", "directory for the suite's results (default: the file's results key, else ./results)")
	return cmd
}

// suiteWorkloads builds each kind of database workload from a suite run.
var suiteWorkloads = map[string]runner.WorkloadFactory{
	"tpcc": func(r suite.Run) (runner.Built, error) {
		cfg := tpcc.Config{Warehouses: r.Workload.Warehouses, KeyingThinking: r.Workload.KeyingThinking, Seed: 42}
		if errs := cfg.Validate(); len(errs) > 0 {
			return runner.Built{}, errors.Join(errs...)
		}
		return runner.Built{Workload: tpcc.New(cfg), SpaceNeeded: tpccSpace(r)}, nil
	},
	"sysbench": func(r suite.Run) (runner.Built, error) {
		cfg := sysbench.DefaultConfig()
		cfg.Tables, cfg.TableSize = r.Workload.Tables, r.Workload.TableSize
		if r.Workload.Shape != "" {
			cfg.Workload = r.Workload.Shape
		}
		if errs := cfg.Validate(); len(errs) > 0 {
			return runner.Built{}, errors.Join(errs...)
		}
		return runner.Built{Workload: sysbench.New(cfg), SpaceNeeded: sysbench.EstimatedBytes(cfg)}, nil
	},
	"as3ap": func(r suite.Run) (runner.Built, error) {
		cfg := as3ap.DefaultConfig()
		cfg.Rows = r.Workload.Rows
		if r.Workload.BatchJobs > 0 {
			cfg.BatchJobs = r.Workload.BatchJobs
		}
		if errs := cfg.Validate(); len(errs) > 0 {
			return runner.Built{}, errors.Join(errs...)
		}
		stat := r.Workload.CeilingStat
		if stat == "" {
			stat = "mean"
		}
		figure, err := as3ap.InteractiveFigure(stat)
		if err != nil {
			return runner.Built{}, err
		}
		ceiling := 100 * time.Millisecond
		if d, err := time.ParseDuration(r.Workload.Ceiling); err == nil && d > 0 {
			ceiling = d
		}
		start, add, most := max(r.Workload.Start, 1), max(r.Workload.Add, 5), r.Workload.MaxUsers
		if most == 0 {
			most = 200
		}
		var users []int
		for u := start; u <= most; u += add {
			users = append(users, u)
		}
		c := runner.Ceiling{Figure: figure, Max: float64(ceiling) / float64(time.Millisecond), Unit: "ms"}
		return runner.Built{Workload: as3ap.New(cfg), SpaceNeeded: as3ap.EstimatedBytes(cfg), Users: users, StopWhen: c.Stop, Conclude: c.Conclude}, nil
	},
}

// tpccSpace is the data target's need: one database per tenant, plus their backups.
func tpccSpace(r suite.Run) uint64 {
	one := tpcc.EstimatedBytes(r.Workload.Warehouses)
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

// estimate gives a run's expected duration and space for the dry run.
// Load rates are this project's measurements on a 2-core machine (about
// 20 s per TPC-C warehouse on the slowest engine, 200,000 sysbench rows/s).
func estimate(r suite.Run) (time.Duration, uint64) {
	steps := time.Duration(len(r.Users)) * (r.RampUp + r.Step)
	switch r.Kind {
	case "disk":
		c := fio.Config{Profile: r.Workload.Profile, Targets: []string{r.Data.Path}}
		if d, err := time.ParseDuration(r.Workload.Runtime); err == nil {
			c.Runtime = d
		}
		if n, err := units.ParseBytes(r.Workload.Size); err == nil {
			c.Size = n
		}
		p, err := fio.NewPlan(c, fio.Profiles)
		if err != nil {
			return 0, 0
		}
		return p.Duration(), uint64(p.Config.Size)
	case "tpcc":
		load := time.Duration(r.Workload.Warehouses) * 20 * time.Second
		space := tpccSpace(r)
		switch r.Scenario {
		case "backup":
			return load + time.Duration(r.Backups.Cycles)*(r.Backups.Interval+time.Duration(r.Workload.Warehouses)*10*time.Second), space
		case "noisy-neighbour":
			return time.Duration(r.Noisy.Tenants)*load + 2*(r.RampUp+r.Step) + time.Duration(r.Noisy.Cycles)*r.Noisy.Interval, space
		}
		return load + steps, space
	case "sysbench":
		rows := r.Workload.Tables * r.Workload.TableSize
		return time.Duration(rows/200000+1)*time.Second + steps, uint64(rows) * 250
	case "as3ap":
		// Stepping ends at the ceiling; count the steps up to max_users as the bound.
		built, err := suiteWorkloads["as3ap"](r)
		if err != nil {
			return 0, 0
		}
		n := time.Duration(len(built.Users))
		return time.Duration(r.Workload.Rows*4/100000+1)*time.Second + n*(r.RampUp+r.Step), built.SpaceNeeded
	}
	return steps, 0
}

// compareRuns writes the comparison of a suite's comparable runs.
func compareRuns(dirs []string, out string) error {
	runs, err := results.LoadAll(dirs)
	if err != nil {
		return err
	}
	return report.WriteComparison(report.OutputAt(out), runs, report.Options{Version: version()})
}
