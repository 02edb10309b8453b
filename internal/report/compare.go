package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"dbio/internal/analysis"
	"dbio/internal/results"
	"dbio/internal/units"
)

// Comparisons put two or more runs side by side: A is the baseline, every
// other run is read against it as in the A/B table of an accelerator study
// (per step: A, B, the differential, the ratio and the improvement in %,
// then the averages), with the charts overlaid. internal/analysis matches
// the steps and does the arithmetic; this file lays it out.

// NotComparableError says why runs cannot be compared meaningfully.
type NotComparableError struct {
	// Reasons are how runs of one kind differ (workload, scale, pacing,
	// users): comparing runs that agree on them is the fix.
	Reasons []string
	// Fleets are fleet runs set against runs on one machine: each names
	// its own fix.
	Fleets []string
}

func notComparable(r analysis.Refusal) *NotComparableError {
	return &NotComparableError{Reasons: r.Differences, Fleets: r.Fleets}
}

func (e *NotComparableError) Error() string {
	var parts []string
	if len(e.Reasons) > 0 {
		hint := " (compare runs of the same workload, scale and user sequence, or pass --force to compare them anyway)"
		if len(e.Fleets) > 0 {
			hint = " (compare runs of the same workload, scale and user sequence)"
		}
		parts = append(parts, strings.Join(e.Reasons, "; ")+hint)
	}
	if len(e.Fleets) > 0 {
		// A fleet's reason says what to compare instead: only --force is
		// left to add.
		parts = append(parts, strings.Join(e.Fleets, "; ")+" (--force compares them anyway)")
	}
	return "the runs are not comparable: " + strings.Join(parts, "; ")
}

// letter names the i-th run of a comparison: A, B, … Z, then R27, R28…
func letter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return "R" + strconv.Itoa(i+1)
}

