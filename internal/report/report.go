package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/results"
	"dbio/internal/units"
)

// Options are what a rendering needs beyond the results directories.
type Options struct {
	// Now stamps the report's footer; nil leaves the time out, and the
	// report is then a function of its results directories alone.
	Now func() time.Time
	// Version is dbio's version, named in the footer.
	Version string
	// Force compares runs that are not comparable; the report says why
	// they are not.
	Force bool
	// Titles name workload kinds in headings ("TPC-C" for tpcc): the
	// workload registry's; nil names each by its kind.
	Titles func(kind string) string
	// SettingFlag names the flag of a workload's setting as run.json
	// records it ("load_workers" is --load-workers), so that the
	// configuration reads in the flags' words: the workload registry's
	// Flag; nil keeps the recorded keys.
	SettingFlag func(kind, key string) (flag string, ok bool)
}

// title names a workload kind for headings (see Titles).
func (o Options) title(kind string) string {
	if o.Titles == nil {
		return kind
	}
	return o.Titles(kind)
}

// Output names the files of one report: the HTML page, the Markdown
// summary and the directory of CSV exports (one file per table).
type Output struct {
	HTML     string
	Markdown string
	CSVDir   string
}

// OutputIn is the report of a results directory, written into it:
// report.html, summary.md and csv/.
func OutputIn(dir string) Output {
	return Output{HTML: filepath.Join(dir, "report.html"), Markdown: filepath.Join(dir, "summary.md"), CSVDir: filepath.Join(dir, "csv")}
}

// OutputAt is a report written where the user asked (-o PATH). PATH names
// the HTML page (x.html) or the Markdown summary (x.md), and the report's
// other files go beside it under the same name: x.html, x.md and x-csv/
// (one CSV file per table). A PATH without either extension is the page's
// name without one: x, or x.csv, gives x.html or x.csv.html; HTML is
// never written into a file named otherwise. OutputFor refuses such a
// path instead.
func OutputAt(path string) Output {
	stem := strings.TrimSuffix(path, filepath.Ext(path))
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md":
		return Output{HTML: stem + ".html", Markdown: path, CSVDir: stem + "-csv"}
	case ".html", ".htm":
		return Output{HTML: path, Markdown: stem + ".md", CSVDir: stem + "-csv"}
	}
	return Output{HTML: path + ".html", Markdown: path + ".md", CSVDir: path + "-csv"}
}

// OutputFor is OutputAt for the path a user gave (-o): x.html, x.md or x
// (for x.html). A CSV file's name is refused, since a report has one CSV
// file per table, and so is another extension or a directory: the error
// says what to name instead.
func OutputFor(path string) (Output, error) {
	stem := strings.TrimSuffix(path, filepath.Ext(path))
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return Output{}, fmt.Errorf("-o %s is a directory: name the report's HTML page in it (-o %s)", path, filepath.Join(path, "report.html"))
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case "", ".html", ".htm", ".md":
		return OutputAt(path), nil
	case ".csv":
		return Output{}, fmt.Errorf("-o %s: a report has one CSV file per table, which go into a directory beside its HTML page: name the page (-o %s.html) and the tables go into %s-csv/", path, stem, stem)
	default:
		return Output{}, fmt.Errorf("-o %s: dbio writes a report as an HTML page and a Markdown summary beside it: name either one (-o %s.html or -o %s.md)", path, stem, stem)
	}
}

// WriteRunReport renders the results directory dir into itself (see
// OutputIn) and returns the path of report.html. dbio quick and dbio tpcc
// call it at the end of a run.
func WriteRunReport(dir string, opts Options) (string, error) {
	l, err := results.Load(dir)
	if err != nil {
		return "", err
	}
	out := OutputIn(dir)
	return out.HTML, WriteReport(out, []*results.Loaded{l}, opts)
}

// WriteReport writes the report of one or more runs, each in its own
// section.
func WriteReport(out Output, runs []*results.Loaded, opts Options) error {
	if len(runs) == 0 {
		return errors.New("no results directory to report on")
	}
	return out.write(runDocument(viewsOf(runs, opts), opts))
}

// CheckComparable returns a *NotComparableError when the runs differ in
// workload, scale, user sequence or fio plan, and nil otherwise.
func CheckComparable(runs []*results.Loaded, opts Options) error {
	if refusal, _ := comparability(viewsOf(runs, opts)); refusal.Refused() {
		return notComparable(refusal)
	}
	return nil
}

