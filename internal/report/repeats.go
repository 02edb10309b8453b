package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// A repeated run's report: every figure of its steps as the median over
// the repeats with its 95 % confidence interval and the spread between
// repeats (min to max), as analysis.RepeatedTables computes them; then the
// repeats themselves. The terminal summary says the same for the headline
// figures.

// WriteRepeatReport renders the repeat set in dir into dir (report.html,
// summary.md, csv/) and returns the path of report.html.
func WriteRepeatReport(dir string, opts Options) (string, error) {
	out := OutputIn(dir)
	return out.HTML, WriteRepeatReportTo(out, dir, opts)
}

// WriteRepeatReportTo renders the repeat set in dir to out.
func WriteRepeatReportTo(out Output, dir string, opts Options) error {
	set, runs, err := results.LoadRepeatSet(dir)
	if err != nil {
		return err
	}
	return out.write(repeatDocument(dir, set, viewsOf(runs, opts), opts))
}

// repeatedFigureText is a figure over repeats: "27,535 [26,100–28,400]",
// the median with its 95 % interval where the repeats allow one.
func repeatedFigureText(f analysis.RepeatedFigure, format func(float64) string) string {
	if f.N == 0 {
		return "-"
	}
	if f.CI {
		return format(f.Median) + " [" + format(f.CILo) + "–" + format(f.CIHi) + "]"
	}
	return format(f.Median)
}

// intervalText is the 95 % interval alone, or how many repeats it needs.
func intervalText(f analysis.RepeatedFigure, format func(float64) string) string {
	switch {
	case f.N == 0:
		return "-"
	case f.CI:
		return format(f.CILo) + "–" + format(f.CIHi)
	}
	return fmt.Sprintf("needs %d repeats", f.NeedForCI)
}

// spreadText is the spread between repeats of a metric's figure:
// "25,900–28,400 (9.1 %)", the range and its share of the median (left out
// under the metric's floor, where a share of the median is noise over noise).
func spreadText(f analysis.RepeatedFigure, m analysis.Metric) string {
	if f.N == 0 {
		return "-"
	}
	format := formatOf(m)
	s := format(f.Min) + "–" + format(f.Max)
	if f.Median != 0 && math.Abs(f.Median) >= m.Floor {
		s += " (" + percent(f.Spread()/math.Abs(f.Median)*100) + " %)"
	}
	return s
}

// figureLabel names a metric with its unit: "TPM (tx/min)".
func figureLabel(m analysis.Metric) string {
	if m.Unit == "" || m.Unit == m.Title {
		return m.Title
	}
	return m.Title + " (" + m.Unit + ")"
}

// headlineRow is the row of a table where its first metric (the headline
// throughput, or IOPS) has the highest median; -1 without one.
func headlineRow(t analysis.RepeatedTable) int {
	best := -1
	for i, r := range t.Rows {
		if len(r.Figures) == 0 || r.Figures[0].N == 0 {
			continue
		}
		if best < 0 || r.Figures[0].Median > t.Rows[best].Figures[0].Median {
			best = i
		}
	}
	return best
}

// rowWords names a row in a sentence: "at 4 users", "at randread-4k", "at backup-2".
func rowWords(t analysis.RepeatedTable, i int) string {
	if t.Key == "users" {
		return "at " + plural(t.Rows[i].Users, "user", "users")
	}
	return "at " + t.Rows[i].Label
}

// repeatFindings are the summary of a repeat set: the headline figure of
// each kind over the repeats, and the noise between repeats it measured.
func repeatFindings(tables []analysis.RepeatedTable, title func(string) string) []string {
	var out []string
	for _, t := range tables {
		i := headlineRow(t)
		if i < 0 {
			continue
		}
		m, f := t.Metrics[0], t.Rows[i].Figures[0]
		format := formatOf(m)
		line := fmt.Sprintf("%s %s %s: median %s %s over %s, spread %s", kindTitle(t.Kind, title), m.Title, rowWords(t, i),
			format(f.Median), m.Unit, plural(f.N, "repeat", "repeats"), spreadText(f, m))
		if f.CI {
			line += fmt.Sprintf("; 95 %% confidence interval of the median %s–%s.", format(f.CILo), format(f.CIHi))
		} else {
			line += fmt.Sprintf("; a 95 %% confidence interval of the median needs %d repeats.", f.NeedForCI)
		}
		out = append(out, line)
		worst, at := 0.0, -1
		for j, r := range t.Rows {
			if g := r.Figures[0]; g.N > 1 && g.Median != 0 && g.Spread()/math.Abs(g.Median) > worst {
				worst, at = g.Spread()/math.Abs(g.Median), j
			}
		}
		if at >= 0 {
			out = append(out, fmt.Sprintf("Repeats of this configuration differ by up to %s %% in %s (%s) without anything having changed: a difference between two single runs smaller than that is noise. Compare configurations by their repeats (dbio compare SET_A SET_B).",
				percent(worst*100), m.Title, strings.TrimPrefix(rowWords(t, at), "at ")))
		}
	}
	return out
}