func intsText(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// comparability returns why the runs cannot be compared (the refusal) and
// what a reader should know about comparing them (warnings).
func comparability(runs []*runView) (refusal analysis.Refusal, warnings []string) {
	title := func(kind string) string { return kind }
	if len(runs) > 0 {
		title = runs[0].title
	}
	return analysis.Comparability(runViews(runs), analysis.Names{
		Run:      func(i int) string { return runs[i].Letter + " (" + runs[i].Name + ")" },
		Workload: title,
	})
}

// formatOf is how a compared metric's values are written.
func formatOf(m analysis.Metric) func(float64) string {
	switch {
	case m.Unit == results.FigureIOPS.Def().Unit:
		return thousands
	case strings.HasPrefix(m.Unit, "ms"):
		return millis
	case strings.HasPrefix(m.Unit, "%"):
		return percent
	}
	return quantity
}

// abSummary is a metric's average comparison of one run against A.
type abSummary struct {
	metric analysis.Metric
	run    *runView
	analysis.Average
}

// judgementClass colors a difference: green where the run is better, red
// where it is worse, nothing otherwise.
func judgementClass(j analysis.Judgement) string {
	switch j {
	case analysis.Improved:
		return "better"
	case analysis.Worsened:
		return "worse"
	}
	return ""
}

// changeText is a difference's change in % and what it means for the
// metric, in words: "−58 %, better", "n/a (A is 0), better"; the word
// alone where the values are under the metric's floor.
func changeText(d analysis.Difference) string {
	word := d.Judgement.Word()
	change := percentChange(d.A.Mean, d.B.Mean)
	switch {
	case d.UnderFloor || change == "-":
		return orDash(word)
	case word == "":
		return change
	}
	return change + ", " + word
}

// abHowToRead explains the A/B tables once per section.
func abHowToRead(per string) *paragraph {
	return &paragraph{Class: "note", Text: "How to read the tables: each " + per + " of every run is set against the same " + per +
		" of A. The differential is the run minus A, the ratio is the run over A (2.0x is twice A), and the change is the run against A in %, " +
		"followed by what it means: better or worse for that figure (higher throughput and lower latency are better; green better, red worse), " +
		"higher or lower for a figure that is neither, no change under 1 %. Where a value is under the figure's floor (stated under its table) " +
		"there is no ratio and no %: the differential says how far apart the runs are. The average row compares the averages over the " +
		per + "s both runs completed."}
}

// anyUnderFloor says some difference of the table is under its metric's floor.
func anyUnderFloor(v analysis.Versus) bool {
	for _, row := range v.Against {
		for _, d := range row {
			if d.UnderFloor {
				return true
			}
		}
	}
	for _, a := range v.Averages {
		if a.UnderFloor {
			return true
		}
	}
	return false
}

// underFloor says every value of a metric's table is under its floor: a
// table of ratios of noise that is better left out.
func underFloor(m analysis.Metric, v analysis.Versus) bool {
	if m.Floor <= 0 {
		return false
	}
	for _, row := range v.Values {
		for _, x := range row {
			if !math.IsNaN(x) && math.Abs(x) >= m.Floor {
				return false
			}
		}
	}
	return true
}

// abTable lays out a metric's A/B table for v, the metric read against the
// baseline. keyName heads the first column ("users"); per names a row ("step").
func abTable(id, keyName, per string, m analysis.Metric, v analysis.Versus, rows []analysis.Row, runs []*runView) (*table, []abSummary) {
	format := formatOf(m)
	t := &table{ID: id, Title: sentenceCase(m.Title) + " per " + per + ": " + runLetters(runs)}
	dir := map[results.Better]string{results.HigherBetter: "higher is better", results.LowerBetter: "lower is better", results.NeitherBetter: "neither is better"}[m.Better]
	what := sentenceCase(m.Title) + " in " + m.Unit
	if m.Unit == m.Title {
		what = m.Title
	}
	t.Caption = fmt.Sprintf("%s (%s).", what, dir)
	if anyUnderFloor(v) {
		t.Caption += fmt.Sprintf(" No ratio or %% where a value is under %s %s.", format(m.Floor), m.Unit)
	}
	t.Columns = []column{{Name: keyName, Numeric: keyName == "users"}, {Name: "A", Numeric: true}}
	for _, r := range runs[1:] {
		g := r.Letter + " vs A"
		t.Columns = append(t.Columns, column{Name: r.Letter, Numeric: true, Group: g}, column{Name: r.Letter + " − A", Numeric: true, Group: g},
			column{Name: r.Letter + " / A", Numeric: true, Group: g}, column{Name: "change", Numeric: true, Group: g})
	}
	versus := func(d analysis.Difference) []cell {
		return []cell{numCell(d.B.Mean, format), numCell(d.Differential, signed(format)), numCell(d.Ratio, ratio),
			{Text: changeText(d), Raw: raw(d.ChangePct), Class: judgementClass(d.Judgement)}}
	}
	for i, row := range rows {
		cells := []cell{{Text: row.Label, Raw: row.Label}, numCell(v.Values[i][0], format)}
		for _, d := range v.Against[i] {
			cells = append(cells, versus(d)...)
		}
		t.Rows = append(t.Rows, cells)
	}
	foot := []cell{textCell("average")}
	sums := make([]abSummary, len(runs)-1)
	for i, avg := range v.Averages {
		sums[i] = abSummary{metric: m, run: runs[i+1], Average: avg}
		if i == 0 {
			foot = append(foot, numCell(avg.A.Mean, format))
		}
		foot = append(foot, versus(avg.Difference)...)
	}
	if len(runs) > 2 {
		// With several runs, A's average differs per pair; show the first.
		t.Caption += " A's average is over the " + per + "s A shares with B."
	}
	t.Foot = [][]cell{foot}
	return t, sums
}

// abTables adds to sec how to read them, then one A/B table per metric
// that has something to compare, and returns their averages. A metric
// whose values are all under its floor gets a sentence instead of a table.
func abTables(sec *section, keyName, per string, metrics []analysis.Metric, rows []analysis.Row, runs []*runView, id func(string) string) []abSummary {
	var sums []abSummary
	var quiet []string
	sec.add(abHowToRead(per))
	for _, m := range metrics {
		v, ok := analysis.VersusBaseline(m, rows, len(runs))
		switch {
		case !ok: // no row has A and another run
		case underFloor(m, v):
			quiet = append(quiet, fmt.Sprintf("%s stayed under %s %s", m.Title, formatOf(m)(m.Floor), m.Unit))
		default:
			t, s := abTable(id(m.ID), keyName, per, m, v, rows, runs)
			sec.add(t)
			sums = append(sums, s...)
		}
	}
	if len(quiet) > 0 {
		sec.add(&paragraph{Class: "note", Text: "Not tabled: " + strings.Join(quiet, "; ") + " in every run at every " + per + ", too little to compare."})
	}
	return sums
}

func runLetters(runs []*runView) string {
	var parts []string
	for _, r := range runs {
		parts = append(parts, r.Letter)
	}
	return strings.Join(parts, " vs ")
}

// summarizeAB turns the averages into one finding per run and kind.
func summarizeAB(what string, sums []abSummary, runs []*runView, unitWord string) []string {
	var out []string
	for _, r := range runs[1:] {
		var parts []string
		n := 0
		for _, s := range sums {
			if s.run != r || s.Rows == 0 || s.metric.Better == results.NeitherBetter {
				continue
			}
			n = max(n, s.Rows)
			if s.UnderFloor {
				f := formatOf(s.metric)
				parts = append(parts, fmt.Sprintf("%s %s → %s %s (%s)", s.metric.Title, f(s.A.Mean), f(s.B.Mean), s.metric.Unit, s.Judgement.Word()))
				continue
			}
			how := s.Judgement.Word()
			if r := ratio(s.Ratio); r != "-" {
				how = r + ", " + how
			}
			parts = append(parts, fmt.Sprintf("%s %s (%s)", s.metric.Title, percentChange(s.A.Mean, s.B.Mean), how))
		}
		if len(parts) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s (%s) against A (%s), averages over %s: %s.", what, r.Letter, r.Name, runs[0].Name,
			plural(n, unitWord, unitWord+"s"), strings.Join(parts, ", ")))
	}
	return out
}

