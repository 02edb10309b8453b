package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"dbio/internal/units"
)

// Comparisons put two or more runs side by side: A is the baseline, every
// other run is read against it as in the A/B table of an accelerator study
// (per step: A, B, the differential, the ratio and the improvement in %,
// then the averages), with the charts overlaid.

// NotComparableError says why runs cannot be compared meaningfully.
type NotComparableError struct {
	Reasons []string
}

func (e *NotComparableError) Error() string {
	return "the runs are not comparable: " + strings.Join(e.Reasons, "; ") +
		" (compare runs of the same workload, scale and user sequence, or pass --force to compare them anyway)"
}

// letter names the i-th run of a comparison: A, B, … Z, then R27, R28…
func letter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return "R" + strconv.Itoa(i+1)
}

// workloadKinds lists what a run measured, "fio" and its workloads' titles, sorted.
func workloadKinds(r *runView) []string {
	var out []string
	if len(r.Fio) > 0 {
		out = append(out, "fio")
	}
	for _, w := range r.Workloads {
		out = append(out, workloadTitle(w.Kind))
	}
	sort.Strings(out)
	return out
}

func (r *runView) workload(kind string) (workloadSteps, bool) {
	for _, w := range r.Workloads {
		if w.Kind == kind {
			return w, true
		}
	}
	return workloadSteps{}, false
}