// WriteComparison writes the comparison of two or more runs, the first
// being the baseline, and returns its headlines (the Summary's findings,
// then its warnings) for a terminal. Runs that are not comparable are
// refused with a *NotComparableError unless opts.Force is set.
func WriteComparison(out Output, runs []*results.Loaded, opts Options) ([]string, error) {
	if len(runs) < 2 {
		return nil, fmt.Errorf("a comparison needs at least two results directories, got %d: name the baseline first, then the runs to compare with it", len(runs))
	}
	views := viewsOf(runs, opts)
	refusal, warnings := comparability(views)
	if refusal.Refused() && !opts.Force {
		return nil, notComparable(refusal)
	}
	d, findings := compareDocument(views, refusal.Reasons(), warnings, opts)
	for _, w := range warnings {
		findings = append(findings, "Note: "+sentenceCase(w)+".")
	}
	return findings, out.write(d)
}

func viewsOf(runs []*results.Loaded, opts Options) []*runView {
	views := make([]*runView, len(runs))
	for i, l := range runs {
		v := newRunView(l)
		v.Letter = letter(i)
		v.opts = opts
		views[i] = v
	}
	nameRuns(views)
	return views
}

// runDocument is the report of one or more runs.
func runDocument(runs []*runView, opts Options) *document {
	if len(runs) == 1 {
		r := runs[0]
		d := &document{Title: "dbio " + r.Run.Kind + ": " + r.Name, Subtitle: runSubtitle(r), Facts: runFacts(r), Alerts: runAlerts(r)}
		d.Sections = runSections(r, "")
		d.Footer = footer(opts, []*runView{r})
		return d
	}
	d := &document{Title: fmt.Sprintf("dbio report: %d runs", len(runs))}
	for _, r := range runs {
		d.Facts = append(d.Facts, fact{r.Letter, r.Name + " — " + runSubtitle(r)})
		for _, a := range runAlerts(r) {
			d.Alerts = append(d.Alerts, alert{a.Level, r.Letter + ": " + a.Text})
		}
		prefix := strings.ToLower(r.Letter) + "-"
		sec := &section{ID: prefix + "run", Title: r.Letter + ": " + r.Name}
		sec.Subs = runSections(r, prefix)
		d.Sections = append(d.Sections, sec)
	}
	d.Footer = footer(opts, runs)
	return d
}

// demandFindings say, for a run that measured its device with fio and then
// ran a workload on it, what the workload asked of the device against what
// fio found it can do: "TPC-C drove 4,712 writes/s on vda at 4 users: 17 %
// of the 27,610 IOPS of fio's 4k-randwrite point."
func demandFindings(r *analysis.Recorded, title func(kind string) string) []string {
	var out []string
	for _, w := range r.Workloads {
		for _, d := range analysis.DeviceDemand(r.Fio, w.Steps) {
			what := "reads"
			if d.Write {
				what = "writes"
			}
			out = append(out, fmt.Sprintf("%s drove %s %s/s on %s at %s: %s of the %s IOPS of fio's %s point.",
				title(w.Kind), thousands(d.PerS), what, d.Device, plural(d.Users, "user", "users"),
				sharePct(d.SharePct()), thousands(d.Capacity), d.Point))
		}
	}
	return out
}

// sharePct writes a share for a sentence: "17 %", "0.4 %", "< 0.1 %".
func sharePct(v float64) string {
	switch {
	case v > 0 && v < 0.1:
		return "< 0.1 %"
	case v < 10:
		return fixed(v, 1) + " %"
	}
	return fixed(v, 0) + " %"
}