// bottleneckFinding says where the runs' verdicts part, the heaviest step
// first: "The bottleneck changed at 4 users: A: CPU-bound (the server's);
// B: storage-bound on log syncs." Empty when they agree.
func bottleneckFinding(runs []*runView, rows []analysis.Row) string {
	c, ok := analysis.BottleneckChanged(rows)
	if !ok {
		return ""
	}
	var parts []string
	for i, v := range c.Verdicts {
		if v != nil {
			parts = append(parts, runs[i].Letter+": "+v.Head())
		}
	}
	out := "The bottleneck changed at " + c.Label + " users: " + strings.Join(parts, "; ")
	if len(c.Also) > 0 {
		also := c.Also[len(c.Also)-1]
		if n := len(c.Also); n > 1 {
			also = strings.Join(c.Also[:n-1], ", ") + " and " + also
		}
		out += " (it changed at " + also + " users too)"
	}
	return out + "."
}

// compareWorkload compares the steps of one workload kind, matched by
// users. lead is the finding a comparison opens with: where the
// bottleneck changed between the runs.
func compareWorkload(runs []*runView, kind string) (sec *section, findings []string, lead string) {
	title := runs[0].title(kind)
	id := func(s string) string { return "cmp-" + kind + "-" + s }
	sec = &section{ID: "cmp-" + kind, Title: title + " compared"}
	rows := analysis.RowsByUsers(runViews(runs), kind)
	var stepsA []results.Step
	if w, ok := runs[0].Workload(kind); ok {
		stepsA = w.Steps
	}
	tput := analysis.Throughput(stepsA)
	lead = bottleneckFinding(runs, rows)
	// The database's time by class has a table of its own, every class
	// side by side, rather than one per class and figure.
	var tabled []analysis.Metric
	for _, m := range analysis.WorkloadMetrics(stepsA) {
		if !analysis.IsDBTimeMetric(m) {
			tabled = append(tabled, m)
		}
	}
	sums := abTables(sec, "users", "step", tabled, rows, runs, id)
	findings = summarizeAB(title, sums, runs, "step")
	if t := dbTimeCompared(runs, rows, id("db-time")); t != nil {
		sec.add(t)
	}
	if t := serverMemoryCompared(runs, rows, id("server-memory")); t != nil {
		sec.add(t)
	}

	// Overlaid charts: one color per run.
	overlay := func(cid, ctitle, note string, y axis, lines []struct {
		suffix string
		dash   int
		value  func(results.Step) float64
	}) *chart {
		c := &chart{ID: id(cid), Title: ctitle, Note: note, X: usersAxis(), Y: y}
		for ri, r := range runs {
			w, _ := r.Workload(kind)
			for _, l := range lines {
				s := series{Name: r.Letter + " " + r.Name + l.suffix, Color: ri, Dash: l.dash}
				for _, st := range w.Steps {
					s.X = append(s.X, float64(st.Users))
					s.Y = append(s.Y, l.value(st))
				}
				c.Series = append(c.Series, s)
			}
		}
		return c
	}
	type line = struct {
		suffix string
		dash   int
		value  func(results.Step) float64
	}
	var tl []line
	for i, f := range tput {
		f := f
		tl = append(tl, line{" " + f.Title, i, func(s results.Step) float64 { return analysis.Value(s, f.Name) }})
	}
	unit := tput[0].Unit
	if len(tput) > 1 {
		unit = "per minute"
	}
	sec.add(overlay("throughput", "Throughput vs virtual users", "One color per run; NOPM dashed.", axis{Label: "throughput", Unit: unit, Zero: true}, tl))
	lc := overlay("latency", "Transaction latency vs virtual users", "p99 solid, mean dotted.", axis{Label: "latency", Unit: "ms", Zero: true}, []line{
		{" p99", solid, func(s results.Step) float64 { return latencyMS(s, func(l analysis.Latencies) float64 { return l.P99 }) }},
		{" mean", dotted, func(s results.Step) float64 {
			return latencyMS(s, func(l analysis.Latencies) float64 { return l.Mean })
		}},
	})
	autoLog(lc)
	sec.add(lc)
	cpu := overlay("cpu", "CPU idle and iowait vs virtual users", "Idle solid, iowait dashed: the run with more iowait waits more on its storage.", percentAxis("share of the machine's CPU"), []line{
		{" idle", solid, func(s results.Step) float64 { return s.Telemetry.Mean("cpu_idle_pct") }},
		{" iowait", dashed, func(s results.Step) float64 { return s.Telemetry.Mean("cpu_iowait_pct") }},
	})
	if cpu.hasData() {
		sec.add(cpu)
	}
	disk := overlay("disk-latency", "Disk latency p99 vs virtual users", "The busiest device of each run: write p99 solid, read p99 dashed.", axis{Label: "disk latency", Unit: "ms", Zero: true}, []line{
		{" write p99", solid, func(s results.Step) float64 { return analysis.BusiestDiskP99(s, "w_await_ms") }},
		{" read p99", dashed, func(s results.Step) float64 { return analysis.BusiestDiskP99(s, "r_await_ms") }},
	})
	if disk.hasData() {
		autoLog(disk)
		sec.add(disk)
	}
	for _, c := range compareSpectra(runs, rows, id, func(label string) string { return label + " users" }, "transaction") {
		sec.add(c)
	}
	if c := overlayTimeline(runs, id("throughput-timeline"), "Throughput per second, runs aligned on their first step",
		func(r *runView) []results.Step { w, _ := r.Workload(kind); return w.Steps }, string(tput[0].Name), tput[0].Title,
		axis{Label: tput[0].Title, Unit: tput[0].Unit, Zero: true}, 1, usersLabel); c != nil {
		sec.add(c)
	}

	v := &table{ID: id("bottleneck"), Title: "Bottleneck per step"}
	v.Columns = []column{{Name: "users"}}
	for _, r := range runs {
		v.Columns = append(v.Columns, column{Name: r.Letter + " verdict", Wrap: true})
	}
	for _, r := range runs {
		v.Columns = append(v.Columns, column{Name: r.Letter + " dbio CPU %", Numeric: true})
	}
	for _, row := range rows {
		cells := []cell{textCell(row.Label)}
		for _, s := range row.Steps {
			if s == nil {
				cells = append(cells, textCell("-"))
				continue
			}
			cells = append(cells, verdictCell(s.Telemetry))
		}
		for _, s := range row.Steps {
			if s == nil {
				cells = append(cells, textCell("-"))
				continue
			}
			cells = append(cells, numCell(s.Telemetry.Mean("proc_dbio_cpu_pct"), percent))
		}
		v.Rows = append(v.Rows, cells)
	}
	v.Caption = "What limited each run at each step, and the share of the machine's CPU dbio itself used (load generator, and the engine when it runs inside dbio)."
	sec.add(v)
	if len(rows) > 0 {
		last := rows[len(rows)-1]
		var parts []string
		for i, s := range last.Steps {
			if s != nil && verdictHead(s.Telemetry) != "" {
				parts = append(parts, fmt.Sprintf("%s %s", runs[i].Letter, verdictHead(s.Telemetry)))
			}
		}
		if len(parts) > 1 && lead == "" {
			findings = append(findings, fmt.Sprintf("Bottleneck at %s users: %s.", last.Label, strings.Join(parts, "; ")))
		}
	}
	return sec, findings, lead
}

