package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"dbio/internal/report"
	"dbio/internal/results"
)

func init() { commandConstructors = append(commandConstructors, newReportCmd, newCompareCmd) }

func newReportCmd(app *App) *cobra.Command {
	var output, base string
	cmd := &cobra.Command{
		Use:   "report RESULTS_DIR... [-o report.html]",
		Short: "Render results directories as a self-contained HTML report, a Markdown summary and CSV tables",
		Long: `Render one or more results directories as one HTML page (inline SVG charts, no
script, nothing fetched from the network, printable), a Markdown summary and
one CSV file per table.

With one directory and no -o, the report goes into that directory:
report.html, summary.md and csv/. A repeat set's directory (written by
--repeat N) gets the report of its repeats: every figure as the median over
the repeats with its 95 % confidence interval and the spread between them. A
suite's directory (the one dbio suite wrote, with suite.json) gets the suite's
report: the findings its file expects, checked against its runs, and the list
of its runs. An A/B study's directory (written by dbio ab) gets its
compare.html again: the two sides compared.

-o names where the report goes: -o FILE.html (or FILE) writes the page to
FILE.html, -o FILE.md the Markdown summary to FILE.md, and in both cases the
other one goes beside it, with the tables in FILE-csv/ (one CSV file per
table, so a name ending in .csv is refused: name the page instead). dbio
never replaces a file it did not write, never writes through a link, and
writes the tables only into a directory it created (marked .dbio-owned).

A results directory may come from anyone: dbio reads only the regular files
it wrote there, never through a link, a named pipe or device, nor a path
that leaves the directory, and shows control characters in what it read as
escapes (\x1b). Such a directory is refused with exit code 2.`,
		Example: `  dbio report results/20261122-001305-quick-sqlite
  dbio report results/*-disk-* -o disks.html`,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if len(args) == 0 {
				return usagef("name at least one results directory, e.g. dbio report results/20261122-001305-quick-sqlite")
			}
			// -o is checked before anything is read or written.
			asked, err := outputAt(output, report.Output{})
			if err != nil {
				return err
			}
			outputOr := func(def report.Output) report.Output {
				if output != "" {
					return asked
				}
				return def
			}
			if len(args) == 1 && output == "" && isSuiteDir(args[0]) {
				// A suite's directory: its expected findings and its runs.
				return suiteReport(app, args[0])
			}
			if len(args) == 1 && results.IsABStudy(args[0]) {
				// An A/B study's directory: its sides compared, as dbio ab
				// wrote it (compare.html), or to -o.
				sets, err := report.LoadABStudy(args[0])
				if err != nil {
					return err
				}
				out := outputOr(report.OutputAt(filepath.Join(args[0], "compare.html")))
				if err := writeABReport(app, out, sets); err != nil {
					return err
				}
				printOutput(app, out)
				return nil
			}
			if len(args) == 1 {
				// A repeat set's report: every figure over its repeats.
				dirs, err := resolveRuns(base, args)
				if err != nil {
					return err
				}
				if results.IsRepeatSet(dirs[0]) {
					out := outputOr(report.OutputIn(dirs[0]))
					if err := report.WriteRepeatReportTo(out, dirs[0], reportOptions(app)); err != nil {
						return err
					}
					printOutput(app, out)
					return nil
				}
			}
			args, runs, err := loadNamedRuns(app, base, args)
			if err != nil {
				return err
			}
			out := report.OutputAt("report.html")
			if len(args) == 1 {
				out = report.OutputIn(args[0])
			}
			out = outputOr(out)
			if err := report.WriteReport(out, runs, reportOptions(app)); err != nil {
				return err
			}
			printOutput(app, out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "HTML page (x.html) or Markdown summary (x.md) to write; the other one and the CSV directory (x-csv/) go beside it")
	cmd.Flags().StringVar(&base, "results", "results", "where to find a run given by name (as dbio runs lists it) instead of by path")
	return cmd
}

// outputAt is where -o sends a report, or def when -o was not given. A
// name dbio cannot write a report as (x.csv, a directory) is a usage error.
func outputAt(output string, def report.Output) (report.Output, error) {
	if output == "" {
		return def, nil
	}
	out, err := report.OutputFor(output)
	if err != nil {
		return out, usagef("%v", err)
	}
	return out, nil
}

func newCompareCmd(app *App) *cobra.Command {
	var output, base string
	var force bool
	cmd := &cobra.Command{
		Use:   "compare A B [C...] | AB_STUDY [-o compare.html] [--force]",
		Short: "Compare runs side by side: differentials, ratios and changes said as better or worse, overlaid charts",
		Long: `Compare two or more results directories. A is the baseline: every other run
is read against it step by step (the same user count, the same fio point)
with the differential, the ratio (2.0x) and the change in %, said in words
(better or worse for that figure), then the averages, and the charts of all
runs are overlaid. The headlines are printed here too.

Runs of different workloads or TPC-C scales, or with no user count or fio
point in common, are refused, with the reason, unless --force; steps only
one run has are left out and named. The report also lists every
setting and fact that differs between the runs.

Given repeat sets (the directories --repeat N writes, or their runs one after
the other), each is one configuration: every figure is its median over the
repeats with the 95 % confidence interval and the spread, and every
difference from A is tested: significant (a Mann-Whitney U test at 5 %, and
larger than the spread of each side's own repeats, with the interval of the
ratio), no significant difference, within the noise between repeats, or too
few repeats to tell (fewer than 4 a side). Better or worse is said only of a
significant difference.

Given the directory of an A/B study (what dbio ab writes), it compares the
study's two sides, each the set of its runs, as the study's own compare.html
does: dbio compare results/20261125-131913-ab.`,
		Example: `  dbio compare results/20261122-001305-quick-sqlite results/20261122-001403-quick-sqlite
  dbio compare nvme/ sata/ -o nvme-vs-sata.html
  dbio tpcc --target /mnt/nvme --repeat 5 --name nvme && dbio tpcc --target /mnt/sata --repeat 5 --name sata
  dbio compare nvme sata
  dbio compare results/20261125-131913-ab`,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			out, err := outputAt(output, report.OutputAt("compare.html"))
			if err != nil {
				return err
			}
			dirs, err := resolveRuns(base, args)
			if err != nil {
				return err
			}
			if len(args) < 2 && (len(dirs) == 0 || !results.IsABStudy(dirs[0])) {
				return usagef("name at least two results directories, the baseline first, or an A/B study's directory: dbio compare A B [C...]")
			}
			sets, runs, err := loadSets(dirs)
			if err != nil {
				return err
			}
			sayUnfinished(app, runs)
			if err := runsAsCaptures(runs); err != nil {
				return err
			}
			opts := report.Options{Now: app.Now, Version: version(), Force: force, Titles: workloads().Title, SettingFlag: workloads().Flag}
			var headlines []string
			if report.AnyRepeated(sets) && len(sets) > 1 {
				headlines, err = report.WriteRepeatedComparison(out, sets, opts)
			} else {
				// Single runs, or the repeats of one configuration set
				// against each other: one run against one run.
				headlines, err = report.WriteComparison(out, runs, opts)
			}
			var nc *report.NotComparableError
			if errors.As(err, &nc) {
				return usagef("%v", err)
			}
			if err != nil {
				return err
			}
			for _, h := range headlines {
				fmt.Fprintln(app.Stdout, h)
			}
			fmt.Fprintf(app.Stdout, "report: %s (the Markdown summary and the CSV tables are beside it)\n", out.HTML)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "HTML page (x.html) or Markdown summary (x.md) to write; the other one and the CSV directory (x-csv/) go beside it")
	cmd.Flags().StringVar(&base, "results", "results", "where to find a run given by name (as dbio runs lists it) instead of by path")
	cmd.Flags().BoolVar(&force, "force", false, "compare runs that are not comparable (the report says why they are not)")
	return cmd
}

// loadSets loads each directory as a configuration: a repeat set's
// directory as its repeats, a results directory as one run, an A/B study's
// directory as its two sides, and runs of the same repeat set given one
// after the other as that set. runs are
// every run loaded, in order.
func loadSets(dirs []string) ([]report.Set, []*results.Loaded, error) {
	var sets []report.Set
	var runs []*results.Loaded
	for _, d := range dirs {
		if results.IsABStudy(d) {
			// An A/B study is its two sides, each the set of its runs.
			ab, err := report.LoadABStudy(d)
			if err != nil {
				return nil, nil, err
			}
			for _, s := range ab {
				sets = append(sets, s)
				runs = append(runs, s.Runs...)
			}
			continue
		}
		s, err := report.LoadSet(d)
		if err != nil {
			return nil, nil, err
		}
		sets = append(sets, s)
		runs = append(runs, s.Runs...)
	}
	return report.GroupRepeats(sets), runs, nil
}

// loadNamedRuns finds each run given by path or by name under base, loads
// it, and says which did not finish.
func loadNamedRuns(app *App, base string, args []string) ([]string, []*results.Loaded, error) {
	dirs, err := resolveRuns(base, args)
	if err != nil {
		return nil, nil, err
	}
	runs, err := results.LoadAll(dirs)
	if err != nil {
		return nil, nil, err
	}
	sayUnfinished(app, runs)
	return dirs, runs, nil
}

// sayUnfinished tells, before the report, which runs did not finish
// because their dbio was killed or is still running.
func sayUnfinished(app *App, runs []*results.Loaded) {
	for _, l := range runs {
		switch l.Run.Status {
		case results.StatusAbandoned:
			fmt.Fprintf(app.Stdout, "%s: abandoned: %s\n", l.Path, l.Run.Error)
		case results.StatusRunning:
			fmt.Fprintf(app.Stdout, "%s: still running: the report shows what it has recorded so far\n", l.Path)
		}
	}
}

func printOutput(app *App, out report.Output) {
	fmt.Fprintf(app.Stdout, "report:  %s\nsummary: %s\ntables:  %s/\n", out.HTML, out.Markdown, out.CSVDir)
}
