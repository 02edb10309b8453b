package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"dbio/internal/analysis"
	"dbio/internal/results"
	"dbio/internal/units"
)

func init() { commandConstructors = append(commandConstructors, newRunsCmd) }

func newRunsCmd(app *App) *cobra.Command {
	var base string
	cmd := &cobra.Command{
		Use:   "runs [--results DIR]",
		Short: "List the results directories under a results directory, newest first, with their headline figures",
		Long: `List every run under the results directory (default ./results), and the runs
inside its suites and A/B studies, newest first: name, kind, status, when it
started, the storage of its data target, and its headline figures (the peak
step's throughput, the fio point with the most IOPS).

dbio report and dbio compare accept a run's name as listed here (or the end
of it, such as quick-sqlite, when only one run ends so) in place of its path.`,
		Example: `  dbio runs
  dbio compare 20261125-140151-quick-sqlite 20261125-141328-tpcc-sqlite`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dirs, err := runDirs(base)
			if err != nil {
				return err
			}
			if len(dirs) == 0 {
				fmt.Fprintf(app.Stdout, "no runs under %s\n", base)
				return nil
			}
			tw := tabwriter.NewWriter(app.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "run\tkind\tstatus\tstarted\tstorage\theadline")
			for _, d := range dirs {
				if results.IsRepeatSet(d) {
					fmt.Fprintln(tw, repeatSetLine(base, d))
					continue
				}
				l, err := results.LoadSummary(d)
				if err != nil {
					fmt.Fprintf(tw, "%s\t-\tunreadable\t-\t-\t%v\n", d, err)
					continue
				}
				rel, _ := filepath.Rel(base, d)
				storage := "-"
				for _, t := range l.Run.Environment.Targets {
					if t.Role == "data" {
						storage = t.Describe()
						break
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", rel, l.Run.Kind, l.Run.Status, l.Run.Started.UTC().Format("2006-01-02 15:04"), storage, headlineText(l))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&base, "results", "results", "the results directory to list")
	return cmd
}

// headlineText is a run's headline figures in a few words: "tpcc 27,535 TPM /
// 12,324 NOPM at 2 users; fio 51,143 IOPS (4k-randread)".
func headlineText(l *results.Loaded) string {
	var parts []string
	for _, h := range analysis.Headlines(analysis.NewRecorded(l)) {
		var figs []string
		for i, f := range h.Figures {
			figs = append(figs, units.GroupThousands(int64(h.Values[i]+0.5))+" "+f.Title)
		}
		text := h.Kind + " " + strings.Join(figs, " / ")
		if h.Point != "" {
			text += " (" + h.Point + ")"
		} else {
			text += " at " + units.GroupThousands(int64(h.Users)) + map[bool]string{true: " user", false: " users"}[h.Users == 1]
		}
		parts = append(parts, text)
	}
	if len(parts) == 0 {
		return "no finished step"
	}
	return strings.Join(parts, "; ")
}

// repeatSetLine lists a repeat set as dbio runs does a run: its headline
// is the median over its repeats.
func repeatSetLine(base, dir string) string {
	rel, _ := filepath.Rel(base, dir)
	set, err := results.ReadRepeatSet(dir)
	if err != nil {
		return fmt.Sprintf("%s\trepeats\tunreadable\t-\t-\t%v", rel, err)
	}
	var runs []*analysis.Recorded
	storage := "-"
	for _, d := range set.RunDirs(dir) {
		if l, err := results.LoadSummary(d); err == nil {
			runs = append(runs, analysis.NewRecorded(l))
		}
	}
	if len(runs) > 0 {
		for _, t := range runs[0].Run.Environment.Targets {
			if t.Role == "data" {
				storage = t.Describe()
				break
			}
		}
	}
	headline := "no finished step"
	var parts []string
	for _, t := range analysis.RepeatedTables(runs) {
		best := -1
		for i, r := range t.Rows {
			if f := r.Figures[0]; f.N > 0 && (best < 0 || f.Median > t.Rows[best].Figures[0].Median) {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		f := t.Rows[best].Figures[0]
		where := " at " + t.Rows[best].Label + map[bool]string{true: " user", false: " users"}[t.Rows[best].Users == 1]
		if t.Key != "users" {
			where = " (" + t.Rows[best].Label + ")"
		}
		parts = append(parts, fmt.Sprintf("%s median %s %s%s", t.Kind, units.GroupThousands(int64(f.Median+0.5)), t.Metrics[0].Title, where))
	}
	if len(parts) > 0 {
		headline = strings.Join(parts, "; ")
	}
	kind := fmt.Sprintf("%s ×%d", set.Kind, set.Repeats)
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s over %d repeats", rel, kind, set.Status, set.Started.UTC().Format("2006-01-02 15:04"), storage, headline, len(runs))
}

// runDirs are the results directories under base, and inside the suites
// (one level down), repeat sets and A/B studies (two levels: a-1/, b-1/)
// there, newest first (their names start with the time they started),
// with the repeat sets' own directories among them. Links are not
// followed.
func runDirs(base string) ([]string, error) {
	if _, err := os.Stat(base); errors.Is(err, os.ErrNotExist) {
		return nil, usagef("--results %s: no such directory; dbio writes results under ./results unless told otherwise", base)
	} else if err != nil {
		return nil, err
	}
	var out []string
	var collect func(dir string, depth int)
	collect = func(dir string, depth int) {
		if _, err := os.Stat(filepath.Join(dir, "run.json")); err == nil {
			out = append(out, dir)
			return
		}
		if results.IsRepeatSet(dir) {
			out = append(out, dir)
		}
		if depth == 0 {
			return
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() { // a link's entry is not a directory
				collect(filepath.Join(dir, e.Name()), depth-1)
			}
		}
	}
	collect(base, 3)
	// A repeat set is listed above its repeats: a run sorts by its set's
	// name first.
	key := func(d string) string {
		if results.IsRepeatSet(d) {
			return filepath.Base(d) + "\xff"
		}
		if p := filepath.Dir(d); results.IsRepeatSet(p) {
			return filepath.Base(p) + "\x00" + filepath.Base(d)
		}
		return filepath.Base(d)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) > key(out[j]) })
	return out, nil
}

// resolveRuns turns each argument that is not a results directory into the
// run (or repeat set) under base it names: its listed name, or the end of one ("quick-sqlite")
// when exactly one run ends so. An argument that names none, or several, is
// a usage error that says which.
func resolveRuns(base string, args []string) ([]string, error) {
	out := make([]string, len(args))
	var all []string
	for i, a := range args {
		// A path that exists is taken as given: reading it says what it is.
		if _, err := os.Stat(a); err == nil {
			out[i] = a
			continue
		}
		if all == nil {
			dirs, err := runDirs(base)
			if err != nil {
				return nil, usagef("%s is not a results directory (no run.json), and there are no runs under %s to find it by name", a, base)
			}
			all = dirs
		}
		var found []string
		for _, d := range all {
			rel, _ := filepath.Rel(base, d)
			name := filepath.Base(d)
			if rel == a || name == a || strings.HasSuffix(name, "-"+a) {
				found = append(found, d)
			}
		}
		switch len(found) {
		case 1:
			out[i] = found[0]
		case 0:
			return nil, usagef("%s is neither a results directory nor the name of a run under %s: see dbio runs", a, base)
		default:
			return nil, usagef("%s names %d runs under %s (%s): give the full name, as dbio runs lists it", a, len(found), base, strings.Join(found, ", "))
		}
	}
	return out, nil
}