// dbTimeCompared tables the database's time by class at each step, every
// run beside A: the mean sessions in each class and its share of database
// time, and how far each moved from A's. None is better or worse: the
// table says where the time went; throughput and latency say how well.
func dbTimeCompared(runs []*runView, rows []analysis.Row, id string) *table {
	recorded := false
	for _, row := range rows {
		for _, s := range row.Steps {
			if s != nil {
				if _, ok := analysis.DBTimeOf(s.Telemetry); ok {
					recorded = true
				}
			}
		}
	}
	if !recorded {
		return nil
	}
	t := &table{ID: id, Title: "Database time by class per step: " + runLetters(runs),
		Caption: "The database's own account of its time: the mean sessions in each class (1 is one session in it the whole step) and the class's share of database time. Neither is better higher or lower: a faster storage moves time from syncs to CPU. Shares move in points, sessions by their difference; a class no run spent time in is left out."}
	t.Columns = []column{{Name: "users", Numeric: true}, {Name: "class"}, {Name: "A sessions", Numeric: true, Group: "A"}, {Name: "A share %", Numeric: true, Group: "A"}}
	for _, r := range runs[1:] {
		g := r.Letter + " vs A"
		t.Columns = append(t.Columns, column{Name: r.Letter + " sessions", Numeric: true, Group: g}, column{Name: r.Letter + " share %", Numeric: true, Group: g},
			column{Name: "sessions " + r.Letter + " − A", Numeric: true, Group: g}, column{Name: "share " + r.Letter + " − A (points)", Numeric: true, Group: g})
	}
	for _, row := range rows {
		accounts := make([]*analysis.DBTimeAccount, len(row.Steps))
		for i, s := range row.Steps {
			if s != nil {
				if a, ok := analysis.DBTimeOf(s.Telemetry); ok {
					accounts[i] = &a
				}
			}
		}
		of := func(i int, c results.DBTimeClass) (sessions, share float64) {
			a := accounts[i]
			if a == nil {
				return math.NaN(), math.NaN()
			}
			for _, x := range a.Classes {
				if x.Class == c {
					return x.Sessions, x.SharePct
				}
			}
			return math.NaN(), math.NaN()
		}
		classes := append(results.DBTimeClasses(), "")
		for _, c := range classes {
			name := "all"
			if c != "" {
				name = analysis.DBTimeTitle(c)
			}
			value := func(i int) (float64, float64) {
				if c == "" {
					if accounts[i] == nil {
						return math.NaN(), math.NaN()
					}
					return accounts[i].Sessions, 100
				}
				return of(i, c)
			}
			aS, aP := value(0)
			cells := []cell{{Text: row.Label, Raw: row.Label}, textCell(name), numCell(aS, quantity), numCell(aP, percent)}
			// A class no run spent time in is left out; "all" stays.
			seen := aS > 0 || (c == "" && !math.IsNaN(aS))
			for i := 1; i < len(runs); i++ {
				bS, bP := value(i)
				seen = seen || bS > 0 || (c == "" && !math.IsNaN(bS))
				cells = append(cells, numCell(bS, quantity), numCell(bP, percent), numCell(bS-aS, signed(quantity)), numCell(bP-aP, signed(percent)))
			}
			if seen {
				t.Rows = append(t.Rows, cells)
			}
		}
	}
	return t
}