// runSections are a run's summary, measurements, environment and configuration.
func runSections(r *runView, prefix string) []*section {
	summary := &section{ID: prefix + "summary", Title: "Summary"}
	var findings []string
	var body []*section
	if len(r.Fio) > 0 {
		s, f := fioSection(r, prefix)
		body = append(body, s)
		findings = append(findings, f...)
	}
	for _, w := range r.Workloads {
		s, f := workloadSection(r, w, prefix)
		body = append(body, s)
		findings = append(findings, f...)
	}
	if s, f := tenantsSection(r, prefix); s != nil {
		body = append(body, s)
		findings = append(findings, f)
	}
	if s, f := fleetTimelineSection(r, prefix); s != nil {
		body = append(body, s)
		if f != "" {
			findings = append(findings, f)
		}
	}
	if len(r.BlockIO) > 0 {
		s, f := blockIOSection(r, prefix)
		body = append(body, s)
		findings = append(findings, f...)
	}
	findings = append(findings, demandFindings(r.Recorded, r.title)...)
	if len(r.Other) > 0 {
		body = append(body, otherSection(r.Other, prefix))
	}
	if c := checksFinding(r); c != "" {
		findings = append(findings, c)
	}
	if f := thresholdsFinding(r.Run.Thresholds); f != "" {
		findings = append(findings, f)
	}
	if len(findings) == 0 {
		findings = append(findings, "No step finished with figures.")
	}
	summary.add(&bullets{Items: findings})
	out := append([]*section{summary}, body...)
	return append(out, environmentSection(r, prefix), configurationSection(r, prefix))
}

func checksFinding(r *runView) string {
	if len(r.Run.Checks) == 0 {
		return ""
	}
	failed, skipped := 0, 0
	for _, c := range r.Run.Checks {
		switch {
		case c.Skipped:
			skipped++
		case !c.Passed:
			failed++
		}
	}
	switch {
	case failed > 0:
		return fmt.Sprintf("CONSISTENCY CHECK FAILED: %d of %d conditions violated; the figures are not valid evidence.", failed, len(r.Run.Checks))
	case skipped > 0:
		return "Consistency checks were skipped at the user's request."
	}
	return fmt.Sprintf("All %s passed after the run.", plural(len(r.Run.Checks), "consistency check", "consistency checks"))
}

// thresholdsFinding is the verdict of the run's --threshold bounds.
func thresholdsFinding(judged []results.ThresholdResult) string {
	if len(judged) == 0 {
		return ""
	}
	var broken []string
	for _, j := range judged {
		if !j.Passed {
			broken = append(broken, j.Expr)
		}
	}
	if len(broken) > 0 {
		return fmt.Sprintf("THRESHOLDS BROKEN: %d of %d (%s): dbio exits 99 on them.", len(broken), len(judged), strings.Join(broken, ", "))
	}
	return fmt.Sprintf("All %s met.", plural(len(judged), "threshold", "thresholds"))
}

// otherSection lists steps of kinds the report has no section for.
func otherSection(steps []results.Step, prefix string) *section {
	sec := &section{ID: prefix + "other", Title: "Other steps"}
	var names []results.FigureName
	seen := map[results.FigureName]bool{}
	for _, s := range steps {
		for _, f := range s.Figures {
			if !seen[f.Name] {
				seen[f.Name] = true
				names = append(names, f.Name)
			}
		}
	}
	t := &table{ID: prefix + "other-steps", Title: "Steps"}
	t.Columns = []column{{Name: "step"}, {Name: "kind"}}
	units := map[results.FigureName]string{}
	for _, s := range steps {
		for _, f := range s.Figures {
			units[f.Name] = f.Unit
		}
	}
	for _, n := range names {
		name := string(n)
		if units[n] != "" {
			name += " (" + units[n] + ")"
		}
		t.Columns = append(t.Columns, column{Name: name, Numeric: true})
	}
	t.Columns = append(t.Columns, column{Name: "status"})
	for _, s := range steps {
		row := []cell{textCell(s.Name), textCell(s.Kind)}
		for _, n := range names {
			row = append(row, numCell(analysis.Value(s, n), quantity))
		}
		row = append(row, statusCell(string(s.Status)))
		t.Rows = append(t.Rows, row)
	}
	sec.add(t)
	return sec
}

// runSubtitle says what ran on what: "TPC-C, 1 warehouse, users 1,2,4 on sqlite 3.54.1 · ext4 on vda".
func runSubtitle(r *runView) string {
	line := runWhat(r)
	if where := storageOf(r.Run); where != "" {
		line += " · " + where
	}
	return strings.TrimPrefix(line, " · ")
}