func kindTitle(kind string, title func(string) string) string {
	if kind == "fio" {
		return "fio"
	}
	return title(kind)
}

// repeatTable lays out one RepeatedTable: a row per user count (or point)
// and figure.
func repeatTable(id string, t analysis.RepeatedTable, name string) *table {
	key := t.Key
	tb := &table{ID: id, Title: name + ": every figure over the repeats",
		Caption: "The median over the repeats, the 95 % confidence interval of that median (distribution-free, from the repeats' order; it needs 6 repeats), " +
			"and the spread between repeats: the lowest and highest repeat, and their range in % of the median. Steps that did not complete are left out."}
	tb.Columns = []column{{Name: key, Numeric: key == "users"}, {Name: "figure"}, {Name: "median", Numeric: true}, {Name: "95 % CI", Numeric: true},
		{Name: "min", Numeric: true}, {Name: "max", Numeric: true}, {Name: "spread", Numeric: true}, {Name: "repeats", Numeric: true}}
	for _, r := range t.Rows {
		for i, m := range t.Metrics {
			f := r.Figures[i]
			if f.N == 0 {
				continue
			}
			format := formatOf(m)
			spread := math.NaN()
			if f.Median != 0 && math.Abs(f.Median) >= m.Floor {
				// Under the metric's floor a share of the median is noise over noise.
				spread = f.Spread() / math.Abs(f.Median) * 100
			}
			spreadCell := cell{Text: "-"}
			if !math.IsNaN(spread) {
				spreadCell = cell{Text: percent(spread) + " %", Raw: raw(spread)}
			}
			ci := cell{Text: intervalText(f, format)}
			if f.CI {
				ci.Raw = raw(f.CILo) + "–" + raw(f.CIHi)
			}
			tb.Rows = append(tb.Rows, []cell{textCell(r.Label), textCell(figureLabel(m)), numCell(f.Median, format), ci,
				numCell(f.Min, format), numCell(f.Max, format), spreadCell, numCell(float64(f.N), thousands)})
		}
	}
	return tb
}

// repeatChart draws a workload's headline throughput against users over
// the repeats: the median solid, the lowest and highest repeat dotted.
func repeatChart(id string, t analysis.RepeatedTable) *chart {
	if t.Key != "users" || len(t.Metrics) == 0 {
		return nil
	}
	m := t.Metrics[0]
	c := &chart{ID: id, Title: sentenceCase(m.Title) + " vs virtual users over the repeats", Note: "Median solid; the lowest and highest repeat dotted: the band between them is the noise between repeats.",
		X: usersAxis(), Y: axis{Label: m.Title, Unit: m.Unit, Zero: true}}
	med, lo, hi := series{Name: "median", Dash: solid}, series{Name: "lowest repeat", Dash: dotted}, series{Name: "highest repeat", Dash: dotted}
	for _, r := range t.Rows {
		f := r.Figures[0]
		if f.N == 0 {
			continue
		}
		x := float64(r.Users)
		med.X, med.Y = append(med.X, x), append(med.Y, f.Median)
		lo.X, lo.Y = append(lo.X, x), append(lo.Y, f.Min)
		hi.X, hi.Y = append(hi.X, x), append(hi.Y, f.Max)
	}
	c.Series = []series{med, lo, hi}
	if !c.hasData() {
		return nil
	}
	return c
}