func intsText(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// comparability returns why the runs cannot be compared (reasons) and what
// a reader should know about comparing them (warnings).
func comparability(runs []*runView) (reasons, warnings []string) {
	a := runs[0]
	who := func(r *runView) string { return r.Letter + " (" + r.Name + ")" }
	kindsA := strings.Join(workloadKinds(a), " and ")
	for _, b := range runs[1:] {
		kindsB := strings.Join(workloadKinds(b), " and ")
		if kindsA != kindsB {
			reasons = append(reasons, fmt.Sprintf("%s measured %s but %s measured %s", who(a), orNothing(kindsA), who(b), orNothing(kindsB)))
			continue
		}
		if a.Run.Kind != b.Run.Kind {
			warnings = append(warnings, fmt.Sprintf("%s is a %s run and %s a %s run; their steps are compared where they match", who(a), a.Run.Kind, who(b), b.Run.Kind))
		}
		for _, wa := range a.Workloads {
			wb, _ := b.workload(wa.Kind)
			title := workloadTitle(wa.Kind)
			if wa.Kind == "tpcc" {
				if x, y := a.warehouses(), b.warehouses(); x != y {
					reasons = append(reasons, fmt.Sprintf("%s ran %s at %s but %s at %s", who(a), title, plural(x, "warehouse", "warehouses"), who(b), plural(y, "warehouse", "warehouses")))
				}
				if x, y := a.configString("tpcc", "keying_thinking"), b.configString("tpcc", "keying_thinking"); x != y {
					reasons = append(reasons, fmt.Sprintf("%s ran %s with keying_thinking=%s but %s with %s: paced and back-to-back users are different workloads", who(a), title, orNothing(x), who(b), orNothing(y)))
				}
			}
			if x, y := intsText(a.users(wa)), intsText(b.users(wb)); x != y {
				reasons = append(reasons, fmt.Sprintf("%s's %s user sequence is %s but %s's is %s", who(a), title, x, who(b), y))
			}
			for _, k := range []string{"step_s", "rampup_s"} {
				if x, y := a.configString(k), b.configString(k); x != y {
					warnings = append(warnings, fmt.Sprintf("%s's %s is %s s and %s's is %s s: the shorter steps may not have reached steady state", who(a), strings.TrimSuffix(k, "_s"), orNothing(x), who(b), orNothing(y)))
				}
			}
		}
		if len(a.Fio) > 0 {
			pa, pb := fioProfile(a), fioProfile(b)
			if pa != pb {
				reasons = append(reasons, fmt.Sprintf("%s ran the fio profile %s but %s ran %s", who(a), orNothing(pa), who(b), orNothing(pb)))
			} else if missing, extra := shapeDiff(a, b); len(missing)+len(extra) > 0 {
				var parts []string
				if len(missing) > 0 {
					parts = append(parts, fmt.Sprintf("%s lacks %s", who(b), strings.Join(missing, ", ")))
				}
				if len(extra) > 0 {
					parts = append(parts, fmt.Sprintf("%s has %s that %s lacks", who(b), strings.Join(extra, ", "), who(a)))
				}
				reasons = append(reasons, "the fio points differ: "+strings.Join(parts, "; "))
			}
			if x, y := fioRuntime(a), fioRuntime(b); x != y {
				warnings = append(warnings, fmt.Sprintf("%s's fio points ran %s and %s's %s", who(a), x, who(b), y))
			}
		}
	}
	for _, r := range runs {
		if r.Run.Status != "completed" {
			warnings = append(warnings, fmt.Sprintf("%s is %s: only the steps it finished are compared", who(r), r.Run.Status))
		}
	}
	return reasons, warnings
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

func fioProfile(r *runView) string {
	for _, p := range r.Fio {
		if p.Fio.Profile != "" {
			return p.Fio.Profile
		}
	}
	return ""
}

func fioRuntime(r *runView) string {
	seen := map[int]bool{}
	var rts []int
	for _, p := range r.Fio {
		if !seen[p.Fio.RuntimeS] {
			seen[p.Fio.RuntimeS] = true
			rts = append(rts, p.Fio.RuntimeS)
		}
	}
	sort.Ints(rts)
	s := make([]string, len(rts))
	for i, v := range rts {
		s[i] = strconv.Itoa(v) + " s"
	}
	return strings.Join(s, ", ")
}

// pointKeys keys each fio point by what it measured and its rank among the
// points of the same shape, so that the same plan on another target
// matches point for point whatever the point names.
func pointKeys(r *runView) []string {
	count := map[string]int{}
	keys := make([]string, len(r.Fio))
	for i, p := range r.Fio {
		s := p.Fio.shape()
		count[s]++
		keys[i] = s + "#" + strconv.Itoa(count[s])
	}
	return keys
}

// shapeDiff lists the points (by A's names) that b lacks, and b's extra ones.
func shapeDiff(a, b *runView) (missing, extra []string) {
	ka, kb := pointKeys(a), pointKeys(b)
	inB := map[string]bool{}
	for _, k := range kb {
		inB[k] = true
	}
	inA := map[string]bool{}
	for i, k := range ka {
		inA[k] = true
		if !inB[k] {
			missing = append(missing, a.Fio[i].Name)
		}
	}
	for i, k := range kb {
		if !inA[k] {
			extra = append(extra, b.Fio[i].Name)
		}
	}
	return missing, extra
}

// abMetric is one figure compared across runs.
type abMetric struct {
	id, title, unit string
	// better is +1 when higher is better, -1 when lower is, 0 when neither.
	better int
	format func(float64) string
	value  func(stepView) float64
}

// abRow is one step matched across runs; steps[i] is nil where run i lacks it.
type abRow struct {
	label string
	raw   string
	steps []*stepView
}

// abSummary is a metric's average comparison of one run against A.
type abSummary struct {
	metric     abMetric
	run        *runView
	rows       int
	meanA      float64
	meanB      float64
	meanChange float64
}

// change is the improvement column: the change from a to b in % of a.
func change(a, b float64) float64 {
	if a == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return (b - a) / math.Abs(a) * 100
}

// judge classes a change as better or worse for the metric; changes under
// 1 % are left unmarked.
func judge(m abMetric, ch float64) string {
	if m.better == 0 || math.IsNaN(ch) || math.Abs(ch) < 1 {
		return ""
	}
	if (ch > 0) == (m.better > 0) {
		return "better"
	}
	return "worse"
}

// abHowToRead explains the A/B tables once per section.
func abHowToRead(per string) *paragraph {
	return &paragraph{Class: "note", Text: "How to read the tables: each " + per + " of every run is set against the same " + per +
		" of A. The differential is the run minus A, the ratio is the run over A (2.0x is twice A), and the improvement is the change from A in %, " +
		"marked green where the run is better (higher throughput, lower latency) and red where it is worse. The average row compares the averages over the " +
		per + "s both runs completed."}
}

// abTable builds a metric's A/B table; nil when no row has A and another run.
// keyName heads the first column ("users"); per names a row ("step").
func abTable(id, keyName, per string, m abMetric, rows []abRow, runs []*runView) (*table, []abSummary) {
	t := &table{ID: id, Title: sentenceCase(m.title) + " per " + per + ": " + runLetters(runs)}
	dir := map[int]string{1: "higher is better", -1: "lower is better", 0: "neither is better"}[m.better]
	what := sentenceCase(m.title) + " in " + m.unit
	if m.unit == m.title {
		what = m.title
	}
	t.Caption = fmt.Sprintf("%s (%s).", what, dir)
	t.Columns = []column{{Name: keyName, Numeric: keyName == "users"}, {Name: "A", Numeric: true}}
	for _, r := range runs[1:] {
		g := r.Letter + " vs A"
		t.Columns = append(t.Columns, column{Name: r.Letter, Numeric: true, Group: g}, column{Name: r.Letter + " − A", Numeric: true, Group: g},
			column{Name: r.Letter + " / A", Numeric: true, Group: g}, column{Name: "improvement", Numeric: true, Group: g})
	}
	val := func(s *stepView) float64 {
		if s == nil {
			return math.NaN()
		}
		return m.value(*s)
	}
	sums := make([]abSummary, len(runs)-1)
	sumA := make([]float64, len(runs)-1)
	sumB := make([]float64, len(runs)-1)
	useful := false
	for _, row := range rows {
		a := val(row.steps[0])
		cells := []cell{{Text: row.label, Raw: row.raw}, numCell(a, m.format)}
		for i := range runs[1:] {
			b := val(row.steps[i+1])
			ch := change(a, b)
			cells = append(cells, numCell(b, m.format), numCell(b-a, signed(m.format)), numCell(b/a, ratio),
				cell{Text: signedPercent(ch), Raw: raw(ch), Class: judge(m, ch)})
			if !math.IsNaN(a) && !math.IsNaN(b) {
				useful = true
				sums[i].rows++
				sumA[i] += a
				sumB[i] += b
			}
		}
		t.Rows = append(t.Rows, cells)
	}
	if !useful {
		return nil, nil
	}
	foot := []cell{textCell("average")}
	for i, r := range runs[1:] {
		s := &sums[i]
		s.metric, s.run = m, r
		s.meanA, s.meanB, s.meanChange = math.NaN(), math.NaN(), math.NaN()
		if s.rows > 0 {
			s.meanA, s.meanB = sumA[i]/float64(s.rows), sumB[i]/float64(s.rows)
			s.meanChange = change(s.meanA, s.meanB)
		}
		if i == 0 {
			foot = append(foot, numCell(s.meanA, m.format))
		}
		foot = append(foot, numCell(s.meanB, m.format), numCell(s.meanB-s.meanA, signed(m.format)), numCell(s.meanB/s.meanA, ratio),
			cell{Text: signedPercent(s.meanChange), Raw: raw(s.meanChange), Class: judge(m, s.meanChange)})
	}
	if len(runs) > 2 {
		// With several runs, A's average differs per pair; show the first.
		t.Caption += " A's average is over the " + per + "s A shares with B."
	}
	t.Foot = [][]cell{foot}
	return t, sums
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
			if s.run != r || s.rows == 0 || s.metric.better == 0 {
				continue
			}
			n = max(n, s.rows)
			parts = append(parts, fmt.Sprintf("%s %s (%s)", s.metric.title, signedPercent(s.meanChange), ratio(s.meanB/s.meanA)))
		}
		if len(parts) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s (%s) against A (%s), averages over %s: %s.", what, r.Letter, r.Name, runs[0].Name,
			plural(n, unitWord, unitWord+"s"), strings.Join(parts, ", ")))
	}
	return out
}