// storageOf says where a run measured: its first target's storage, or,
// when its targets are on several hosts, those hosts ("on 3 hosts: h1,
// h2, h3"); empty without a target.
func storageOf(run results.Run) string {
	ts := targetsOf(run)
	var hosts []string
	for _, t := range ts {
		if t.Host != "" && !slices.Contains(hosts, t.Host) {
			hosts = append(hosts, t.Host)
		}
	}
	switch {
	case len(hosts) > 1:
		return fmt.Sprintf("on %d hosts: %s", len(hosts), strings.Join(hosts, ", "))
	case len(ts) > 0:
		return ts[0].Describe()
	}
	return ""
}

// compareSubtitle says what the baseline ran and on what storage every run
// ran: "TPC-C … on sqlite 3.54.1 · A: ext4 on vda; B: tmpfs, no block device",
// the storage once when all runs share it.
func compareSubtitle(runs []*runView) string {
	texts := make([]string, len(runs))
	same := true
	for i, r := range runs {
		texts[i] = "no target recorded"
		if where := storageOf(r.Run); where != "" {
			texts[i] = where
		}
		same = same && texts[i] == texts[0]
	}
	storage := texts[0]
	if !same {
		named := make([]string, len(runs))
		for i, r := range runs {
			named[i] = r.Letter + ": " + texts[i]
		}
		storage = strings.Join(named, "; ")
	}
	return strings.TrimPrefix(runWhat(runs[0])+" · "+storage, " · ")
}

// runWhat says what ran: "TPC-C, 1 warehouse, users 1,2,4 on sqlite 3.54.1".
func runWhat(r *runView) string {
	var what []string
	if len(r.Fio) > 0 {
		p := r.FioProfile()
		if p == "" {
			p = "fio"
		} else {
			p = "fio " + p
		}
		what = append(what, fmt.Sprintf("%s (%s)", p, plural(len(r.Fio), "point", "points")))
	}
	for _, w := range r.Workloads {
		s := r.title(w.Kind)
		if w.Kind == "tpcc" {
			if n := r.Warehouses(); n > 0 {
				s += ", " + plural(n, "warehouse", "warehouses")
			}
		}
		s += ", users " + intsText(r.Users(w))
		what = append(what, s)
	}
	for _, s := range r.BlockIO {
		what = append(what, blockIOWhat(s))
	}
	line := strings.Join(what, " then ")
	for i, e := range r.Run.Engines {
		if i == 0 {
			line += " on "
		} else {
			line += ", "
		}
		line += e.Engine + " " + e.Version
	}
	return line
}

func runFacts(r *runView) []fact {
	run := r.Run
	facts := []fact{{"status", string(run.Status)}, {"started", stamp(run.Started)}}
	if !run.Ended.IsZero() {
		facts = append(facts, fact{"duration", run.Ended.Sub(run.Started).Round(time.Second).String()})
	}
	env := run.Environment
	host := env.Hostname
	if env.CPUModel != "" {
		host += ": " + env.CPUModel
	}
	if env.CPUs > 0 {
		host += ", " + plural(env.CPUs, "CPU", "CPUs")
	}
	if env.MemoryBytes > 0 {
		host += ", " + units.FormatBytes(env.MemoryBytes)
	}
	if env.Kernel != "" {
		host += ", Linux " + env.Kernel
	}
	facts = append(facts, fact{"host", host})
	for _, t := range targetsOf(run) {
		facts = append(facts, fact{"target (" + string(t.Role) + ")", t.Path + ": " + t.Describe()})
	}
	if m := serverMemory(r); m != "" {
		facts = append(facts, fact{"server memory", m})
	}
	facts = append(facts, fact{"results", r.Path})
	return facts
}

// serverMemory says how much memory the server had, when dbio capped it:
// "512 MiB, page cache included (cgroup v1-memory); buffer pool 128 MiB".
func serverMemory(r *runView) string {
	for _, e := range r.Run.Engines {
		if e.MemoryLimit == nil {
			continue
		}
		s := units.FormatBytes(uint64(e.MemoryLimit.Bytes)) + ", page cache included (" + e.MemoryLimit.Mechanism + ")"
		if pool := r.Run.Config.EngineOptions.BufferPoolBytes; pool > 0 {
			s += "; buffer pool " + units.FormatBytes(uint64(pool))
		} else {
			s += "; buffer pool at the engine's default"
		}
		return s
	}
	return ""
}

