package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/analysis"
	"dbio/internal/fio"
	"dbio/internal/report"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/suite"
	"dbio/internal/workload"
)

func init() { commandConstructors = append(commandConstructors, newSuiteCmd) }

func newSuiteCmd(app *App) *cobra.Command {
	var dryRun, createTargets bool
	var resultsBase string
	var gf gateFlags
	cmd := &cobra.Command{
		Use:   "suite FILE.toml",
		Short: "Run a whole study from a suite file and compare its runs",
		Long: `Run every run of a suite file (targets with roles and limits, engines with
their settings, workloads, scenarios, and variants to cross), each into its own
results directory under one suite directory, then write a comparison report for
each group of runs that differ only in their variants. The whole file is
validated before anything starts, and every run's targets, DSN (connected
to), settings and free space are checked before anything is written;
--dry-run prints the expanded plan with its estimated duration and disk
space, then makes the same checks and refuses what the run would. See
examples/ for one suite per study.

An engine on an existing server takes its DSN from dsn, or, to keep the
password out of the file, from dsn_env (an environment variable holding the
DSN) or dsn_file (a file holding it); PGPASSWORD and MYSQL_PWD work too. The
DSN is recorded without its password.

A database run whose data target is on hosts ([[host]] tables, paths
NAME:/path) runs there as the workload's command does with --target
NAME:/path: dbio on each host drives the server it starts there (driver =
"host"), or, with driver = "coordinator", this dbio drives your server on
the host by its engine's DSN; --dry-run shows each host's command line (see
docs/fleet.md).`,
		Example: `  dbio suite examples/nvme-vs-sata.toml --dry-run
  dbio suite examples/nvme-vs-sata.toml --create-target`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			registry := workloads()
			plan, err := suite.Load(args[0], suiteEnv(app, registry))
			if err != nil {
				var ps *suite.Problems
				if errors.As(err, &ps) {
					return &usageError{msg: "invalid suite:\n" + ps.Error()}
				}
				return err
			}
			g, err := gf.resolveWith(app, len(plan.Thresholds))
			if err != nil {
				return err
			}
			bases := map[string]string{}
			for _, r := range plan.Runs {
				bases[r.Name] = r.Base
			}
			var judged []judgedRun
			for _, n := range plan.Notices {
				fmt.Fprintln(app.Stderr, "dbio: "+n)
			}
			if resultsBase != "" {
				plan.Results = resultsBase
			}
			runs, problems := suitePlans(app, plan, registry, createTargets)
			if dryRun {
				each, all := suiteEstimates(app, plan, runs)
				if err := plan.DryRun(app.Stdout, func(r suite.Run) suite.Estimated { return each[r.Index] }); err != nil {
					return err
				}
				notes := []string{"each part summed over the suite's runs (a run's own --dry-run says what its figures rest on); the consistency checks counted where their time was measured (TPC-C's), servers' starts and stops not counted"}
				if slices.ContainsFunc(plan.Runs, func(r suite.Run) bool { return r.UntilDecided }) {
					notes = append(notes, "a comparison until decided (until_decided) is counted at its most rounds; it stops sooner once it knows")
				}
				printExpectation(app.Stdout, all, false, notes)
				printHostCommands(app, runs)
				// The real run's preflight, which writes nothing: a dry run
				// refuses what the run would, with the same words.
				pre := runner.Suite{Name: plan.Name, Results: plan.Results, Runs: runs, Problems: problems, CreateTargets: createTargets}
				if err := pre.Preflight(app.SysFS); err != nil {
					if runner.IsBadInput(err) {
						return &usageError{msg: "the suite cannot start:\n  " + err.Error()}
					}
					return err
				}
				return nil
			}
			env, done, err := runnerEnv(app)
			if err != nil {
				return err
			}
			defer done()
			out, err := runner.RunSuite(cmd.Context(), runner.Suite{
				Name:     plan.Name,
				Results:  plan.Results,
				Runs:     runs,
				Expected: typicalTimes(app, plan, runs),
				Problems: problems,
				Record:   plan,
				Compare:  compareRuns,
				AB:       report.WriteAB,
				Report: func(name, dir string) (string, error) {
					// The run's thresholds are recorded in it before its report renders them.
					judged = append(judged, gates{thresholds: slices.Concat(g.thresholds, plan.ThresholdsFor(bases[name])), labels: g.labels, history: g.history}.judge(app, dir)...)
					if l, err := results.Load(dir); err == nil {
						report.Text(app.Stdout, l, reportOptions(app))
					}
					return report.WriteRunReport(dir, reportOptions(app))
				},
				ReportRepeats: func(dir string) (string, error) {
					if err := report.RepeatText(app.Stdout, dir, reportOptions(app)); err != nil {
						return "", err
					}
					return report.WriteRepeatReport(dir, reportOptions(app))
				},
				Command:       app.Args,
				CreateTargets: createTargets,
			}, env)
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
				if rerr := suiteReport(app, out.Dir); rerr != nil {
					fmt.Fprintf(app.Stdout, "warning: suite report: %v\n", rerr)
				}
			}
			if len(g.thresholds)+len(plan.Thresholds) > 0 {
				for _, t := range plan.Thresholds {
					g.thresholds = append(g.thresholds, t.Threshold)
				}
				gateErr := g.verdict(app, judged)
				if err == nil {
					err = gateErr
				}
			}
			if err != nil && cmd.Context().Err() != nil {
				return fmt.Errorf("%w: %v", errInterrupted, err)
			}
			return err
		},
	}
	cmd.Flags().BoolVarP(&dryRun, "dry-run", "n", false, "print the expanded plan with estimated duration and disk space, run nothing")
	cmd.Flags().BoolVar(&createTargets, "create-target", false, "create the suite's targets that do not exist; without it a missing target is refused, so that a typo or an unmounted mount point never benchmarks the disk underneath")
	cmd.Flags().StringVar(&resultsBase, "results", "", "directory for the suite's results (default: the file's results key, else ./results)")
	gf.register(cmd.Flags())
	groupFlagsInHelp(cmd, "")
	return cmd
}