// busiestDisk is the step's most utilized device, "" without one.
func busiestDisk(s stepView) string {
	if s.Tel == nil {
		return ""
	}
	best, dev := -1.0, ""
	for _, d := range s.Tel.Devices {
		if u := s.Tel.mean("disk_" + d + "_util_pct"); !math.IsNaN(u) && u > best {
			best, dev = u, d
		}
	}
	return dev
}

func diskMetric(s stepView, metric string, p99 bool) float64 {
	d := busiestDisk(s)
	if d == "" {
		return math.NaN()
	}
	if p99 {
		return s.Tel.p99("disk_" + d + "_" + metric)
	}
	return s.Tel.mean("disk_" + d + "_" + metric)
}

// compareWorkload compares the steps of one workload kind, matched by users.
func compareWorkload(runs []*runView, kind string) (*section, []string) {
	title := workloadTitle(kind)
	id := func(s string) string { return "cmp-" + kind + "-" + s }
	sec := &section{ID: "cmp-" + kind, Title: title + " compared"}
	rowOf := map[int]int{}
	var rows []abRow
	for ri, r := range runs {
		w, _ := r.workload(kind)
		for i := range w.Steps {
			s := &w.Steps[i]
			k, ok := rowOf[s.Users]
			if !ok {
				k = len(rows)
				rowOf[s.Users] = k
				rows = append(rows, abRow{label: strconv.Itoa(s.Users), raw: strconv.Itoa(s.Users), steps: make([]*stepView, len(runs))})
			}
			if rows[k].steps[ri] == nil {
				rows[k].steps[ri] = s
			}
		}
	}
	var stepsA []stepView
	if w, ok := runs[0].workload(kind); ok {
		stepsA = w.Steps
	}
	tput := throughputFigures(stepsA)
	var metrics []abMetric
	for _, f := range tput {
		f := f
		metrics = append(metrics, abMetric{id: f.name, title: f.title, unit: f.unit, better: 1, format: quantity, value: func(s stepView) float64 { return fig(s, f.name) }})
	}
	metrics = append(metrics,
		abMetric{id: "latency-mean", title: "mean latency", unit: "ms", better: -1, format: millis, value: func(s stepView) float64 { return latencyMS(s, func(l latencyView) float64 { return l.mean }) }},
		abMetric{id: "latency-p99", title: "p99 latency", unit: "ms", better: -1, format: millis, value: func(s stepView) float64 { return latencyMS(s, func(l latencyView) float64 { return l.p99 }) }},
		abMetric{id: "cpu-iowait", title: "CPU iowait", unit: "% of the machine", better: -1, format: percent, value: func(s stepView) float64 { return s.Tel.mean("cpu_iowait_pct") }},
		abMetric{id: "cpu-idle", title: "CPU idle", unit: "% of the machine", better: 0, format: percent, value: func(s stepView) float64 { return s.Tel.mean("cpu_idle_pct") }},
		abMetric{id: "disk-write-p99", title: "disk write latency p99", unit: "ms, busiest device", better: -1, format: millis, value: func(s stepView) float64 { return diskMetric(s, "w_await_ms", true) }},
		abMetric{id: "disk-read-p99", title: "disk read latency p99", unit: "ms, busiest device", better: -1, format: millis, value: func(s stepView) float64 { return diskMetric(s, "r_await_ms", true) }},
	)
	var sums []abSummary
	sec.add(abHowToRead("step"))
	for _, m := range metrics {
		t, s := abTable(id(m.id), "users", "step", m, rows, runs)
		if t != nil {
			sec.add(t)
			sums = append(sums, s...)
		}
	}
	findings := summarizeAB(title, sums, runs, "step")

	// Overlaid charts: one color per run.
	overlay := func(cid, ctitle, note string, y axis, lines []struct {
		suffix string
		dash   int
		value  func(stepView) float64
	}) *chart {
		c := &chart{ID: id(cid), Title: ctitle, Note: note, X: usersAxis(), Y: y}
		for ri, r := range runs {
			w, _ := r.workload(kind)
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
		value  func(stepView) float64
	}
	var tl []line
	for i, f := range tput {
		f := f
		tl = append(tl, line{" " + f.title, i, func(s stepView) float64 { return fig(s, f.name) }})
	}
	unit := tput[0].unit
	if len(tput) > 1 {
		unit = "per minute"
	}
	sec.add(overlay("throughput", "Throughput vs virtual users", "One color per run; NOPM dashed.", axis{Label: "throughput", Unit: unit, Zero: true}, tl))
	lc := overlay("latency", "Transaction latency vs virtual users", "p99 solid, mean dotted.", axis{Label: "latency", Unit: "ms", Zero: true}, []line{
		{" p99", solid, func(s stepView) float64 { return latencyMS(s, func(l latencyView) float64 { return l.p99 }) }},
		{" mean", dotted, func(s stepView) float64 { return latencyMS(s, func(l latencyView) float64 { return l.mean }) }},
	})
	autoLog(lc)
	sec.add(lc)
	cpu := overlay("cpu", "CPU idle and iowait vs virtual users", "Idle solid, iowait dashed: the run with more iowait waits more on its storage.", percentAxis("share of the machine's CPU"), []line{
		{" idle", solid, func(s stepView) float64 { return s.Tel.mean("cpu_idle_pct") }},
		{" iowait", dashed, func(s stepView) float64 { return s.Tel.mean("cpu_iowait_pct") }},
	})
	if cpu.hasData() {
		sec.add(cpu)
	}
	disk := overlay("disk-latency", "Disk latency p99 vs virtual users", "The busiest device of each run: write p99 solid, read p99 dashed.", axis{Label: "disk latency", Unit: "ms", Zero: true}, []line{
		{" write p99", solid, func(s stepView) float64 { return diskMetric(s, "w_await_ms", true) }},
		{" read p99", dashed, func(s stepView) float64 { return diskMetric(s, "r_await_ms", true) }},
	})
	if disk.hasData() {
		autoLog(disk)
		sec.add(disk)
	}
	if c := overlayTimeline(runs, id("throughput-timeline"), "Throughput per second, runs aligned on their first step",
		func(r *runView) []stepView { w, _ := r.workload(kind); return w.Steps }, tput[0].name, tput[0].title,
		axis{Label: tput[0].title, Unit: tput[0].unit, Zero: true}, 1, usersLabel); c != nil {
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
		cells := []cell{textCell(row.label)}
		for _, s := range row.steps {
			if s == nil {
				cells = append(cells, textCell("-"))
				continue
			}
			cells = append(cells, verdictCell(s.Tel))
		}
		for _, s := range row.steps {
			if s == nil {
				cells = append(cells, textCell("-"))
				continue
			}
			cells = append(cells, numCell(s.Tel.mean("proc_dbio_cpu_pct"), percent))
		}
		v.Rows = append(v.Rows, cells)
	}
	v.Caption = "What limited each run at each step, and the share of the machine's CPU dbio itself used (load generator, and the engine when it runs inside dbio)."
	sec.add(v)
	if len(rows) > 0 {
		last := rows[len(rows)-1]
		var parts []string
		for i, s := range last.steps {
			if s != nil && s.Tel.verdictHead() != "" {
				parts = append(parts, fmt.Sprintf("%s %s", runs[i].Letter, s.Tel.verdictHead()))
			}
		}
		if len(parts) > 1 {
			findings = append(findings, fmt.Sprintf("Bottleneck at %s users: %s.", last.label, strings.Join(parts, "; ")))
		}
	}
	return sec, findings
}

// overlayTimeline overlays one per-second column of each run, each run's
// time counted from the start of its first step, A's steps shaded.
func overlayTimeline(runs []*runView, cid, title string, steps func(*runView) []stepView, column, name string, y axis, factor float64, label func(stepView) string) *chart {
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
	var rows []abRow
	index := map[string]int{}
	for ri, r := range runs {
		for i, k := range pointKeys(r) {
			j, ok := index[k]
			if !ok {
				j = len(rows)
				index[k] = j
				rows = append(rows, abRow{label: r.Fio[i].Name, raw: r.Fio[i].Name, steps: make([]*stepView, len(runs))})
			}
			if completed(r.Fio[i]) {
				rows[j].steps[ri] = &r.Fio[i]
			}
		}
	}
	metrics := []abMetric{
		{id: "iops", title: "IOPS", unit: "I/O per s", better: 1, format: thousands, value: func(s stepView) float64 { return fig(s, "iops") }},
		{id: "mbs", title: "MB/s", unit: "MB/s", better: 1, format: quantity, value: func(s stepView) float64 { return fig(s, "mb_s") }},
		{id: "lat-mean", title: "mean latency", unit: "ms", better: -1, format: millis, value: func(s stepView) float64 { return fioMS(s, "lat_mean_us") }},
		{id: "lat-p99", title: "p99 latency", unit: "ms", better: -1, format: millis, value: func(s stepView) float64 { return fioMS(s, "lat_p99_us") }},
	}
	var sums []abSummary
	sec.add(abHowToRead("point"))
	for _, m := range metrics {
		t, s := abTable(id(m.id), "point", "point", m, rows, runs)
		if t != nil {
			sec.add(t)
			sums = append(sums, s...)
		}
	}
	findings := summarizeAB("fio", sums, runs, "point")

	// The single runs' fio charts, overlaid: one color per line, one dash per run.
	perRun := make([][]*chart, len(runs))
	for ri, r := range runs {
		labels := fioLabels(r.Fio)
		perRun[ri] = append(perRun[ri], blockSizeCharts(r.Fio, labels, id)...)
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
	if c := overlayTimeline(runs, id("iops-timeline"), "IOPS per second, runs aligned on their first point",
		func(r *runView) []stepView { return r.Fio }, "fio_iops", "IOPS", axis{Label: "IOPS", Unit: "I/O per s", Zero: true}, 1,
		func(s stepView) string { return s.Name }); c != nil {
		sec.add(c)
	}
	return sec, findings
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
			storage = append(storage, ti.Path+": "+storageText(ti))
		}
		t.Rows = append(t.Rows, []cell{textCell(r.Letter), textCell(r.Name), textCell(r.Run.Kind), statusCell(string(r.Run.Status)),
			textCell(stamp(r.Run.Started)), textCell(orDash(strings.Join(engines, ", "))), textCell(strings.Join(storage, "; ")), textCell(r.Path)})
	}
	return t
}

