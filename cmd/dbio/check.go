package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"dbio/internal/analysis"
	"dbio/internal/history"
	"dbio/internal/results"
)

func init() { commandConstructors = append(commandConstructors, newCheckCmd) }

// errRegression is the error of a run worse than its baseline beyond the noise.
var errRegression = errors.New("regression beyond noise")

func newCheckCmd(app *App) *cobra.Command {
	var path string
	var against []string
	cmd := &cobra.Command{
		Use:   "check RUN --against last|all|label:NAME|RUN...",
		Short: "Is this run worse than earlier ones of its configuration, beyond the noise? Exit 1 if so",
		Long: `Compare a run (a results directory, a repeat set, or a run the history
remembers by id) with earlier runs of the same configuration: the last one the
history has (last, with its whole repeat set), every earlier one (all),
those with a label (label:NAME), or runs you name. Figures are read as a
comparison of repeat sets reads them: a regression is a difference the
repeats call significant, larger than either side's own spread, and worse
for the figure. A single run is read against the spread the earlier runs
recorded instead: a regression is worse than every one of at least 19 of
them, by more than their spread. dbio check exits 1 on a regression, naming
the figure, the change and the evidence, and says when there are too few
runs to tell a difference from noise.`,
		Example: `  dbio check results/20261128-0200-tpcc-postgres --against last
  dbio check results/repeats-nightly --against label:baseline`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(against) == 0 {
				return usagef("--against: name the baseline: last, label:NAME, or results directories")
			}
			f := historyFlags{path: path}
			var store *history.Store
			needStore := !isDir(args[0])
			for _, a := range against {
				if a == "last" || a == "all" || strings.HasPrefix(a, "label:") || !isDir(a) {
					needStore = true
				}
			}
			if needStore {
				s, err := f.open(app)
				if err != nil {
					return err
				}
				defer s.Close()
				store = s
			}
			ctx := context.Background()
			runDirs, entry, err := checkedRun(ctx, store, args[0])
			if err != nil {
				return err
			}
			var baseDirs []string
			for _, a := range against {
				dirs, err := baselineDirs(ctx, store, a, entry, runDirs)
				if err != nil {
					return err
				}
				baseDirs = append(baseDirs, dirs...)
			}
			if len(baseDirs) == 0 {
				fmt.Fprintf(app.Stdout, "too little evidence: no earlier run of the same configuration (%s) to check against; nothing is called a regression\n", entry.ConfigKey)
				return nil
			}
			run, err := recordedAll(runDirs)
			if err != nil {
				return err
			}
			base, err := recordedAll(baseDirs)
			if err != nil {
				return err
			}
			c := analysis.CheckRegressions(base, run)
			fmt.Fprintf(app.Stdout, "checked %d run(s) against %d baseline run(s): %d figure(s) compared\n", len(run), len(base), c.Compared)
			if c.AgainstSpread > 0 {
				fmt.Fprintf(app.Stdout, "%d figure(s) of a single run read against the spread of the earlier runs: a regression is worse than every one of them by more than their spread\n", c.AgainstSpread)
			}
			say := func(label string, r analysis.RegressionFinding) {
				evidence := fmt.Sprintf("%d against %d repeats", r.A.N, r.B.N)
				if r.B.N == 1 && r.A.N >= analysis.EarlierRunsNeeded {
					evidence = fmt.Sprintf("worse than all %d earlier runs (%s to %s)", r.A.N,
						analysis.ThresholdQuantity(r.A.Min, r.Metric.Unit), analysis.ThresholdQuantity(r.A.Max, r.Metric.Unit))
				}
				fmt.Fprintf(app.Stdout, "%s %s %s, %s: %s → %s (%+.1f %%, ratio %.3g; p = %.3g, %s)\n",
					label, r.Kind, r.Row, r.Metric.Title, analysis.ThresholdQuantity(r.A.Median, r.Metric.Unit), analysis.ThresholdQuantity(r.B.Median, r.Metric.Unit),
					r.ChangePct, r.Ratio, r.P, evidence)
			}
			for _, r := range c.Regressions {
				say("REGRESSION", r)
			}
			// A diagnostic is said, for what it explains, but fails
			// nothing on its own: the busiest device is the host's.
			for _, r := range c.Diagnostics {
				say("also worse (a diagnostic, not a regression of the run's work):", r)
			}
			if c.TooFew > 0 {
				fmt.Fprintf(app.Stdout, "too little evidence for %d of %d figure(s): a side needs %d repeats to tell a difference from noise (--repeat %d), "+
					"or a single run %d earlier runs of its configuration (--against all)\n",
					c.TooFew, c.Compared, c.NeedPerSide, c.NeedPerSide, analysis.EarlierRunsNeeded)
			}
			if len(c.Regressions) > 0 {
				return fmt.Errorf("%w: %d figure(s)", errRegression, len(c.Regressions))
			}
			if c.Compared > c.TooFew {
				fmt.Fprintln(app.Stdout, "no regression beyond the noise")
			}
			return nil
		},
	}
	registerHistory(cmd.Flags(), &path)
	cmd.Flags().StringArrayVar(&against, "against", nil, "the baseline: last (the history's latest earlier run of this configuration, with its repeat set), all (every earlier run of it), label:NAME (runs with that --label), or results directories (repeatable)")
	return cmd
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// checkedRun is the run checked: its results directories (a repeat set's
// runs) and what the history knows of it.
func checkedRun(ctx context.Context, store *history.Store, ref string) ([]string, history.Entry, error) {
	if isDir(ref) {
		dirs := repeatDirs(ref)
		l, err := results.LoadSummary(dirs[0])
		if err != nil {
			return nil, history.Entry{}, err
		}
		return dirs, history.EntryOf(l, ""), nil
	}
	if store == nil {
		return nil, history.Entry{}, usagef("%s: not a results directory", ref)
	}
	e, err := store.Get(ctx, ref)
	if err != nil {
		return nil, e, &usageError{msg: err.Error()}
	}
	if e.RepeatSet != "" {
		return repeatDirs(e.RepeatSet), e, nil
	}
	return []string{e.Dir}, e, nil
}

