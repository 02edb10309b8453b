package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// The section of fio points: every point's figures, the profile's own
// table (four corners, latency-bounded maxima, I/O-rate curves, steady
// state), throughput against block size and against latency, and the
// per-second timelines.

// fioLatencyFigure maps a bound's statistic to the step figure holding it.
var fioLatencyFigure = map[string]string{"mean": "lat_mean_us", "p50": "lat_p50_us", "p95": "lat_p95_us", "p99": "lat_p99_us", "p99.9": "lat_p99_9_us"}

// fioMS reads a latency figure of a point in ms.
func fioMS(s stepView, name string) float64 { return fig(s, name) / 1000 }

// completed is a point that finished with figures.
func completed(s stepView) bool { return s.Status == "completed" && !math.IsNaN(fig(s, "iops")) }

// fioPointLabel names a point's target, or "" when the run has one target.
func fioLabels(points []stepView) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range points {
		if !seen[p.Fio.Label] {
			seen[p.Fio.Label] = true
			out = append(out, p.Fio.Label)
		}
	}
	return out
}

// fioSection builds the section of a run's fio points and its findings.
func fioSection(r *runView, prefix string) (*section, []string) {
	points := r.Fio
	sec := &section{ID: prefix + "fio", Title: "Storage characterization (fio)"}
	id := func(s string) string { return prefix + "fio-" + s }
	labels := fioLabels(points)
	profile := ""
	for _, p := range points {
		if p.Fio.Profile != "" {
			profile = p.Fio.Profile
			break
		}
	}
	if profile != "" {
		sec.add(&paragraph{Text: fmt.Sprintf("Profile %s, %s. Latency is fio's completion latency (submission to completion), in ms; MB is 10⁶ bytes.", profile, plural(len(points), "point", "points"))})
	}
	var findings []string

	if profile == "four-corners" {
		t, f := fourCornersTable(points, labels, id("four-corners"))
		sec.add(t)
		findings = append(findings, f...)
	}
	sec.add(fioPointsTable(points, labels, id("points")))

	if rows := latencyBounded(r, points, profile, id("latency-bounded")); rows != nil {
		sec.add(rows.table)
		if profile == "sqlio" || rows.configured {
			findings = append(findings, rows.findings...)
		}
	}
	curveSec, curveFindings := fioCurves(points, labels, id)
	if curveSec != nil {
		sec.Subs = append(sec.Subs, curveSec)
		findings = append(findings, curveFindings...)
	}
	if bs := blockSizeCharts(points, labels, id); len(bs) > 0 {
		sub := sec.sub(id("block-size"), "Throughput vs block size")
		for _, c := range bs {
			sub.add(c)
		}
	}
	if sweeps := sweepCharts(points, labels, id); len(sweeps) > 0 {
		sub := sec.sub(id("iops-latency"), "IOPS vs latency")
		for _, c := range sweeps {
			sub.add(c)
		}
	}
	if st := steadyTable(points, id("steady-state")); st != nil {
		sec.add(st)
		for _, row := range st.Rows {
			findings = append(findings, fmt.Sprintf("Steady state on %s: %s.", row[0].Text, row[3].Text))
		}
	}
	if tel := fioTelemetry(points, id("system")); tel != nil {
		sub := sec.sub(id("system-section"), "CPU and storage during each point")
		sub.add(tel)
	}
	if tls := fioTimelines(r, points, id); !tls.empty() {
		sec.Subs = append(sec.Subs, tls)
	}
	if len(findings) == 0 {
		findings = fioBest(points, labels)
	}
	return sec, findings
}

// sequential says a point is read as MB/s rather than IOPS.
func sequential(d *fioDetail) bool { return d.RW == "read" || d.RW == "write" || d.RW == "rw" }