// suiteEnv is what a suite is read with: the environment, the engines
// (and which one a DSN is written for) and the workloads.
func suiteEnv(app *App, registry *workload.Registry) suite.Env {
	return suite.Env{
		Getenv:  app.Getenv,
		Engines: app.Engines.Names(),
		EngineForDSN: func(dsn string) string {
			if e := app.Engines.ForDSN(dsn); e != nil {
				return e.Name()
			}
			return ""
		},
		Workloads: registry,
		Figures:   analysis.ExpectFigures(),
	}
}

// suiteEstimates works out each run's time with the runner's one
// estimator, in the suite's order, and the suite's parts summed: a --data
// reset run whose data an earlier run of the suite loaded on the same
// target (the same engine, database and dataset) restores its copy
// instead of loading.
func suiteEstimates(app *App, plan *suite.Plan, runs []runner.PlannedRun) ([]suite.Estimated, runner.Expectation) {
	var all runner.Expectation
	out := make([]suite.Estimated, len(plan.Runs))
	kept := map[string]bool{}
	for i, r := range plan.Runs {
		var e runner.Expectation
		var space uint64
		pr := runs[i]
		switch {
		case pr.Disk != nil:
			var layout time.Duration
			for _, t := range pr.Disk.Fio.Config.Targets {
				if l, err := fio.EstimateLayout(app.SysFS, t, pr.Disk.Fio.Config.Size, pr.Disk.Fio.Config.MemoryBytes); err == nil {
					layout += l.Time()
					space = max(space, uint64(l.Size))
				}
			}
			e = runner.ExpectDisk(*pr.Disk, layout, 1)
		case pr.Plan != nil && r.Kind == suite.KindReplay:
			var layout time.Duration
			if l, err := fio.EstimateLayout(app.SysFS, pr.Plan.DataPath, int64(pr.Plan.SpaceNeeded), 0); err == nil && pr.Plan.SpaceNeeded > 0 {
				layout = l.Time()
			}
			e = runner.Expect(*pr.Plan, runner.ExpectInputs{Layout: layout})
			space = pr.Plan.SpaceNeeded
		case pr.Plan != nil && r.Workload.Settings != nil:
			est := loadEstimate(r.Workload.Settings, *pr.Plan)
			key := pristineKey(*pr.Plan)
			e = runner.Expect(*pr.Plan, runner.ExpectInputs{Load: est, Kept: key != "" && kept[key]})
			if key != "" {
				kept[key] = true
			}
			space = scenarioSpace(r, est.Space)
		default:
			// Not resolved into a plan (the preflight says why): its
			// steps alone.
			steps := time.Duration(len(r.Users)) * (r.RampUp + r.Step)
			e.Parts = []runner.TimePart{{What: "measurements", Ceiling: steps, Typical: steps}}
		}
		out[i] = suite.Estimated{Typical: e.Typical(), Ceiling: e.Ceiling(), Space: space}
		all.Add(e)
	}
	return out, all
}

