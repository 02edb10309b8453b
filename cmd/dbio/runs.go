package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"dbio/internal/analysis"
	"dbio/internal/progress"
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
inside its suites and A/B studies, newest first: name, kind, engine, status,
when it started, the storage of its data target, and its headline figures
(the peak step's throughput, the fio point with the most IOPS).

On a terminal the list fits its width ($COLUMNS when set): long texts are
cut, then the least needed columns left out; the run's name is always whole.
Into a file or a pipe every line is whole.

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
			rows := [][]string{{"run", "kind", "engine", "status", "started", "storage", "headline"}}
			for _, d := range dirs {
				if results.IsRepeatSet(d) {
					rows = append(rows, repeatSetRow(base, d))
					continue
				}
				rel, _ := filepath.Rel(base, d)
				l, err := results.LoadSummary(d)
				if err != nil {
					rows = append(rows, []string{rel, "-", "-", "unreadable", "-", "-", err.Error()})
					continue
				}
				rows = append(rows, []string{rel, l.Run.Kind, enginesText(l.Run.Engines), string(l.Run.Status),
					l.Run.Started.UTC().Format("2006-01-02 15:04"), dataStorage(l.Run.Environment.Targets), headlineText(l)})
			}
			for _, line := range fitColumns(rows, outputColumns(app)) {
				fmt.Fprintln(app.Stdout, line)
			}
			return nil
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

// repeatSetRow lists a repeat set as dbio runs does a run: its headline
// is the median over its repeats.
func repeatSetRow(base, dir string) []string {
	rel, _ := filepath.Rel(base, dir)
	set, err := results.ReadRepeatSet(dir)
	if err != nil {
		return []string{rel, "repeats", "-", "unreadable", "-", "-", err.Error()}
	}
	var runs []*analysis.Recorded
	storage, engine := "-", "-"
	for _, d := range set.RunDirs(dir) {
		if l, err := results.LoadSummary(d); err == nil {
			runs = append(runs, analysis.NewRecorded(l))
		}
	}
	if len(runs) > 0 {
		storage, engine = dataStorage(runs[0].Run.Environment.Targets), enginesText(runs[0].Run.Engines)
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
	return []string{rel, kind, engine, string(set.Status), set.Started.UTC().Format("2006-01-02 15:04"), storage, fmt.Sprintf("%s over %d repeats", headline, len(runs))}
}

// dataStorage describes the storage of a run's data target, "-" without one.
func dataStorage(targets []results.TargetInfo) string {
	for _, t := range targets {
		if t.Role == "data" {
			return t.Describe()
		}
	}
	return "-"
}

// enginesText names a run's engines with their versions' numbers
// ("postgres 15.20"), each once; "-" for a run of none (fio's).
func enginesText(engines []results.EngineInfo) string {
	var out []string
	for _, e := range engines {
		name := e.Engine
		if v, _, _ := strings.Cut(e.Version, " "); v != "" {
			name += " " + strings.SplitN(v, "-", 2)[0]
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}

// outputColumns is how wide dbio's output may be: $COLUMNS when set, as a
// shell exports it and a user may to ask for a width, else the width of
// the terminal it writes to; 0 (no limit) when it writes to a file or a
// pipe, which keep whole lines.
func outputColumns(app *App) int {
	if n, err := strconv.Atoi(strings.TrimSpace(app.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	w := app.Stdout
	if t, ok := w.(*terminalText); ok {
		w = t.w // what it filters is written where it was to be
	}
	if n, ok := progress.TerminalColumns(w); ok {
		return n
	}
	return 0
}

// fitColumns lays rows (the first the header) out in columns two spaces
// apart, at most width columns wide (0: no limit). Whole columns give way
// first, the least needed first (storage, started, status, engine, kind),
// until the rest fits beside a useful part of the storage and the
// headline; then what is left of the width goes to the headline before
// the storage, each cut with an ellipsis. The run's name, which report and
// compare take, is never cut.
func fitColumns(rows [][]string, width int) []string {
	const gap = 2
	const kind, engine, status, started, storage, headline = 1, 2, 3, 4, 5, 6
	keep := []bool{true, true, true, true, true, true, true}
	natural := make([]int, len(keep))
	for _, r := range rows {
		for i, c := range r {
			natural[i] = max(natural[i], utf8.RuneCountInString(c))
		}
	}
	limit := slices.Clone(natural)
	if width > 0 {
		least := func(i, n int) int {
			if !keep[i] {
				return 0
			}
			return min(natural[i], n) + gap
		}
		fixed := func() int {
			sum := natural[0]
			for _, i := range []int{kind, engine, status, started} {
				if keep[i] {
					sum += gap + natural[i]
				}
			}
			return sum
		}
		for _, i := range []int{storage, started, status, engine, kind} {
			if fixed()+least(storage, 16)+least(headline, 24) <= width {
				break
			}
			keep[i] = false
		}
		room := width - fixed()
		if keep[storage] {
			room -= gap + min(natural[storage], 16)
		}
		if room < gap+len("headline") {
			keep[headline] = false
		}
		limit[headline] = min(natural[headline], room-gap)
		if keep[storage] {
			limit[storage] = min(natural[storage], width-fixed()-gap-limit[headline]-gap)
		}
	}
	widths := func() []int {
		w := make([]int, len(keep))
		for i := range w {
			w[i] = min(natural[i], limit[i])
		}
		return w
	}
	w := widths()
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		var b strings.Builder
		last := 0
		for i := range r {
			if keep[i] {
				last = i
			}
		}
		for i, c := range r {
			if !keep[i] {
				continue
			}
			if utf8.RuneCountInString(c) > limit[i] {
				c = string([]rune(c)[:limit[i]-1]) + "…"
			}
			b.WriteString(c)
			if i < last {
				b.WriteString(strings.Repeat(" ", w[i]-utf8.RuneCountInString(c)+gap))
			}
		}
		out = append(out, b.String())
	}
	return out
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