// overlayTimeline overlays one per-second column of each run, each run's
// time counted from the start of its first step, A's steps shaded.
func overlayTimeline(runs []*runView, cid, title string, steps func(*runView) []results.Step, column, name string, y axis, factor float64, label func(results.Step) string) *chart {
	c := &chart{ID: cid, Title: title, Note: "Each run's clock starts at its first step; A's steps are shaded. Matching steps line up when the runs used the same timing.", Y: y}
	longest := 0.0
	type run struct {
		xs, ys []float64
		origin float64
	}
	var all []run
	for _, r := range runs {
		ss := steps(r)
		if len(ss) == 0 {
			all = append(all, run{})
			continue
		}
		origin, _, _ := r.seconds(ss[0])
		tl := r.timeline(ss, []string{column})
		var rr run
		rr.origin = origin
		for i, x := range tl.X {
			rr.xs = append(rr.xs, x-origin)
			rr.ys = append(rr.ys, tl.Values[column][i]*factor)
			longest = math.Max(longest, x-origin)
		}
		all = append(all, rr)
	}
	scale, unit := 1.0, "s"
	if longest > 1200 {
		scale, unit = 60, "min"
	}
	c.X = axis{Label: "time since the first step started", Unit: unit, Tight: true}
	for ri, r := range runs {
		s := series{Name: r.Letter + " " + r.Name + " " + name, Color: ri}
		for i := range all[ri].xs {
			s.X = append(s.X, all[ri].xs[i]/scale)
			s.Y = append(s.Y, all[ri].ys[i])
		}
		c.Series = append(c.Series, s)
	}
	if ss := steps(runs[0]); len(ss) > 0 {
		for _, b := range runs[0].stepBands(ss, label, 1) {
			b.From, b.To = (b.From-all[0].origin)/scale, (b.To-all[0].origin)/scale
			c.Bands = append(c.Bands, b)
		}
	}
	if !c.hasData() {
		return nil
	}
	return c
}

