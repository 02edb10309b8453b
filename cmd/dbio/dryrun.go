package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/fio"
	"dbio/internal/goal"
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
	est := f.settings.Estimate()
	load := est.Load
	if f.settings.LoadingSettings().Reuse {
		load = 0
	}
	load *= time.Duration(databasesLoaded(plan.Body))
	body, upTo := bodyTime(plan.Body, est.Load)
	var device time.Duration
	if plan.Fio != nil {
		cfg := plan.Fio.Config
		if len(cfg.Targets) == 0 {
			cfg.Targets = []string{plan.DataPath} // the pass's target, as the run gives it
		}
		if p, err := fio.NewPlan(cfg, fio.BuiltinProfiles()); err == nil {
			device = p.Duration()
		}
	}
	total := time.Duration(max(f.repeat, 1)) * (device + load + body)
	if f.settings.LoadingSettings().Policy() == workload.DataReset {
		// One load; every later repeat restores its copy, a copy's time.
		total -= time.Duration(max(f.repeat, 1)-1) * load
	}
	approx := "about"
	if upTo {
		approx = "at most about"
	}
	parts := timeParts(f, load, plan.Body)
	if device > 0 {
		parts = fmt.Sprintf("the device pass about %s, then ", roundedDuration(device)) + parts
	}
	fmt.Fprintf(w, "time:    %s %s: %s\n", approx, roundedDuration(total), parts)
	if plan.DataPath != "" {
		what := "the database"
		if n := databasesLoaded(plan.Body); n > 1 {
			what = fmt.Sprintf("%d databases", n)
		}
		fmt.Fprintf(w, "space:   about %s for %s on %s%s\n", units.FormatBytes(plan.SpaceNeeded*uint64(databasesLoaded(plan.Body))), what, plan.DataPath, freeText(plan.DataPath))
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
	fmt.Fprintf(w, "         about %s for the results under %s\n", units.FormatBytes(runner.ResultsBytes(total)), plan.ResultsBase)
	for _, c := range willCreate(f, plan, app.Now()) {
		fmt.Fprintf(w, "creates: %s\n", c)
	}
	return nil
}

// databasesLoaded is how many databases the body loads: a tenant's each in a
// noisy-neighbour study, else one.
func databasesLoaded(b runner.Body) int {
	switch b := b.(type) {
	case runner.Noisy:
		return max(b.Tenants, 1)
	case runner.Tenants:
		return databasesLoaded(b.Each)
	}
	return 1
}

// bodyTime is how long the body's steps take, ramp-ups included, and
// whether that is a bound rather than an estimate (a ramp-up that ends at
// steady state, a search that may stop before its last probe). load is
// one database's load time, by which a backup's is guessed.
func bodyTime(b runner.Body, load time.Duration) (time.Duration, bool) {
	switch b := b.(type) {
	case runner.Backups:
		return backupsTime(b, load), false
	case runner.Noisy:
		return noisyTime(b), false
	case runner.Steps:
		return time.Duration(len(b.Users)) * (b.RampUp + b.Step), b.Steady != nil || b.StopWhen != nil || b.Precision != nil
	case runner.Goal:
		return time.Duration(probes(b.Search)) * (b.RampUp + b.Step), true
	case runner.Tenants:
		return bodyTime(b.Each, load)
	}
	return 0, false
}

// backupsTime guesses backup cycles' time: a backup (and a restore)
// copies the database about twice as fast as the load wrote it, and the
// cycles start --interval apart.
func backupsTime(b runner.Backups, load time.Duration) time.Duration {
	copies := 1
	if b.Restore {
		copies = 2
	}
	return time.Duration(b.Cycles) * (b.Interval + time.Duration(copies)*load/2)
}

// noisyTime is a noisy-neighbour study's two phases: the quiet baseline,
// then the interference, which lasts as long as the backups and at least
// as long as the baseline.
func noisyTime(n runner.Noisy) time.Duration {
	return n.RampUp + n.Quiet + n.RampUp + max(n.Quiet, time.Duration(n.Cycles)*n.Interval)
}

// probes is the most probes a goal search runs.
func probes(s goal.Search) int {
	if s.MaxProbes > 0 {
		return s.MaxProbes
	}
	return goal.DefaultMaxProbes
}

// timeParts says what the time is made of: the load, then each step's
// ramp-up and measurement.
func timeParts(f workloadFlags, load time.Duration, b runner.Body) string {
	loadText := fmt.Sprintf("loading about %s", roundedDuration(load))
	switch f.settings.LoadingSettings().Policy() {
	case workload.DataReuse:
		loadText = "no load if the data is there to reuse (else a load of about " + roundedDuration(f.settings.Estimate().Load) + ")"
	case workload.DataReset:
		loadText += " once, with a pristine copy of the data restored before every later repeat (no load at all when a copy of this data is there)"
	}
	var steps string
	switch b := b.(type) {
	case runner.Tenants:
		return timeParts(f, load, b.Each) + ", on every host at once"
	case runner.Steps:
		steps = fmt.Sprintf("%d step(s) of %s ramp-up and %s measured", len(b.Users), b.RampUp, b.Step)
		if b.Steady != nil {
			steps = fmt.Sprintf("%d step(s) of a ramp-up until steady (%s at most) and %s measured", len(b.Users), b.RampUp, b.Step)
		}
		if b.Precision != nil {
			steps += fmt.Sprintf(" at most (until precise, %s at least)", b.Precision.Min)
		}
	case runner.Goal:
		steps = fmt.Sprintf("up to %d probe(s) of %s ramp-up and %s measured", probes(b.Search), b.RampUp, b.Step)
	case runner.Backups:
		what := "backup"
		if b.Restore {
			what = "backup and restore"
		}
		steps = fmt.Sprintf("%d %s cycle(s), each about %s, %s apart (--interval)", b.Cycles, what, roundedDuration(backupsTime(runner.Backups{Cycles: 1, Restore: b.Restore}, f.settings.Estimate().Load)), b.Interval)
	case runner.Noisy:
		loadText = fmt.Sprintf("loading %d tenants' databases about %s", b.Tenants, roundedDuration(load))
		steps = fmt.Sprintf("the quiet baseline of %s ramp-up and %s measured, then the interference of %s ramp-up and %s (%d backup(s) %s apart, at least the baseline's length)",
			b.RampUp, b.Quiet, b.RampUp, roundedDuration(max(b.Quiet, time.Duration(b.Cycles)*b.Interval)), b.Cycles, b.Interval)
	}
	text := loadText + ", then " + steps + ", then the consistency checks"
	if f.repeat > 1 {
		text += fmt.Sprintf("; all of it %d times (--repeat)", f.repeat)
	}
	return text
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
