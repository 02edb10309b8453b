package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"dbio/internal/analysis"
	"dbio/internal/controlchars"
	"dbio/internal/history"
	"dbio/internal/report"
	"dbio/internal/results"
)

func init() { commandConstructors = append(commandConstructors, newHistoryCmd) }

// historyEnv names the history store when --history does not.
const historyEnv = "DBIO_HISTORY"

// historyOff is the --history (or DBIO_HISTORY) that records nothing.
const historyOff = "none"

func registerHistory(fs *pflag.FlagSet, path *string) {
	fs.StringVar(path, "history", "", "the history store every run is remembered in: a file (default $"+historyEnv+", else ~/.local/share/dbio/history.db), a PostgreSQL database (postgres://user@host/db, in a schema dbio_history dbio creates), or none to remember nothing")
}

// historyPath is the store a command uses: the flag's, the environment's,
// or the default under the user's home; "" when the user said none or
// there is no home to keep it in.
func historyPath(app *App, flag string) (string, error) {
	path := flag
	if path == "" {
		path = app.Getenv(historyEnv)
	}
	switch {
	case path == historyOff:
		return "", nil
	case history.IsPostgres(path):
		if err := history.CheckPostgres(path); err != nil {
			return "", usagef("--history: %v; give a URL such as postgres://user@host:5432/db (the password in PGPASSWORD or ~/.pgpass)", err)
		}
		return path, nil
	case path != "":
		if err := controlchars.Check(path); err != nil {
			return "", usagef("--history %q: %v", path, err)
		}
		return path, nil
	}
	home := app.Getenv("HOME")
	if home == "" {
		return "", nil
	}
	return history.DefaultPath(home, app.Getenv("XDG_DATA_HOME")), nil
}

// checkLabel refuses a label a terminal or a filter could not show as typed.
func checkLabel(l string) error {
	if strings.TrimSpace(l) == "" || strings.ContainsAny(l, ",") {
		return usagef("--label %q: give a name without commas, e.g. baseline or fw-2.1", l)
	}
	if err := controlchars.Check(l); err != nil {
		return usagef("--label %q: %v", l, err)
	}
	return nil
}

// rememberRun keeps the finished run in dir in the history store at path;
// a store that cannot be written is a warning: the run's results stand.
func rememberRun(app *App, path, dir string) {
	if path == "" {
		return
	}
	s, err := history.Open(path)
	if err == nil {
		_, err = s.RecordDir(context.Background(), dir, app.Now())
		s.Close()
	}
	if err != nil {
		fmt.Fprintf(app.Stdout, "warning: run not remembered in the history: %v\n", err)
	}
}

type historyFlags struct {
	path    string
	filter  history.Filter
	since   string
	figures []string
	step    string
	format  string
	output  string
}