// compareFio compares fio points matched by what they measured.
func compareFio(runs []*runView) (*section, []string) {
	sec := &section{ID: "cmp-fio", Title: "Storage characterization (fio) compared"}
	id := func(s string) string { return "cmp-fio-" + s }
	rows := analysis.RowsByPoint(runViews(runs))
	sums := abTables(sec, "point", "point", analysis.FioMetrics(), rows, runs, id)
	findings := summarizeAB("fio", sums, runs, "point")

	// The single runs' fio charts, overlaid: one color per line, one dash per run.
	perRun := make([][]*chart, len(runs))
	for ri, r := range runs {
		labels := fioLabels(r.Fio)
		perRun[ri] = append(perRun[ri], blockSizeCharts(r.Fio, labels, id, r.FioProfile() == "four-corners")...)
		if cs, _ := fioCurves(r.Fio, labels, id); cs != nil {
			for _, b := range cs.Blocks {
				if c, ok := b.(*chart); ok {
					perRun[ri] = append(perRun[ri], c)
				}
			}
		}
		perRun[ri] = append(perRun[ri], sweepCharts(r.Fio, labels, id)...)
	}
	for _, c := range mergeCharts(runs, perRun) {
		sec.add(c)
	}
	for _, c := range compareSpectra(runs, rows, id, func(label string) string { return "point " + label }, "completion") {
		sec.add(c)
	}
	if c := overlayTimeline(runs, id("iops-timeline"), "IOPS per second, runs aligned on their first point",
		func(r *runView) []results.Step { return r.Fio }, "fio_iops", results.FigureIOPS.Def().Title, figureAxis(results.FigureIOPS), 1,
		func(s results.Step) string { return s.Name }); c != nil {
		sec.add(c)
	}
	return sec, findings
}