func runAlerts(r *runView) []alert {
	var out []alert
	run := r.Run
	for _, c := range run.Checks {
		if !c.Passed && !c.Skipped {
			out = append(out, alert{"error", "Consistency check failed: " + c.Name + ". The figures of this run are not valid evidence."})
		}
	}
	switch run.Status {
	case "completed":
	case "running":
		out = append(out, alert{"warning", "The run was still running when this report was made: the report shows what it had recorded."})
	case "abandoned":
		out = append(out, alert{"warning", "The run was abandoned: " + run.Error + "."})
	default:
		msg := "The run ended " + string(run.Status)
		if run.Error != "" {
			msg += ": " + run.Error
		}
		out = append(out, alert{"warning", msg + ". The steps it finished are reported."})
	}
	if n := len(run.Warnings); n > 0 {
		out = append(out, alert{"info", plural(n, "warning was", "warnings were") + " recorded during the run; see Configuration and outcome."})
	}
	return out
}

func footer(opts Options, runs []*runView) string {
	s := "Rendered by dbio"
	if opts.Version != "" {
		s += " " + opts.Version
	}
	if opts.Now != nil {
		s += " on " + stamp(opts.Now())
	}
	var paths []string
	for _, r := range runs {
		paths = append(paths, r.Path)
	}
	s += " from " + strings.Join(paths, ", ") + ". Every figure comes from those results directories (run.json, steps/*/summary.json, series.csv); the tables are also in the CSV files beside this report."
	if files := spectrumFiles(runs); len(files) > 0 {
		s += " The latency spectra are drawn from the steps' histograms: " + strings.Join(files, ", ") + "."
	}
	return s
}

// compareDocument is the comparison of runs[1:] against runs[0], and the
// findings its Summary lists.
func compareDocument(runs []*runView, reasons, warnings []string, opts Options) (*document, []string) {
	var names []string
	for _, r := range runs {
		names = append(names, r.Letter+" "+r.Name)
	}
	d := &document{Title: "dbio comparison: " + strings.Join(names, " vs "), Subtitle: compareSubtitle(runs)}
	for _, r := range runs {
		d.Facts = append(d.Facts, fact{r.Letter, r.Name + " — " + runSubtitle(r) + " (" + r.Path + ")"})
	}
	if len(reasons) > 0 {
		d.Alerts = append(d.Alerts, alert{"error", "Compared with --force although the runs are not comparable: " + strings.Join(reasons, "; ") + "."})
	}
	for _, w := range warnings {
		d.Alerts = append(d.Alerts, alert{"warning", sentenceCase(w) + "."})
	}
	for _, r := range runs {
		for _, c := range r.Run.Checks {
			if !c.Passed && !c.Skipped {
				d.Alerts = append(d.Alerts, alert{"error", r.Letter + ": consistency check failed: " + c.Name + "."})
			}
		}
	}
	summary := &section{ID: "summary", Title: "Summary"}
	d.Sections = append(d.Sections, summary)
	var findings []string
	overview := &section{ID: "cmp-runs-section", Title: "Runs and what differs"}
	overview.add(runsTable(runs))
	if diff := sideBySide(runs, true); len(diff.Rows) > 0 {
		overview.add(diff)
	} else {
		overview.add(&paragraph{Text: "The runs' configurations, hosts, storage and versions are identical: the comparison measures run-to-run variation.", Class: "note"})
	}
	d.Sections = append(d.Sections, overview)
	if len(runs[0].Fio) > 0 {
		s, f := compareFio(runs)
		d.Sections = append(d.Sections, s)
		findings = append(findings, f...)
	}
	var leads []string
	for _, w := range runs[0].Workloads {
		s, f, lead := compareWorkload(runs, w.Kind)
		d.Sections = append(d.Sections, s)
		findings = append(findings, f...)
		if lead != "" {
			leads = append(leads, lead)
		}
	}
	if s, f := compareFleetHosts(runs); s != nil {
		d.Sections = append(d.Sections, s)
		findings = append(findings, f...)
	}
	if len(runs[0].BlockIO) > 0 {
		s, f := compareBlockIO(runs)
		d.Sections = append(d.Sections, s)
		findings = append(findings, f...)
	}
	if len(findings) == 0 {
		findings = append(findings, "The runs have no step in common to compare.")
	} else {
		// A comparison of runs sets one run against one run: it cannot tell
		// a difference from the noise between repeats, and says so.
		findings = append(findings, "Each figure above is one run against one run, so it includes run-to-run noise that one run cannot measure: repeat each side (dbio ab --repeat 4 or more) to learn which differences are beyond it.")
	}
	// A change of bottleneck is what a comparison says first.
	findings = append(leads, findings...)
	summary.add(&bullets{Items: findings})
	overview.add(sideBySide(runs, false))
	d.Footer = footer(opts, runs)
	return d, findings
}