// facts lists every configuration value, host fact, storage fact, version
// and engine setting of each run, keyed in the order first seen.
func facts(runs []*runView) (order []string, values []map[string]string) {
	values = make([]map[string]string, len(runs))
	for i, r := range runs {
		values[i] = map[string]string{}
		put := func(k, v string) {
			if _, ok := values[i][k]; !ok {
				found := false
				for _, o := range order {
					if o == k {
						found = true
						break
					}
				}
				if !found {
					order = append(order, k)
				}
			}
			values[i][k] = v
		}
		put("run kind", r.Run.Kind)
		for _, f := range flattenJSON(r.Run.Config) {
			put("config "+f.Label, f.Value)
		}
		env := r.Run.Environment
		put("host", env.Hostname)
		put("kernel", env.Kernel)
		put("CPU", fmt.Sprintf("%s × %d", env.CPUModel, env.CPUs))
		put("memory", units.FormatBytes(env.MemoryBytes))
		for _, ti := range targetsOf(r.Run) {
			put("target "+string(ti.Role)+" path", ti.Path)
			put("target "+string(ti.Role)+" storage", storageText(ti))
		}
		for _, k := range sortedKeys(env.Versions) {
			put("version "+k, env.Versions[k])
		}
		for _, e := range r.Run.Engines {
			put("engine", e.Engine+" "+e.Version)
			for _, k := range sortedKeys(e.Settings) {
				put("engine setting "+k, e.Settings[k])
			}
		}
	}
	return order, values
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