// runViews are the runs as analysis sees them.
func runViews(runs []*runView) []*analysis.Recorded {
	out := make([]*analysis.Recorded, len(runs))
	for i, r := range runs {
		out[i] = r.Recorded
	}
	return out
}

// mergeCharts overlays the charts each run drew under the same id: series
// keep their color within a run and take the run's line style.
func mergeCharts(runs []*runView, perRun [][]*chart) []*chart {
	var out []*chart
	byID := map[string]*chart{}
	for ri, charts := range perRun {
		for _, c := range charts {
			m, ok := byID[c.ID]
			if !ok {
				cp := *c
				cp.Series = nil
				cp.X.Ticks = nil
				cp.Note = c.Note + " Run A solid, B dashed, C dotted, D dash-dot."
				m = &cp
				byID[c.ID] = m
				out = append(out, m)
			}
			m.X.Ticks = mergeTicks(m.X.Ticks, c.X.Ticks)
			for _, s := range c.Series {
				s.Name = runs[ri].Letter + " " + s.Name
				s.Dash = ri
				m.Series = append(m.Series, s)
			}
		}
	}
	return out
}

func mergeTicks(a, b []float64) []float64 {
	if len(a)+len(b) == 0 {
		return nil
	}
	seen := map[float64]bool{}
	var out []float64
	for _, v := range append(append([]float64(nil), a...), b...) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Float64s(out)
	return out
}

// runsTable lists the compared runs.
func runsTable(runs []*runView) *table {
	t := &table{ID: "cmp-runs", Title: "Runs compared", Caption: "A is the baseline every other run is compared against."}
	t.Columns = []column{{Name: "run"}, {Name: "name"}, {Name: "kind"}, {Name: "status"}, {Name: "started"}, {Name: "engine"}, {Name: "storage", Wrap: true}, {Name: "results directory"}}
	for _, r := range runs {
		var engines []string
		for _, e := range r.Run.Engines {
			engines = append(engines, e.Engine+" "+e.Version)
		}
		var storage []string
		for _, ti := range targetsOf(r.Run) {
			storage = append(storage, ti.Path+": "+ti.Describe())
		}
		t.Rows = append(t.Rows, []cell{textCell(r.Letter), textCell(r.Name), textCell(r.Run.Kind), statusCell(string(r.Run.Status)),
			textCell(stamp(r.Run.Started)), textCell(orDash(strings.Join(engines, ", "))), textCell(strings.Join(storage, "; ")), textCell(r.Path)})
	}
	return t
}