// typicalTimes are each run's typical time, as the dry run gives it.
func typicalTimes(app *App, plan *suite.Plan, runs []runner.PlannedRun) []time.Duration {
	each, _ := suiteEstimates(app, plan, runs)
	out := make([]time.Duration, len(each))
	for i, e := range each {
		out[i] = e.Typical
	}
	return out
}

// pristineKey names the pristine copy a --data reset plan keeps: its data
// target, engine, database and dataset; empty for any other plan.
func pristineKey(p runner.Plan) string {
	k, ok := p.Workload.(workload.DataKept)
	if !ok || k.LoadingSettings().Policy() != workload.DataReset || p.Engine == nil {
		return ""
	}
	ds, _ := json.Marshal(k.Dataset())
	return strings.Join([]string{p.DataPath, p.Engine.Name(), p.EngineOptions.Database, string(ds)}, "\x00")
}

// compareRuns writes the comparison of a suite's comparable
// configurations: of their repeats when the suite repeats its runs, else
// of their runs.
func compareRuns(compared []runner.ComparedSet, out string) error {
	opts := report.Options{Version: version(), Titles: workloads().Title, SettingFlag: workloads().Flag}
	sets := make([]report.Set, len(compared))
	var runs []*results.Loaded
	for i, c := range compared {
		loaded, err := results.LoadAll(c.Dirs)
		if err != nil {
			return err
		}
		sets[i] = report.Set{Label: c.Label, Runs: loaded}
		runs = append(runs, loaded...)
	}
	if report.AnyRepeated(sets) {
		_, err := report.WriteRepeatedComparison(report.OutputAt(out), sets, opts)
		return err
	}
	_, err := report.WriteComparison(report.OutputAt(out), runs, opts)
	return err
}

// suiteReport checks a finished suite's expected findings against its
// results, prints them, and writes the suite's report into its directory.
func suiteReport(app *App, dir string) error {
	s, err := results.LoadSuite(dir)
	if err != nil {
		return err
	}
	sc := report.CheckSuite(s)
	if err := report.SequentialText(app.Stdout, s.Sequential); err != nil {
		return err
	}
	if err := report.ExpectText(app.Stdout, sc.Checks); err != nil {
		return err
	}
	out := report.OutputIn(dir)
	if err := report.WriteSuiteReport(out, sc, reportOptions(app)); err != nil {
		return err
	}
	fmt.Fprintf(app.Stdout, "suite report: %s\n", out.HTML)
	return nil
}

// printHostCommands shows, for a dry run, the command line dbio runs on
// each host of the suite's runs on hosts, resolved as the run will be
// (with the suite's --create-target); a run the command line refuses is
// among the problems the preflight reports.
func printHostCommands(app *App, runs []runner.PlannedRun) {
	for _, r := range runs {
		if r.Plan == nil {
			continue
		}
		tenants, ok := r.Plan.Body.(runner.Tenants)
		if !ok {
			continue
		}
		fmt.Fprintf(app.Stdout, "%s, dbio on each host:\n", r.Name)
		for _, h := range tenants.Hosts {
			name := r.Name + "-" + h.Host.Name
			args := tenants.Args(h, "~/.dbio/runs/<run>-"+h.Host.Name, name)
			fmt.Fprintf(app.Stdout, "  %s (%s): dbio %s\n", h.Host.Name, h.Host.Destination, strings.Join(args, " "))
		}
	}
}
