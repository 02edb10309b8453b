package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/fio"
	"dbio/internal/runner"
	"dbio/internal/target"
	"dbio/internal/units"
	"dbio/internal/workload"
)

// bindDryRun adds --dry-run to a command whose run workloadDryRun describes.
func bindDryRun(cmd *cobra.Command, dryRun *bool) {
	cmd.Flags().BoolVarP(dryRun, "dry-run", "n", false, "print the plan, its expected time (load, ramp-ups, steps), the space it takes and what it would create; start, load and write nothing")
}

// workloadDryRun prints what a workload command would do, how long it
// would take, the space it would take and what it would create, and
// refuses what the run would refuse, with the same words: the run's own
// preflight, which writes nothing.
func workloadDryRun(app *App, f workloadFlags, plan runner.Plan) error {
	if err := runner.Preflight(plan, app.SysFS); err != nil {
		if runner.IsBadInput(err) {
			return &usageError{msg: err.Error()}
		}
		return err
	}
	w := app.Stdout
	fmt.Fprintln(w, "dry run: nothing is started, loaded or written")
	fmt.Fprintf(w, "plan:    %s\n", plan.Describe())
	exp := runner.Expect(plan, runner.ExpectInputs{Load: loadEstimate(f.settings, plan), Repeats: f.repeat, Layout: passLayout(app, plan)})
	printExpectation(w, exp, true, timeNotes(f, plan, exp))
	if plan.DataPath != "" {
		what := "the database"
		if n := runner.DatabasesLoaded(plan.Body); n > 1 {
			what = fmt.Sprintf("%d databases", n)
		}
		fmt.Fprintf(w, "space:   about %s for %s on %s%s\n", units.FormatBytes(plan.SpaceNeeded*uint64(runner.DatabasesLoaded(plan.Body))), what, plan.DataPath, freeText(plan.DataPath))
		if _, ok := plan.Body.(runner.Backups); ok {
			at := plan.BackupPath
			if at == "" {
				at = plan.DataPath
			}
			fmt.Fprintf(w, "         about %s more for a backup on %s\n", units.FormatBytes(plan.SpaceNeeded), at)
		}
		if f.settings.LoadingSettings().Policy() == workload.DataReset {
			fmt.Fprintf(w, "         about %s more for the pristine copy --data reset keeps there\n", units.FormatBytes(plan.SpaceNeeded))
		}
	}
	fmt.Fprintf(w, "         about %s for the results under %s\n", units.FormatBytes(runner.ResultsBytes(exp.Ceiling())), plan.ResultsBase)
	for _, c := range willCreate(f, plan, app.Now()) {
		fmt.Fprintf(w, "creates: %s\n", c)
	}
	return nil
}

// loadEstimate is one database's load on the plan's engine, as the
// workload's rate table gives it.
func loadEstimate(s workload.Settings, plan runner.Plan) workload.Estimate {
	name := ""
	if plan.Engine != nil {
		name = plan.Engine.Name()
	}
	return s.Estimate(name)
}

// passLayout is how long the device pass's working file takes to lay out
// on the data target, as disk --dry-run says it; 0 without a pass.
func passLayout(app *App, plan runner.Plan) time.Duration {
	if plan.Fio == nil || plan.DataPath == "" {
		return 0
	}
	cfg := plan.Fio.Config
	l, err := fio.EstimateLayout(app.SysFS, plan.DataPath, cfg.Size, cfg.MemoryBytes)
	if err != nil {
		return 0
	}
	return l.Time()
}

// printExpectation writes the time a run (or a suite) is expected to take:
// its total, typical and at most when some part may end early, then each
// part (with what it rests on, when how), then what the parts leave out.
func printExpectation(w io.Writer, e runner.Expectation, how bool, notes []string) {
	if e.Bounded() {
		fmt.Fprintf(w, "time:    about %s, at most %s (every ramp-up and measurement at its ceiling)\n", roundedDuration(e.Typical()), roundedDuration(e.Ceiling()))
	} else {
		fmt.Fprintf(w, "time:    about %s\n", roundedDuration(e.Ceiling()))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range e.Parts {
		d := roundedDuration(p.Typical)
		if p.Typical != p.Ceiling {
			d += " (at most " + roundedDuration(p.Ceiling) + ")"
		}
		if how {
			d += "\t" + p.How
		}
		fmt.Fprintf(tw, "         %s\t%s\n", p.What, d)
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintf(w, "         %s\n", n)
	}
}

// timeNotes says what the time's parts leave out or count more than once.
func timeNotes(f workloadFlags, plan runner.Plan, exp runner.Expectation) []string {
	var out []string
	if _, ok := plan.Body.(runner.Tenants); ok {
		out = append(out, "every host at once")
	}
	counted := slices.ContainsFunc(exp.Parts, func(p runner.TimePart) bool { return p.What == "checks" })
	if !plan.SkipChecks && plan.Body != nil && !counted {
		out = append(out, "then the consistency checks, whose time is not counted")
	}
	if f.repeat > 1 {
		out = append(out, fmt.Sprintf("all of it %d times (--repeat), counted in each part", f.repeat))
	}
	return out
}

// willCreate lists what the run would create, as it would name it.
func willCreate(f workloadFlags, plan runner.Plan, now time.Time) []string {
	dir := filepath.Join(plan.ResultsBase, now.Format("20060102-150405")+"-"+plan.Name)
	if f.repeat > 1 {
		dir += " (a repeat set, with a results directory per repeat)"
	} else {
		dir += " (the results directory)"
	}
	out := []string{dir}
	db := plan.EngineOptions.Database
	for _, t := range []string{plan.DataPath, plan.LogPath, plan.BackupPath} {
		if _, err := os.Stat(t); t != "" && plan.CreateTargets && os.IsNotExist(err) {
			out = append(out, t+" (the target, which does not exist yet)")
		}
	}
	if plan.DataPath != "" {
		out = append(out, fmt.Sprintf("%s (dbio's own directory, for %s's files and database %s)", filepath.Join(plan.DataPath, target.DirName), plan.Engine.Name(), db))
		if plan.LogPath != "" {
			out = append(out, fmt.Sprintf("%s (the WAL / redo log)", filepath.Join(plan.LogPath, target.DirName)))
		}
		if plan.BackupPath != "" && plan.BackupPath != plan.DataPath {
			out = append(out, fmt.Sprintf("%s (the backups)", filepath.Join(plan.BackupPath, target.DirName)))
		}
		return out
	}
	if plan.EngineOptions.DSN != "" {
		verb := "replacing one of that name dbio made"
		if !plan.EngineOptions.Fresh {
			verb = "or reusing it"
		}
		out = append(out, fmt.Sprintf("database %s on your server (--dsn), %s", db, verb))
	}
	return out
}

// freeText says how much space the directory's filesystem has free.
func freeText(dir string) string {
	t := target.Target{Path: dir}
	free, err := t.FreeBytes()
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (%s free)", units.FormatBytes(free))
}

// roundedDuration is d to the second, or to the minute beyond an hour.
func roundedDuration(d time.Duration) string {
	if d >= time.Hour {
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
}