func newHistoryCmd(app *App) *cobra.Command {
	var f historyFlags
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Every run remembered: list and filter them, or a figure's trend over runs",
		Long: `List the runs the history remembers (every run dbio ran, and the results
directories imported with 'dbio history import DIR...'), filtered by storage,
engine, workload, label and date; with --figure, that figure's trend over the
runs, one row per run and step. The results directories stay the source of
truth: the store can be rebuilt from them with 'dbio history import'.`,
		Example: `  dbio history --engine postgres --since 2026-11-01
  dbio history --figure nopm --label nightly
  dbio history --figure iops --step 4k-randread --format csv
  dbio history --workload tpcc --figure nopm --figure latency_p99 --format html -o trend.html
  dbio history import results/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.open(app)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := f.resolve(); err != nil {
				return err
			}
			if len(f.figures) > 0 {
				var trends [][]history.Point
				for _, fig := range f.figures {
					points, err := s.Trend(context.Background(), f.filter, results.FigureName(fig), f.step)
					if err != nil {
						return err
					}
					trends = append(trends, points)
				}
				if f.format == "html" {
					return writeTrendPage(app, f, trends)
				}
				for i, points := range trends {
					if err := printTrend(app, f, f.figures[i], points); err != nil {
						return err
					}
				}
				return nil
			}
			entries, err := s.List(context.Background(), f.filter)
			if err != nil {
				return err
			}
			return printRuns(app, f.format, entries)
		},
	}
	fs := cmd.Flags()
	registerHistory(fs, &f.path)
	fs.StringVar(&f.filter.Storage, "storage", "", "runs whose target, device, file system or limit holds this, e.g. nvme0n1 or /mnt/nvme")
	fs.StringVarP(&f.filter.Engine, "engine", "e", "", "runs on this engine")
	fs.StringVar(&f.filter.Workload, "workload", "", "runs of this workload or command: tpcc, sysbench, as3ap, fio, quick, disk...")
	fs.StringVar(&f.filter.Label, "label", "", "runs with this --label")
	fs.StringVar(&f.since, "since", "", "runs started on or after this date (2026-11-01) or this long ago (72h)")
	fs.StringArrayVar(&f.figures, "figure", nil, "show this figure's trend over the runs, named as the figure catalogue names it (nopm, tps, iops, lat_p99_us); repeatable")
	fs.StringVar(&f.step, "step", "", "with --figure: only this step (users-8, 4k-randread)")
	fs.StringVar(&f.format, "format", "table", "table, json, csv, or html (with --figure and -o: a page with a chart per figure)")
	fs.StringVarP(&f.output, "output", "o", "", "with --format html: the page to write, e.g. trend.html")
	groupOwnFlags(cmd, "Which runs", "storage", "engine", "workload", "label", "since")
	groupOwnFlags(cmd, "Trend and output", "figure", "step", "format", "output")
	groupFlagsInHelp(cmd, "")
	cmd.AddCommand(newHistoryImportCmd(app))
	return cmd
}

func (f *historyFlags) open(app *App) (*history.Store, error) {
	path, err := historyPath(app, f.path)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, usagef("no history store: give --history PATH or set $%s (no home directory to keep the default in)", historyEnv)
	}
	return history.Open(path)
}

func (f *historyFlags) resolve() error {
	switch f.format {
	case "table", "json", "csv":
		if f.output != "" {
			return usagef("-o %s: only --format html writes a file; the other formats print, redirect them instead", f.output)
		}
	case "html":
		if len(f.figures) == 0 {
			return usagef("--format html charts figures' trends: name them with --figure, e.g. --figure nopm --figure latency_p99")
		}
		if f.output == "" {
			return usagef("--format html writes a page: name it with -o, e.g. -o trend.html")
		}
		if ext := strings.ToLower(filepath.Ext(f.output)); ext != ".html" && ext != ".htm" {
			return usagef("-o %s: the trend page is HTML; name a .html file, e.g. -o trend.html", f.output)
		}
		if err := controlchars.Check(f.output); err != nil {
			return usagef("-o %q: %v", f.output, err)
		}
	default:
		return usagef("--format %q: use table, json, csv or html", f.format)
	}
	for _, fig := range f.figures {
		if !results.FigureName(fig).Defined() {
			return usagef("--figure %q: not a figure of the catalogue; e.g. nopm, tpm, tps, iops, lat_p99_us", fig)
		}
	}
	if f.since != "" {
		if d, err := time.ParseDuration(f.since); err == nil {
			f.filter.Since = time.Now().Add(-d)
		} else if t, err := time.Parse("2006-01-02", f.since); err == nil {
			f.filter.Since = t
		} else if t, err := time.Parse(time.RFC3339, f.since); err == nil {
			f.filter.Since = t
		} else {
			return usagef("--since %q: give a date (2026-11-01), a time (2026-11-01T08:00:00Z) or a duration ago (72h)", f.since)
		}
	}
	return nil
}

// runRow is a run as dbio history --format json writes it.
type runRow struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Started   time.Time `json:"started"`
	Status    string    `json:"status"`
	Workload  string    `json:"workload,omitempty"`
	Engine    string    `json:"engine,omitempty"`
	EngineVer string    `json:"engine_version,omitempty"`
	Target    string    `json:"target,omitempty"`
	Device    string    `json:"device,omitempty"`
	FS        string    `json:"fs_type,omitempty"`
	Limit     string    `json:"limit,omitempty"`
	Kernel    string    `json:"kernel,omitempty"`
	Version   string    `json:"dbio_version,omitempty"`
	Labels    []string  `json:"labels,omitempty"`
	Config    string    `json:"config_key"`
	Dir       string    `json:"dir"`
}

func rowOf(e history.Entry) runRow {
	return runRow{ID: e.ID, Kind: e.Kind, Started: e.Started, Status: string(e.Status), Workload: e.Workload, Engine: e.Engine,
		EngineVer: e.EngineVer, Target: e.Target, Device: e.Device, FS: e.FS, Limit: e.Limit, Kernel: e.Kernel, Version: e.Version,
		Labels: e.Labels, Config: e.ConfigKey, Dir: e.Dir}
}

func printRuns(app *App, format string, entries []history.Entry) error {
	switch format {
	case "json":
		rows := make([]runRow, 0, len(entries))
		for _, e := range entries {
			rows = append(rows, rowOf(e))
		}
		return writeIndentedJSON(app, rows)
	case "csv":
		w := csv.NewWriter(app.Stdout)
		w.Write([]string{"id", "kind", "started", "status", "workload", "engine", "engine_version", "target", "device", "fs_type", "limit", "kernel", "dbio_version", "labels", "config_key", "dir"})
		for _, e := range entries {
			w.Write([]string{e.ID, e.Kind, timeCSV(e.Started), string(e.Status), e.Workload, e.Engine, e.EngineVer, e.Target, e.Device, e.FS, e.Limit, e.Kernel, e.Version, strings.Join(e.Labels, ";"), e.ConfigKey, e.Dir})
		}
		w.Flush()
		return w.Error()
	}
	if len(entries) == 0 {
		fmt.Fprintln(app.Stdout, "no run in the history matches (import results directories with dbio history import DIR)")
		return nil
	}
	tw := tabwriter.NewWriter(app.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STARTED\tRUN\tSTATUS\tENGINE\tSTORAGE\tLABELS\tCONFIG")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Started.UTC().Format("2006-01-02 15:04"), e.ID, e.Status, orDash(strings.TrimSpace(e.Engine+" "+e.EngineVer)),
			orDash(storageText(e)), orDash(strings.Join(e.Labels, ",")), e.ConfigKey)
	}
	return tw.Flush()
}

func storageText(e history.Entry) string {
	parts := []string{e.Device, e.FS}
	if e.Limit != "" {
		parts = append(parts, "limit "+e.Limit)
	}
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// trendRow is one point of a trend as --format json writes it.
type trendRow struct {
	Run     string    `json:"run"`
	Started time.Time `json:"started"`
	Step    string    `json:"step"`
	Figure  string    `json:"figure"`
	Value   float64   `json:"value"`
	Unit    string    `json:"unit"`
	Config  string    `json:"config_key"`
	Engine  string    `json:"engine,omitempty"`
	Kernel  string    `json:"kernel,omitempty"`
	Version string    `json:"dbio_version,omitempty"`
	Labels  []string  `json:"labels,omitempty"`
}

func printTrend(app *App, f historyFlags, figure string, points []history.Point) error {
	switch f.format {
	case "json":
		rows := make([]trendRow, 0, len(points))
		for _, p := range points {
			rows = append(rows, trendRow{Run: p.Run.ID, Started: p.Run.Started, Step: p.Step, Figure: string(p.Name), Value: p.Value, Unit: p.Unit,
				Config: p.Run.ConfigKey, Engine: p.Run.Engine, Kernel: p.Run.Kernel, Version: p.Run.Version, Labels: p.Run.Labels})
		}
		return writeIndentedJSON(app, rows)
	case "csv":
		w := csv.NewWriter(app.Stdout)
		w.Write([]string{"run", "started", "step", "figure", "value", "unit", "config_key", "engine", "kernel", "dbio_version", "labels"})
		for _, p := range points {
			w.Write([]string{p.Run.ID, timeCSV(p.Run.Started), p.Step, string(p.Name), strconv.FormatFloat(p.Value, 'g', -1, 64), p.Unit,
				p.Run.ConfigKey, p.Run.Engine, p.Run.Kernel, p.Run.Version, strings.Join(p.Run.Labels, ";")})
		}
		w.Flush()
		return w.Error()
	}
	def := results.FigureName(figure).Def()
	if len(points) == 0 {
		fmt.Fprintf(app.Stdout, "no run in the history recorded %s\n", def.Title)
		return nil
	}
	fmt.Fprintf(app.Stdout, "%s (%s) over %d point(s), oldest first; a change of configuration, kernel or dbio version is marked *\n", def.Title, orDash(def.Unit), len(points))
	tw := tabwriter.NewWriter(app.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "STARTED\tRUN\tSTEP\tVALUE\tCONFIG\tCHANGED\t")
	var prev *history.Point
	for i, p := range points {
		changed := ""
		if prev != nil && prev.Run.ID != p.Run.ID {
			var what []string
			if prev.Run.ConfigKey != p.Run.ConfigKey {
				what = append(what, "config")
			}
			if prev.Run.Kernel != p.Run.Kernel {
				what = append(what, "kernel "+p.Run.Kernel)
			}
			if prev.Run.Version != p.Run.Version {
				what = append(what, "dbio "+p.Run.Version)
			}
			if prev.Run.EngineVer != p.Run.EngineVer {
				what = append(what, p.Run.Engine+" "+p.Run.EngineVer)
			}
			if len(what) > 0 {
				changed = "* " + strings.Join(what, ", ")
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", p.Run.Started.UTC().Format("2006-01-02 15:04"), p.Run.ID, p.Step,
			analysis.ThresholdQuantity(p.Value, ""), p.Run.ConfigKey, changed)
		prev = &points[i]
	}
	return tw.Flush()
}

// writeTrendPage writes the figures' trends as an HTML page at f.output:
// the runs of every figure on one axis, oldest first.
func writeTrendPage(app *App, f historyFlags, trends [][]history.Point) error {
	var page report.TrendPage
	index := map[string]int{}
	var entries []history.Entry
	for _, points := range trends {
		for _, p := range points {
			if _, ok := index[p.Run.ID]; !ok {
				index[p.Run.ID] = len(entries)
				entries = append(entries, p.Run)
			}
		}
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Started.Before(entries[j].Started) })
	for i, e := range entries {
		index[e.ID] = i
		page.Runs = append(page.Runs, trendRunOf(e))
	}
	for _, points := range trends {
		for _, p := range points {
			page.Points = append(page.Points, report.TrendPoint{Run: index[p.Run.ID], Figure: p.Name, Step: p.Step, Value: p.Value})
		}
	}
	page.Filter = f.describe()
	if err := report.WriteTrendPage(f.output, page, app.Now()); err != nil {
		if errors.Is(err, results.ErrNotOwned) {
			return &usageError{msg: err.Error()}
		}
		return err
	}
	fmt.Fprintf(app.Stdout, "trend page of %d figure(s) over %d run(s): %s\n", len(f.figures), len(entries), f.output)
	return nil
}

// trendRunOf is what the trend page shows of a run: what names its
// configuration, and the values whose change it marks.
func trendRunOf(e history.Entry) report.TrendRun {
	r := report.TrendRun{ID: e.ID, Started: e.Started, ConfigKey: e.ConfigKey, Engine: e.Engine, EngineVersion: e.EngineVer,
		Kernel: e.Kernel, DBIOVersion: e.Version, Storage: storageText(e), Labels: e.Labels, Settings: map[string]string{}}
	what := []string{e.Workload}
	if e.Workload == "" {
		what[0] = e.Kind
	}
	if e.Engine != "" {
		what = append(what, e.Engine)
	}
	if len(e.Config.Users) > 0 {
		var users []string
		for _, u := range e.Config.Users {
			users = append(users, strconv.Itoa(u))
		}
		what = append(what, "users "+strings.Join(users, ","))
	}
	if e.Limit != "" {
		what = append(what, "limit "+e.Limit)
	}
	r.Describe = strings.Join(what, ", ")
	for k, v := range e.Config.EngineOptions.Settings {
		r.Settings[k] = v
	}
	if b := e.Config.EngineOptions.BufferPoolBytes; b > 0 {
		r.Settings["buffer pool"] = strconv.FormatInt(b, 10)
	}
	if b := e.Config.EngineOptions.ServerMemoryBytes; b > 0 {
		r.Settings["server memory"] = strconv.FormatInt(b, 10)
	}
	if e.Limit != "" {
		r.Settings["limit"] = e.Limit
	}
	return r
}

// describe says in words which runs the filters picked.
func (f historyFlags) describe() string {
	var parts []string
	for _, p := range []struct{ name, v string }{{"storage", f.filter.Storage}, {"engine", f.filter.Engine}, {"workload", f.filter.Workload},
		{"label", f.filter.Label}, {"since", f.since}, {"step", f.step}} {
		if p.v != "" {
			parts = append(parts, p.name+" "+p.v)
		}
	}
	if len(parts) == 0 {
		return "every run the history remembers"
	}
	return strings.Join(parts, ", ")
}

func newHistoryImportCmd(app *App) *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:   "import DIR...",
		Short: "Remember the runs of existing results directories (again is harmless)",
		Long: `Add every run found under each DIR (a results directory, a repeat set, a
suite directory, or a directory holding them) to the history. A run is kept
by its id, so importing a directory again changes nothing: the history can
always be rebuilt from the results directories.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := historyFlags{path: path}
			s, err := f.open(app)
			if err != nil {
				return err
			}
			defer s.Close()
			imported, problems := s.Import(cmd.Context(), args, app.Now())
			for _, p := range problems {
				fmt.Fprintf(app.Stderr, "dbio: %v\n", p)
			}
			fmt.Fprintf(app.Stdout, "%d run(s) remembered in %s\n", len(imported), s.Path())
			if len(problems) > 0 {
				return fmt.Errorf("%d of the directories' runs could not be imported", len(problems))
			}
			return nil
		},
	}
	registerHistory(cmd.Flags(), &path)
	return cmd
}

func writeIndentedJSON(app *App, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = app.Stdout.Write(append(b, '\n'))
	return err
}

func timeCSV(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