// write renders the document to the output's three destinations, after
// checking that none of them would overwrite a file dbio did not write.
func (o Output) write(d *document) error {
	if err := checkOwned(o.HTML, generatorMark); err != nil {
		return err
	}
	if err := checkOwned(o.Markdown, markdownMark); err != nil {
		return err
	}
	if err := checkCSVDir(o.CSVDir); err != nil {
		return err
	}
	csvRel := ""
	if o.CSVDir != "" {
		if rel, err := filepath.Rel(filepath.Dir(o.HTML), o.CSVDir); err == nil {
			csvRel = filepath.ToSlash(rel)
		}
	}
	if o.CSVDir != "" {
		if err := writeCSVDir(o.CSVDir, d); err != nil {
			return err
		}
	}
	if o.Markdown != "" {
		var md bytes.Buffer
		if err := writeMarkdown(&md, d, filepath.Base(o.HTML), csvRel); err != nil {
			return err
		}
		if err := writeShared(o.Markdown, md.Bytes()); err != nil {
			return err
		}
	}
	var page bytes.Buffer
	if err := writeHTML(&page, d, csvRel); err != nil {
		return err
	}
	return writeShared(o.HTML, page.Bytes())
}

// writeShared writes a file atomically, readable by all: reports are meant
// to be passed around.
func writeShared(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := results.WriteFileAtomic(path, data); err != nil {
		return err
	}
	return os.Chmod(path, 0o644)
}

// checkOwned refuses to replace anything at path but a regular file that
// carries dbio's mark: a link is not followed, and a named pipe or device
// is not opened. A refusal wraps results.ErrNotOwned.
func checkOwned(path, mark string) error {
	if path == "" {
		return nil
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("report: %w", err)
	case !fi.Mode().IsRegular():
		what := "is not a regular file dbio wrote"
		if fi.Mode()&fs.ModeSymlink != 0 {
			what = "is a symbolic link, which dbio never writes through"
		}
		return fmt.Errorf("%w: choose another output path (-o) or move it away", results.NotOwned(path, what))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	if !bytes.Contains(head[:n], []byte(mark)) {
		return fmt.Errorf("%w: choose another output path (-o) or move that file away", results.NotOwned(path, "already exists and was not written by dbio"))
	}
	return nil
}

// checkCSVDir accepts a missing directory (dbio creates it) or one of
// dbio's own (see results.CheckOwnedDir): never a link, which would send
// the tables, and the removal of stale ones, elsewhere.
func checkCSVDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := results.CheckOwnedDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		if errors.Is(err, results.ErrNotOwned) {
			return fmt.Errorf("%w: dbio writes a report's tables only into a directory it created; choose another output path (-o) or move that away", err)
		}
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

var unsafeFile = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// writeCSVDir writes one CSV per table, named after the table, into dbio's
// own directory dir (created and marked when missing, else as
// checkCSVDir accepted it), and removes the CSVs of an earlier rendering
// that this one no longer has: regular files only, never through a link.
func writeCSVDir(dir string, d *document) error {
	switch err := results.CheckOwnedDir(dir); {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if err := results.MakeOwnedDir(dir, "created by dbio report\n"); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	case err != nil:
		return checkCSVDir(dir)
	}
	written := map[string]bool{}
	for i, t := range d.tables() {
		name := unsafeFile.ReplaceAllString(t.ID, "-")
		if name == "" {
			name = "table-" + strconv.Itoa(i+1)
		}
		base := name
		for n := 2; written[name+".csv"]; n++ {
			name = base + "-" + strconv.Itoa(n)
		}
		var b bytes.Buffer
		if err := writeCSV(&b, t); err != nil {
			return err
		}
		if err := writeShared(filepath.Join(dir, name+".csv"), b.Bytes()); err != nil {
			return err
		}
		written[name+".csv"] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".csv") && !written[e.Name()] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("report: %w", err)
			}
		}
	}
	return nil
}