// repeatDocument is the report of a repeat set.
func repeatDocument(dir string, set results.RepeatSet, runs []*runView, opts Options) *document {
	first := runs[0]
	completed := 0
	for _, r := range runs {
		if r.Run.Status == results.StatusCompleted {
			completed++
		}
	}
	d := &document{Title: fmt.Sprintf("dbio %s: %s, %s", set.Kind, set.Name, plural(set.Repeats, "repeat", "repeats")), Subtitle: runSubtitle(first)}
	d.Facts = []fact{{"status", string(set.Status)}, {"repeats", fmt.Sprintf("%d of %d completed", completed, set.Repeats)},
		{"started", stamp(set.Started)}, {"results", dir}}
	if set.Label != "" {
		d.Facts = append(d.Facts, fact{"configuration", set.Label})
	}
	if set.Status != results.StatusCompleted && set.Status != results.StatusRunning {
		msg := "The repeat set ended " + string(set.Status)
		if set.Error != "" {
			msg += ": " + set.Error
		}
		d.Alerts = append(d.Alerts, alert{"warning", msg + ". The repeats it finished are reported."})
	}
	for _, r := range runs {
		for _, c := range r.Run.Checks {
			if !c.Passed && !c.Skipped {
				d.Alerts = append(d.Alerts, alert{"error", r.Name + ": consistency check failed: " + c.Name + ". Its figures are not valid evidence."})
			}
		}
	}
	tables := analysis.RepeatedTables(runViews(runs))
	summary := &section{ID: "summary", Title: "Summary"}
	findings := repeatFindings(tables, first.title)
	if len(findings) == 0 {
		findings = append(findings, "No step finished with figures in any repeat.")
	}
	summary.add(&bullets{Items: findings})
	d.Sections = append(d.Sections, summary)
	for _, t := range tables {
		name := kindTitle(t.Kind, first.title)
		sec := &section{ID: "rep-" + t.Kind, Title: name + " over " + plural(len(runs), "repeat", "repeats")}
		if c := repeatChart("rep-"+t.Kind+"-throughput", t); c != nil {
			sec.add(c)
		}
		sec.add(repeatTable("rep-"+t.Kind+"-figures", t, name))
		d.Sections = append(d.Sections, sec)
	}
	list := &section{ID: "rep-runs-section", Title: "The repeats"}
	list.add(repeatRunsTable(runs))
	d.Sections = append(d.Sections, list)
	d.Sections = append(d.Sections, environmentSection(first, "first-"), configurationSection(first, "first-"))
	d.Footer = footer(opts, runs)
	return d
}

// repeatRunsTable lists the repeats with their headline figures.
func repeatRunsTable(runs []*runView) *table {
	t := &table{ID: "rep-runs", Title: "Repeats", Caption: "Each repeat is a results directory of its own, with its own report."}
	t.Columns = []column{{Name: "#", Numeric: true}, {Name: "run"}, {Name: "status"}, {Name: "started"}, {Name: "headline", Wrap: true}, {Name: "results directory"}}
	for i, r := range runs {
		t.Rows = append(t.Rows, []cell{numCell(float64(i+1), thousands), textCell(r.Name), statusCell(string(r.Run.Status)),
			textCell(stamp(r.Run.Started)), textCell(orDash(headlineWords(r))), textCell(r.Path)})
	}
	return t
}

// headlineWords are a run's headline figures in a few words: "TPM 27,535 at 4 users".
func headlineWords(r *runView) string {
	var parts []string
	for _, h := range analysis.Headlines(r.Recorded) {
		var figs []string
		for i, f := range h.Figures {
			figs = append(figs, f.Title+" "+quantity(h.Values[i]))
		}
		where := " at " + plural(h.Users, "user", "users")
		if h.Point != "" {
			where = " (" + h.Point + ")"
		}
		parts = append(parts, strings.Join(figs, ", ")+where)
	}
	return strings.Join(parts, "; ")
}

// RepeatText writes a repeat set's summary for a terminal: per workload
// and user count, the headline figures over the repeats as the median, its
// 95 % interval and the spread.
func RepeatText(w io.Writer, dir string, opts Options) error {
	set, runs, err := results.LoadRepeatSet(dir)
	if err != nil {
		return err
	}
	views := viewsOf(runs, opts)
	completed := 0
	for _, r := range runs {
		if r.Run.Status == results.StatusCompleted {
			completed++
		}
	}
	fmt.Fprintf(w, "\n== dbio %s: %d of %d repeats completed, %s ==\n", set.Kind, completed, set.Repeats, strings.ToUpper(string(set.Status)))
	tables := analysis.RepeatedTables(runViews(views))
	for _, t := range tables {
		fmt.Fprintf(w, "%s: median over the repeats [95 %% confidence interval], spread min–max (range in %% of the median)\n", kindTitle(t.Kind, opts.title))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "%s\tfigure\tmedian [95 %% CI]\tspread\trepeats\n", t.Key)
		for _, r := range t.Rows {
			for i, m := range t.Metrics {
				f := r.Figures[i]
				if f.N == 0 || !headlineMetric(m) {
					continue
				}
				format := formatOf(m)
				med := repeatedFigureText(f, format)
				if !f.CI {
					med += fmt.Sprintf(" [needs %d]", f.NeedForCI)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", r.Label, figureLabel(m), med, spreadText(f, m), f.N)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, f := range repeatFindings(tables, opts.title) {
		fmt.Fprintln(w, f)
	}
	return nil
}

// headlineMetric says a metric is one the terminal shows: throughput and
// the response time, not the telemetry figures the report adds.
func headlineMetric(m analysis.Metric) bool {
	return m.Better == results.HigherBetter || strings.HasPrefix(m.ID, "latency-") || strings.HasPrefix(m.ID, "lat-")
}