// headline is a point's figure as a storage engineer quotes it:
// "141,443 IOPS at 0.902 ms" for random I/O, "5,113 MB/s at 0.819 ms" for sequential.
func headline(p stepView) string {
	if sequential(p.Fio) {
		return fmt.Sprintf("%s MB/s at %s ms", thousands(fig(p, "mb_s")), millis(fioMS(p, "lat_mean_us")))
	}
	return fmt.Sprintf("%s IOPS at %s ms", thousands(fig(p, "iops")), millis(fioMS(p, "lat_mean_us")))
}

// fourCornersTable puts the corners side by side per target.
func fourCornersTable(points []stepView, labels []string, id string) (*table, []string) {
	t := &table{ID: id, Title: "Four corners",
		Caption: "Small random I/O is read as IOPS, large sequential I/O as MB/s (the figure in bold); latency is the mean and the 99th percentile of fio's completion latency, in ms."}
	t.Columns = []column{{Name: "corner"}, {Name: "jobs × queue", Numeric: true}}
	multi := len(labels) > 1
	for _, l := range labels {
		g := ""
		if multi {
			g = l
		}
		t.Columns = append(t.Columns, column{Name: "IOPS", Numeric: true, Group: g}, column{Name: "MB/s", Numeric: true, Group: g},
			column{Name: "mean", Numeric: true, Group: g}, column{Name: "p99", Numeric: true, Group: g})
	}
	type cornerRow struct {
		name, queue string
		byLabel     map[string]stepView
	}
	var rows []*cornerRow
	index := map[string]*cornerRow{}
	for _, p := range points {
		key := p.Fio.Series
		row, ok := index[key]
		if !ok {
			row = &cornerRow{name: blockSize(p.Fio.BS) + " " + p.Fio.pattern(), queue: fmt.Sprintf("%d × %d", p.Fio.Jobs, p.Fio.IODepth), byLabel: map[string]stepView{}}
			index[key] = row
			rows = append(rows, row)
		}
		row.byLabel[p.Fio.Label] = p
	}
	var findings []string
	perLabel := map[string][]string{}
	for _, row := range rows {
		r := []cell{textCell(row.name), textCell(row.queue)}
		for _, l := range labels {
			p, ok := row.byLabel[l]
			if !ok || !completed(p) {
				r = append(r, textCell("-"), textCell("-"), textCell("-"), textCell("-"))
				continue
			}
			iops, mbs := numCell(fig(p, "iops"), thousands), numCell(fig(p, "mb_s"), quantity)
			if sequential(p.Fio) {
				mbs.Class = "key"
			} else {
				iops.Class = "key"
			}
			r = append(r, iops, mbs, numCell(fioMS(p, "lat_mean_us"), millis), numCell(fioMS(p, "lat_p99_us"), millis))
			perLabel[l] = append(perLabel[l], row.name+" "+headline(p))
		}
		t.Rows = append(t.Rows, r)
	}
	for _, l := range labels {
		if len(perLabel[l]) == 0 {
			continue
		}
		who := "Four corners"
		if multi {
			who += " on " + l
		}
		findings = append(findings, who+": "+strings.Join(perLabel[l], "; ")+".")
	}
	return t, findings
}