// repeatDirs are the runs of the repeat set at dir, or dir itself.
func repeatDirs(dir string) []string {
	set, err := results.ReadRepeatSet(dir)
	if err != nil || len(set.Runs) == 0 {
		return []string{dir}
	}
	var out []string
	for _, r := range set.Runs {
		out = append(out, filepath.Join(dir, r))
	}
	return out
}

// baselineDirs resolves one --against into results directories.
func baselineDirs(ctx context.Context, store *history.Store, against string, run history.Entry, runDirs []string) ([]string, error) {
	same := func(e history.Entry) bool {
		if e.ConfigKey != run.ConfigKey || e.Status != results.StatusCompleted {
			return false
		}
		for _, d := range runDirs {
			if abs, _ := filepath.Abs(d); abs == e.Dir {
				return false
			}
		}
		return e.ID != run.ID && (run.RepeatSet == "" || e.RepeatSet != run.RepeatSet)
	}
	switch {
	case against == "last":
		all, err := store.List(ctx, history.Filter{ConfigKey: run.ConfigKey})
		if err != nil {
			return nil, err
		}
		for i := len(all) - 1; i >= 0; i-- {
			e := all[i]
			if !same(e) || (!run.Started.IsZero() && !e.Started.Before(run.Started)) {
				continue
			}
			if e.RepeatSet != "" {
				return repeatDirs(e.RepeatSet), nil
			}
			return []string{e.Dir}, nil
		}
		return nil, nil
	case against == "all":
		all, err := store.List(ctx, history.Filter{ConfigKey: run.ConfigKey})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, e := range all {
			if same(e) && (run.Started.IsZero() || e.Started.Before(run.Started)) {
				out = append(out, e.Dir)
			}
		}
		return out, nil
	case strings.HasPrefix(against, "label:"):
		all, err := store.List(ctx, history.Filter{Label: strings.TrimPrefix(against, "label:"), ConfigKey: run.ConfigKey})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, e := range all {
			if same(e) {
				out = append(out, e.Dir)
			}
		}
		return out, nil
	case isDir(against):
		return repeatDirs(against), nil
	}
	if store == nil {
		return nil, usagef("--against %s: not a results directory", against)
	}
	e, err := store.Get(ctx, against)
	if err != nil {
		return nil, &usageError{msg: err.Error()}
	}
	if e.RepeatSet != "" {
		return repeatDirs(e.RepeatSet), nil
	}
	return []string{e.Dir}, nil
}

func recordedAll(dirs []string) ([]*analysis.Recorded, error) {
	loaded, err := results.LoadAll(dirs)
	if err != nil {
		return nil, err
	}
	out := make([]*analysis.Recorded, 0, len(loaded))
	for _, l := range loaded {
		out = append(out, analysis.NewRecorded(l))
	}
	return out, nil
}