// facts lists every configuration value, host fact, storage fact, version
// and engine setting of each run, keyed in the order first seen. A fact is
// listed once, under the flag that set it where a flag did: a target's
// path is its --target, the engine's version its engine row, a setting
// given with --setting (or the buffer pool --buffer-pool sized) is not
// listed again among the engine's settings. What dbio chose for a managed
// server's place differs from run to run by design and is left out or
// written relative to the target: the free port it took, its socket
// directory under the target.
func facts(runs []*runView) (order []string, values []map[string]string) {
	values = make([]map[string]string, len(runs))
	for i, r := range runs {
		values[i] = map[string]string{}
		put := func(k, v string) {
			if _, ok := values[i][k]; !ok && !slices.Contains(order, k) {
				order = append(order, k)
			}
			values[i][k] = v
		}
		put("run kind", r.Run.Kind)
		config := configFacts(r.Run.Config, r.opts.SettingFlag)
		given := map[string]string{}
		for _, f := range config {
			given[f.Label] = f.Value
		}
		for _, f := range config {
			if f.Label == "--engine" && len(r.Run.Engines) > 0 {
				continue // the engine row names it with its version
			}
			put(f.Label, f.Value)
		}
		env := r.Run.Environment
		put("host", env.Hostname)
		put("kernel", env.Kernel)
		put("CPU", fmt.Sprintf("%s × %d", env.CPUModel, env.CPUs))
		put("memory", units.FormatBytes(env.MemoryBytes))
		var targetPaths []string
		for _, ti := range targetsOf(r.Run) {
			if ti.Host == "" {
				targetPaths = append(targetPaths, ti.Path)
			}
			if !givenPath(given, ti.Path) {
				put("target "+string(ti.Role)+" path", ti.Path)
			}
			put("target "+string(ti.Role)+" storage", ti.Describe())
		}
		engines := map[string]bool{}
		for _, e := range r.Run.Engines {
			engines[e.Engine] = true
		}
		for _, k := range sortedKeys(env.Versions) {
			if !engines[k] {
				put("version "+k, env.Versions[k])
			}
		}
		for _, e := range r.Run.Engines {
			put("engine", e.Engine+" "+e.Version)
			for _, k := range sortedKeys(e.Settings) {
				_, set := given["--setting "+k]
				_, sized := given["--buffer-pool"]
				switch {
				case set, sized && bufferPoolSettings[k]:
					continue
				case e.Managed && k == "port":
					continue
				}
				put("engine setting "+k, underTarget(e.Settings[k], targetPaths))
			}
		}
	}
	return order, values
}

// bufferPoolSettings are the engine settings --buffer-pool sets, as its
// help names them: PostgreSQL's, MariaDB's and SQLite's page cache.
var bufferPoolSettings = map[string]bool{"shared_buffers": true, "innodb_buffer_pool_size": true, "cache_size": true}

// givenPath says a flag of the config names path: its --target (one of
// a disk run's), --log-target or --backup-target.
func givenPath(given map[string]string, path string) bool {
	for _, flag := range []string{"--target", "--log-target", "--backup-target"} {
		for _, p := range strings.Split(given[flag], ", ") {
			if p == path {
				return true
			}
		}
	}
	return false
}

// underTarget writes a value that is a path under one of the run's
// targets relative to it ("<target>/dbio/postgres/run"), so that a
// setting dbio derived from the target differs only where the target does.
func underTarget(v string, targets []string) string {
	for _, t := range targets {
		if rest, ok := strings.CutPrefix(v, t); ok && (rest == "" || strings.HasPrefix(rest, "/")) && t != "" {
			return "<target>" + rest
		}
	}
	return v
}

// sideBySide tables the runs' facts: only those that differ (what the
// comparison is actually about), or all of them.
func sideBySide(runs []*runView, onlyDifferent bool) *table {
	order, values := facts(runs)
	t := &table{ID: "cmp-differences", Title: "What differs between the runs",
		Caption: "Every configuration value, host fact, storage fact, version and engine setting that is not the same in all runs."}
	if !onlyDifferent {
		t = &table{ID: "cmp-environment", Title: "Configuration and environment side by side", Collapsed: true,
			Caption: "Every configuration value, host fact, storage fact, version and engine setting of each run; each run's own report has the details."}
	}
	t.Columns = []column{{Name: "item"}}
	for _, r := range runs {
		t.Columns = append(t.Columns, column{Name: r.Letter, Wrap: true})
	}
	for _, k := range order {
		same := true
		first, ok0 := values[0][k]
		for i := range runs {
			v, ok := values[i][k]
			if ok != ok0 || v != first {
				same = false
			}
		}
		if same && onlyDifferent {
			continue
		}
		row := []cell{textCell(k)}
		for i := range runs {
			v, ok := values[i][k]
			if !ok {
				v = "—"
			}
			row = append(row, textCell(v))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