// fioPointsTable lists every point with its figures.
func fioPointsTable(points []stepView, labels []string, id string) *table {
	t := &table{ID: id, Title: "fio points", Collapsed: len(points) > 12,
		Caption: "Every point as fio measured it after its warm-up. fio CPU is per job, in % of one CPU."}
	multi := len(labels) > 1
	t.Columns = []column{{Name: "point"}}
	if multi {
		t.Columns = append(t.Columns, column{Name: "target"})
	}
	rated := false
	for _, p := range points {
		rated = rated || p.Fio.RateIOPS > 0
	}
	t.Columns = append(t.Columns, column{Name: "pattern"}, column{Name: "block", Numeric: true}, column{Name: "jobs × queue", Numeric: true})
	if rated {
		t.Columns = append(t.Columns, column{Name: "rate limit", Numeric: true})
	}
	t.Columns = append(t.Columns, column{Name: "IOPS", Numeric: true}, column{Name: "MB/s", Numeric: true})
	for _, n := range []string{"mean", "p50", "p95", "p99", "p99.9", "max"} {
		t.Columns = append(t.Columns, column{Name: n, Numeric: true, Group: "latency (ms)"})
	}
	t.Columns = append(t.Columns, column{Name: "usr", Numeric: true, Group: "fio CPU (%)"}, column{Name: "sys", Numeric: true, Group: "fio CPU (%)"})
	ios := map[string]bool{}
	for _, p := range points {
		ios[ioText(p.Fio)] = true
	}
	mixedIO := len(ios) > 1
	if mixedIO {
		t.Columns = append(t.Columns, column{Name: "I/O"})
	} else {
		for io := range ios {
			if io != "" {
				t.Caption += " Every point used " + io + "."
			}
		}
	}
	t.Columns = append(t.Columns, column{Name: "status"})
	for _, p := range points {
		d := p.Fio
		row := []cell{textCell(p.Name)}
		if multi {
			row = append(row, textCell(d.Label))
		}
		rate := textCell("")
		if d.RateIOPS > 0 {
			rate = cell{Text: fmt.Sprintf("%s (%s %%)", thousands(float64(d.RateIOPS)), percent(d.RatePct)), Raw: raw(float64(d.RateIOPS))}
		}
		row = append(row, textCell(d.pattern()), cell{Text: blockSize(d.BS), Raw: raw(float64(d.BS))},
			textCell(fmt.Sprintf("%d × %d", d.Jobs, d.IODepth)))
		if rated {
			row = append(row, rate)
		}
		row = append(row, numCell(fig(p, "iops"), thousands), numCell(fig(p, "mb_s"), quantity))
		for _, n := range []string{"lat_mean_us", "lat_p50_us", "lat_p95_us", "lat_p99_us", "lat_p99_9_us", "lat_max_us"} {
			row = append(row, numCell(fioMS(p, n), millis))
		}
		row = append(row, numCell(fig(p, "fio_usr_cpu_pct"), percent), numCell(fig(p, "fio_sys_cpu_pct"), percent))
		if mixedIO {
			row = append(row, textCell(ioText(d)))
		}
		row = append(row, statusCell(string(p.Status)))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// ioText says how fio reached the storage: "io_uring with O_DIRECT".
func ioText(d *fioDetail) string {
	switch {
	case d.Engine == "":
		return ""
	case d.Direct:
		return d.Engine + " with O_DIRECT"
	}
	return d.Engine + ", buffered (the page cache is part of the figures)"
}

// boundedRows is the latency-bounded table with its findings.
type boundedRows struct {
	table      *table
	findings   []string
	configured bool
}

// latencyBounded is the SQLIO study's answer: per target and pattern, the
// best IOPS and MB/s among the points whose latency stays within the bound
// (fio's --latency-max, 20 ms mean by default). It is shown for the sqlio
// profile, when a bound was set, and whenever a pattern was swept over
// three points or more.
func latencyBounded(r *runView, points []stepView, profile, id string) *boundedRows {
	bound := 20 * time.Millisecond
	stat := "mean"
	configured := false
	if s := r.configString("latency_max"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			bound, configured = d, true
		}
	}
	if s := r.configString("latency_stat"); s != "" {
		stat, configured = s, true
	}
	figName, ok := fioLatencyFigure[stat]
	if !ok {
		figName, stat = "lat_mean_us", "mean"
	}
	type row struct {
		label, series, pattern string
		points, within         int
		bestIOPS, bestMBs      *stepView
	}
	var rows []*row
	index := map[string]*row{}
	swept := false
	for i := range points {
		p := &points[i]
		if !completed(*p) || p.Fio.RateOf != "" {
			continue
		}
		key := p.Fio.Label + "\x00" + p.Fio.Series
		rw, ok := index[key]
		if !ok {
			rw = &row{label: p.Fio.Label, series: p.Fio.Series, pattern: p.Fio.pattern()}
			index[key] = rw
			rows = append(rows, rw)
		}
		rw.points++
		if rw.points >= 3 {
			swept = true
		}
		if fig(*p, figName) > float64(bound.Microseconds()) {
			continue
		}
		rw.within++
		if rw.bestIOPS == nil || fig(*p, "iops") > fig(*rw.bestIOPS, "iops") {
			rw.bestIOPS = p
		}
		if rw.bestMBs == nil || fig(*p, "mb_s") > fig(*rw.bestMBs, "mb_s") {
			rw.bestMBs = p
		}
	}
	if len(rows) == 0 || !(profile == "sqlio" || configured || swept) {
		return nil
	}
	what := fmt.Sprintf("%s latency ≤ %s", stat, bound)
	t := &table{ID: id, Title: "Best within " + what,
		Caption: "For each target and pattern, the highest IOPS and the highest MB/s among the points whose " + stat + " completion latency stayed within the bound (ties go to the lighter load)."}
	multi := len(fioLabels(points)) > 1
	if multi {
		t.Columns = append(t.Columns, column{Name: "target"})
	}
	t.Columns = append(t.Columns, column{Name: "series"}, column{Name: "within", Numeric: true},
		column{Name: "IOPS", Numeric: true, Group: "best IOPS"}, column{Name: stat + " ms", Numeric: true, Group: "best IOPS"}, column{Name: "at", Group: "best IOPS"},
		column{Name: "MB/s", Numeric: true, Group: "best MB/s"}, column{Name: stat + " ms", Numeric: true, Group: "best MB/s"}, column{Name: "at", Group: "best MB/s"})
	out := &boundedRows{table: t, configured: configured}
	for _, rw := range rows {
		var cells []cell
		if multi {
			cells = append(cells, textCell(rw.label))
		}
		cells = append(cells, textCell(rw.series), textCell(fmt.Sprintf("%d/%d", rw.within, rw.points)))
		if rw.bestIOPS == nil {
			cells = append(cells, cell{Text: "none within the bound", Class: "worse"}, textCell(""), textCell(""), textCell("-"), textCell(""), textCell(""))
			out.findings = append(out.findings, fmt.Sprintf("%s %s: no point kept %s.", rw.label, rw.series, what))
		} else {
			bi, bm := *rw.bestIOPS, *rw.bestMBs
			cells = append(cells, numCell(fig(bi, "iops"), thousands), numCell(fioMS(bi, figName), millis), textCell(bi.Name),
				numCell(fig(bm, "mb_s"), quantity), numCell(fioMS(bm, figName), millis), textCell(bm.Name))
			out.findings = append(out.findings, fmt.Sprintf("%s %s within %s: best %s IOPS (%s) and %s MB/s (%s).",
				rw.label, rw.series, what, thousands(fig(bi, "iops")), bi.Name, quantity(fig(bm, "mb_s")), bm.Name))
		}
		t.Rows = append(t.Rows, cells)
	}
	return out
}

// fioCurves are the I/O-rate curves: a maximum, then fixed rates against it.
func fioCurves(points []stepView, labels []string, id func(string) string) (*section, []string) {
	byName := map[string]stepView{}
	for _, p := range points {
		byName[p.Name] = p
	}
	type curve struct {
		of     string
		points []stepView
	}
	var curves []*curve
	index := map[string]*curve{}
	for _, p := range points {
		if p.Fio.RateOf == "" || !completed(p) {
			continue
		}
		c, ok := index[p.Fio.RateOf]
		if !ok {
			c = &curve{of: p.Fio.RateOf}
			index[p.Fio.RateOf] = c
			curves = append(curves, c)
		}
		c.points = append(c.points, p)
	}
	if len(curves) == 0 {
		return nil, nil
	}
	sec := &section{ID: id("curves"), Title: "I/O-rate curves"}
	ch := &chart{ID: id("curve-chart"), Title: "Latency vs IOPS along the I/O-rate curve",
		Note: "Each point is a fixed rate, a share of the measured maximum; where the line turns up, the device is saturating.",
		X:    axis{Label: "IOPS achieved", Unit: "I/O per s", Zero: true}, Y: axis{Label: "completion latency", Unit: "ms", Zero: true}}
	var findings []string
	for ci, c := range curves {
		first := c.points[0]
		name := blockSize(first.Fio.BS) + " " + first.Fio.pattern()
		if len(labels) > 1 {
			name = first.Fio.Label + " " + name
		}
		t := &table{ID: id("curve-" + fmt.Sprint(ci+1)), Title: "I/O-rate curve " + name}
		if m, ok := byName[c.of]; ok && completed(m) {
			t.Caption = fmt.Sprintf("Maximum (%s): %s IOPS, mean %s ms, p99 %s ms.", m.Name, thousands(fig(m, "iops")), millis(fioMS(m, "lat_mean_us")), millis(fioMS(m, "lat_p99_us")))
			findings = append(findings, fmt.Sprintf("%s unthrottled: %s IOPS at %s ms mean, %s ms p99.", name, thousands(fig(m, "iops")), millis(fioMS(m, "lat_mean_us")), millis(fioMS(m, "lat_p99_us"))))
		}
		t.Columns = []column{{Name: "rate (% of max)", Numeric: true}, {Name: "asked IOPS", Numeric: true}, {Name: "IOPS", Numeric: true},
			{Name: "MB/s", Numeric: true}, {Name: "mean ms", Numeric: true}, {Name: "p99 ms", Numeric: true}}
		mean := series{Name: name + " mean", Color: 2 * ci}
		p99 := series{Name: name + " p99", Color: 2 * ci, Dash: dashed}
		low := -1
		for i, p := range c.points {
			t.Rows = append(t.Rows, []cell{numCell(p.Fio.RatePct, percent), numCell(float64(p.Fio.RateIOPS), thousands),
				numCell(fig(p, "iops"), thousands), numCell(fig(p, "mb_s"), quantity), numCell(fioMS(p, "lat_mean_us"), millis), numCell(fioMS(p, "lat_p99_us"), millis)})
			mean.X, mean.Y = append(mean.X, fig(p, "iops")), append(mean.Y, fioMS(p, "lat_mean_us"))
			p99.X, p99.Y = append(p99.X, fig(p, "iops")), append(p99.Y, fioMS(p, "lat_p99_us"))
			if low < 0 || p.Fio.RatePct < c.points[low].Fio.RatePct {
				low = i
			}
		}
		ch.Series = append(ch.Series, mean, p99)
		sec.add(t)
		knee := ""
		ref := fioMS(c.points[low], "lat_mean_us")
		for _, p := range c.points {
			if p.Fio.RatePct > c.points[low].Fio.RatePct && fioMS(p, "lat_mean_us") >= 2*ref {
				knee = fmt.Sprintf("On %s, latency bends at %s %% of the maximum (%s IOPS): mean %s ms, twice the %s ms at the lowest rate.",
					name, quantity(p.Fio.RatePct), thousands(fig(p, "iops")), millis(fioMS(p, "lat_mean_us")), millis(ref))
				break
			}
		}
		if knee == "" {
			knee = fmt.Sprintf("On %s, mean latency never doubled over the rates run.", name)
		}
		sec.add(&paragraph{Text: knee, Class: "verdict"})
		findings = append(findings, knee)
	}
	autoLog(ch)
	sec.Blocks = append([]block{ch}, sec.Blocks...)
	return sec, findings
}

// fioGroup is points that differ in one swept variable.
type fioGroup struct {
	label, pattern string
	jobs, qd       int
	bs             int64
	points         []stepView
}

// groupPoints groups unthrottled, completed points by key.
func groupPoints(points []stepView, key func(d *fioDetail) string) []*fioGroup {
	var out []*fioGroup
	index := map[string]*fioGroup{}
	for _, p := range points {
		d := p.Fio
		if d.RateOf != "" || d.Loops > 0 || !completed(p) {
			continue
		}
		k := key(d)
		g, ok := index[k]
		if !ok {
			g = &fioGroup{label: d.Label, pattern: d.pattern(), jobs: d.Jobs, qd: d.IODepth, bs: d.BS}
			index[k] = g
			out = append(out, g)
		}
		g.points = append(g.points, p)
	}
	return out
}

// groupNames names groups by what tells them apart: target, pattern, queue.
func groupNames(groups []*fioGroup, withBS bool) []string {
	labels, patterns, queues, sizes := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[int64]bool{}
	for _, g := range groups {
		labels[g.label] = true
		patterns[g.pattern] = true
		queues[fmt.Sprintf("%d×%d", g.jobs, g.qd)] = true
		sizes[g.bs] = true
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		var parts []string
		if len(labels) > 1 {
			parts = append(parts, g.label)
		}
		if withBS && len(sizes) > 1 {
			parts = append(parts, blockSize(g.bs))
		}
		parts = append(parts, g.pattern)
		if len(queues) > 1 && !withBS {
			parts = append(parts, fmt.Sprintf("QD %d×%d", g.jobs, g.qd))
		}
		out[i] = strings.Join(parts, " ")
	}
	return out
}

// blockSizeCharts plot IOPS and MB/s against block size for every pattern
// measured at two block sizes or more.
func blockSizeCharts(points []stepView, labels []string, id func(string) string) []*chart {
	groups := groupPoints(points, func(d *fioDetail) string {
		return fmt.Sprintf("%s/%s/%d/%d/%d", d.Label, d.RW, d.ReadPct, d.Jobs, d.IODepth)
	})
	var kept []*fioGroup
	sizes := map[int64]bool{}
	for _, g := range groups {
		distinct := map[int64]bool{}
		for _, p := range g.points {
			distinct[p.Fio.BS] = true
		}
		if len(distinct) >= 2 {
			kept = append(kept, g)
			for bs := range distinct {
				sizes[bs] = true
			}
		}
	}
	if len(kept) == 0 {
		return nil
	}
	var ticks []float64
	for bs := range sizes {
		ticks = append(ticks, float64(bs))
	}
	sort.Float64s(ticks)
	names := groupNames(kept, false)
	bsAxis := axis{Label: "block size", Log: true, Ticks: ticks, Format: func(v float64) string { return blockSize(int64(v)) }}
	iops := &chart{ID: id("iops-vs-bs"), Title: "IOPS vs block size", X: bsAxis, Y: axis{Label: "IOPS", Unit: "I/O per s", Zero: true},
		Note: "Small blocks show what the device does per operation; IOPS fall as blocks grow and throughput takes over."}
	mbs := &chart{ID: id("mbs-vs-bs"), Title: "MB/s vs block size", X: bsAxis, Y: axis{Label: "throughput", Unit: "MB/s", Zero: true},
		Note: "Where the line flattens, the device (or the path to it) is at its bandwidth."}
	for i, g := range kept {
		sort.SliceStable(g.points, func(a, b int) bool { return g.points[a].Fio.BS < g.points[b].Fio.BS })
		si := series{Name: names[i], Color: i}
		sm := series{Name: names[i], Color: i}
		for _, p := range g.points {
			si.X, si.Y = append(si.X, float64(p.Fio.BS)), append(si.Y, fig(p, "iops"))
			sm.X, sm.Y = append(sm.X, float64(p.Fio.BS)), append(sm.Y, fig(p, "mb_s"))
		}
		iops.Series = append(iops.Series, si)
		mbs.Series = append(mbs.Series, sm)
	}
	return []*chart{iops, mbs}
}

// sweepCharts plot IOPS against mean latency for points that sweep the
// queue depth (three depths or more) or, failing that, the block size.
func sweepCharts(points []stepView, labels []string, id func(string) string) []*chart {
	byQueue := groupPoints(points, func(d *fioDetail) string {
		return fmt.Sprintf("%s/%s/%d/%d", d.Label, d.RW, d.ReadPct, d.BS)
	})
	withBS := true
	kept := keepSweeps(byQueue, func(d *fioDetail) float64 { return float64(d.IODepth * d.Jobs) })
	if len(kept) == 0 {
		withBS = false
		bySize := groupPoints(points, func(d *fioDetail) string {
			return fmt.Sprintf("%s/%s/%d/%d/%d", d.Label, d.RW, d.ReadPct, d.Jobs, d.IODepth)
		})
		kept = keepSweeps(bySize, func(d *fioDetail) float64 { return float64(d.BS) })
	}
	if len(kept) == 0 {
		return nil
	}
	// One chart per pattern keeps the lines readable.
	var patterns []string
	byPattern := map[string][]*fioGroup{}
	for _, g := range kept {
		if _, ok := byPattern[g.pattern]; !ok {
			patterns = append(patterns, g.pattern)
		}
		byPattern[g.pattern] = append(byPattern[g.pattern], g)
	}
	var out []*chart
	for pi, pat := range patterns {
		gs := byPattern[pat]
		names := groupNames(gs, withBS)
		swept := "block size"
		if withBS {
			swept = "outstanding I/Os"
		}
		c := &chart{ID: id(fmt.Sprintf("sweep-%d", pi+1)), Title: "IOPS vs mean latency, " + pat,
			Note: "Points follow increasing " + swept + "; a line that climbs without moving right is a device past saturation.",
			X:    axis{Label: "IOPS", Unit: "I/O per s", Zero: true}, Y: axis{Label: "mean completion latency", Unit: "ms", Zero: true}}
		for i, g := range gs {
			s := series{Name: names[i], Color: i}
			for _, p := range g.points {
				s.X, s.Y = append(s.X, fig(p, "iops")), append(s.Y, fioMS(p, "lat_mean_us"))
			}
			c.Series = append(c.Series, s)
		}
		autoLog(c)
		out = append(out, c)
	}
	return out
}

// keepSweeps keeps the groups with three or more distinct values of the
// swept variable, their points ordered by it.
func keepSweeps(groups []*fioGroup, swept func(d *fioDetail) float64) []*fioGroup {
	var out []*fioGroup
	for _, g := range groups {
		distinct := map[float64]bool{}
		for _, p := range g.points {
			distinct[swept(p.Fio)] = true
		}
		if len(distinct) >= 3 {
			sort.SliceStable(g.points, func(a, b int) bool { return swept(g.points[a].Fio) < swept(g.points[b].Fio) })
			out = append(out, g)
		}
	}
	return out
}

// steadyTable reports fio's steady-state detection (the precondition profile).
func steadyTable(points []stepView, id string) *table {
	t := &table{ID: id, Title: "Steady state", Caption: "fio's steady-state detection: the criterion over a rolling window, and whether it held before the runtime ran out."}
	t.Columns = []column{{Name: "point"}, {Name: "criterion"}, {Name: "window (s)", Numeric: true}, {Name: "outcome"},
		{Name: "IOPS over the window", Numeric: true}}
	for _, p := range points {
		ss := p.Fio.SteadyState
		if ss == nil {
			continue
		}
		outcome := fmt.Sprintf("not steady after %d s (last %s)", p.Fio.ElapsedS, ss.Value)
		class := "worse"
		if ss.Attained {
			outcome, class = fmt.Sprintf("steady after %d s (%s)", p.Fio.ElapsedS, ss.Value), "better"
		}
		t.Rows = append(t.Rows, []cell{textCell(p.Name), textCell(ss.Criterion), numCell(float64(ss.WindowS), quantity),
			{Text: outcome, Raw: outcome, Class: class}, numCell(ss.WindowIOPSMean, thousands)})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// fioTelemetry is the verdict and CPU per point, when points were sampled.
func fioTelemetry(points []stepView, id string) *table {
	t := &table{ID: id, Title: "CPU and bottleneck per point",
		Caption: "CPU in % of the whole machine, means over the point's seconds."}
	t.Columns = []column{{Name: "point"}, {Name: "idle %", Numeric: true}, {Name: "iowait %", Numeric: true}, {Name: "verdict", Wrap: true}, {Name: "load generator", Wrap: true}}
	for _, p := range points {
		if p.Tel == nil {
			continue
		}
		t.Rows = append(t.Rows, []cell{textCell(p.Name), numCell(p.Tel.mean("cpu_idle_pct"), percent), numCell(p.Tel.mean("cpu_iowait_pct"), percent),
			verdictCell(p.Tel), shareCell(p.Tel, true)})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// fioTimelines are fio's per-second logs over the run, points shaded.
func fioTimelines(r *runView, points []stepView, id func(string) string) *section {
	sec := &section{ID: id("timelines"), Title: "Second by second"}
	name := func(s stepView) string { return s.Name }
	note := "fio's per-second logs; each point is shaded (its warm-up hatched). A dip inside a point is the device, not the tool."
	for _, c := range []*chart{
		r.timelineChart(id("iops-timeline"), "IOPS per second", note, points, axis{Label: "IOPS", Unit: "I/O per s", Zero: true},
			[]tlSpec{{name: "IOPS", column: "fio_iops", color: 0}, {name: "read IOPS", column: "fio_read_iops", color: 2}, {name: "write IOPS", column: "fio_write_iops", color: 1}}, name),
		r.timelineChart(id("mbs-timeline"), "MB/s per second", "", points, axis{Label: "throughput", Unit: "MB/s", Zero: true},
			[]tlSpec{{name: "MB/s", column: "fio_mb_s", color: 4}}, name),
		r.timelineChart(id("latency-timeline"), "Mean completion latency per second", "", points, axis{Label: "latency", Unit: "ms", Zero: true},
			[]tlSpec{{name: "mean", column: "fio_lat_mean_us", color: 3, factor: 0.001},
				{name: "read mean", column: "fio_read_lat_mean_us", color: 2, factor: 0.001}, {name: "write mean", column: "fio_write_lat_mean_us", color: 1, factor: 0.001}}, name),
	} {
		if c.hasData() {
			sec.add(c)
		}
	}
	return sec
}

// fioBest are the findings of a run without a profile table: the best
// IOPS and the best MB/s point of each target.
func fioBest(points []stepView, labels []string) []string {
	var out []string
	for _, l := range labels {
		var bi, bm *stepView
		for i := range points {
			p := &points[i]
			if p.Fio.Label != l || !completed(*p) {
				continue
			}
			if bi == nil || fig(*p, "iops") > fig(*bi, "iops") {
				bi = p
			}
			if bm == nil || fig(*p, "mb_s") > fig(*bm, "mb_s") {
				bm = p
			}
		}
		if bi == nil {
			continue
		}
		who := ""
		if len(labels) > 1 {
			who = " on " + l
		}
		out = append(out, fmt.Sprintf("Highest IOPS%s: %s IOPS at %s ms mean (%s); highest throughput: %s MB/s at %s ms (%s).", who,
			thousands(fig(*bi, "iops")), millis(fioMS(*bi, "lat_mean_us")), bi.Name, thousands(fig(*bm, "mb_s")), millis(fioMS(*bm, "lat_mean_us")), bm.Name))
	}
	return out
}
