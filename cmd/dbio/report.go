package main

import (
	"errors"
	"fmt"

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
report.html, summary.md and csv/. A suite's directory (the one dbio suite
wrote, with suite.json) gets the suite's report: the findings its file
expects, checked against its runs, and the list of its runs. With -o FILE.html it goes to FILE.html,
FILE.md and FILE-csv/. dbio never replaces a file it did not write.`,
		Example: `  dbio report results/20261122-001305-quick-sqlite
  dbio report results/*-disk-* -o disks.html`,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if len(args) == 0 {
				return usagef("name at least one results directory, e.g. dbio report results/20261122-001305-quick-sqlite")
			}
			if len(args) == 1 && output == "" && isSuiteDir(args[0]) {
				// A suite's directory: its expected findings and its runs.
				return suiteReport(app, args[0])
			}
			args, runs, err := loadNamedRuns(app, base, args)
			if err != nil {
				return err
			}
			out := report.OutputAt("report.html")
			switch {
			case output != "":
				out = report.OutputAt(output)
			case len(args) == 1:
				out = report.OutputIn(args[0])
			}
			if err := report.WriteReport(out, runs, reportOptions(app)); err != nil {
				return err
			}
			printOutput(app, out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "HTML file to write; the Markdown summary and the CSV directory go beside it")
	cmd.Flags().StringVar(&base, "results", "results", "where to find a run given by name (as dbio runs lists it) instead of by path")
	return cmd
}

func newCompareCmd(app *App) *cobra.Command {
	var output, base string
	var force bool
	cmd := &cobra.Command{
		Use:   "compare A B [C...] [-o compare.html] [--force]",
		Short: "Compare runs side by side: differentials, ratios and changes said as better or worse, overlaid charts",
		Long: `Compare two or more results directories. A is the baseline: every other run
is read against it step by step (the same user count, the same fio point)
with the differential, the ratio (2.0x) and the change in %, said in words
(better or worse for that figure), then the averages, and the charts of all
runs are overlaid. The headlines are printed here too.

Runs of different workloads or TPC-C scales, or with no user count or fio
point in common, are refused, with the reason, unless --force; steps only
one run has are left out and named. The report also lists every
setting and fact that differs between the runs.`,
		Example: `  dbio compare results/20261122-001305-quick-sqlite results/20261122-001403-quick-sqlite
  dbio compare nvme/ sata/ -o nvme-vs-sata.html`,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if len(args) < 2 {
				return usagef("name at least two results directories, the baseline first: dbio compare A B [C...]")
			}
			args, runs, err := loadNamedRuns(app, base, args)
			if err != nil {
				return err
			}
			out := report.OutputAt("compare.html")
			if output != "" {
				out = report.OutputAt(output)
			}
			headlines, err := report.WriteComparison(out, runs, report.Options{Now: app.Now, Version: version(), Force: force, Titles: workloads().Title})
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
	cmd.Flags().StringVarP(&output, "output", "o", "", "HTML file to write; the Markdown summary and the CSV directory go beside it")
	cmd.Flags().StringVar(&base, "results", "results", "where to find a run given by name (as dbio runs lists it) instead of by path")
	cmd.Flags().BoolVar(&force, "force", false, "compare runs that are not comparable (the report says why they are not)")
	return cmd
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
