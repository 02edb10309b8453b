package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// The section of fio points: every point's figures, the profile's own
// table (four corners, latency-bounded maxima, I/O-rate curves, steady
// state), throughput against block size and against latency, and the
// per-second timelines.

// fioMS reads a latency figure of a point in ms.
func fioMS(s results.Step, name results.FigureName) float64 { return analysis.Value(s, name) / 1000 }

// iops and mbs read a point's IOPS and MB/s, NaN without them.
func iops(s results.Step) float64 { return analysis.Value(s, results.FigureIOPS) }
func mbs(s results.Step) float64  { return analysis.Value(s, results.FigureMBPerSec) }

// fioPointLabel names a point's target, or "" when the run has one target.
func fioLabels(points []results.Step) []string {
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
	profile := r.FioProfile()
	if profile != "" {
		sec.add(&paragraph{Text: fmt.Sprintf("Profile %s, %s. Latency is fio's completion latency (submission to completion), in ms; MB is 10⁶ bytes.", profile, plural(len(points), "point", "points"))})
	}
	var findings []string

	envelope := envelopePoints(points)
	corners := profile == "four-corners"
	if corners {
		findings = append(findings, fourCornersFindings(envelope, labels)...)
		// The log-write points have a table of their own (logWriteSection).
		sec.add(fioPointsTable(envelope, labels, id("four-corners"), true))
	} else {
		sec.add(fioPointsTable(points, labels, id("points"), false))
	}
	if t := directionsTable(points, labels, id("directions")); t != nil {
		sec.add(t)
	}
	if diskSpdRun(r.Recorded) {
		ladders, unread := diskSpdLadders(r.Recorded, points, id)
		for _, t := range ladders {
			sec.add(t)
		}
		for _, u := range unread {
			sec.add(&paragraph{Text: "Latency histograms not read: " + u + ".", Class: "note"})
		}
	}
	if sub, f := logWriteSection(r, id); sub != nil {
		sec.Subs = append(sec.Subs, sub)
		findings = append(findings, f...)
	}
	if t := fleetTable(points, id("fleet")); t != nil {
		sec.add(t)
	}
	if t := fleetSystemTable(points, id("fleet-system")); t != nil {
		sec.add(t)
	}
	if t, f := fleetHostsTable(r.Run, id("fleet-hosts")); t != nil {
		sec.add(t)
		findings = append(findings, f...)
	}

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
	if bs := blockSizeCharts(envelope, labels, id, corners); len(bs) > 0 {
		title := "Throughput vs block size"
		if corners {
			title = "The four corners"
		}
		sub := sec.sub(id("block-size"), title)
		for _, c := range bs {
			sub.add(c)
		}
	}
	if sweeps := sweepCharts(envelope, labels, id); len(sweeps) > 0 {
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
	if sub, f := roundsSection(points, labels, id); sub != nil {
		sec.Subs = append(sec.Subs, sub)
		findings = append(findings, f...)
	}
	if tel := fioTelemetry(points, id("system")); tel != nil {
		sub := sec.sub(id("system-section"), "CPU and storage during each point")
		sub.add(tel)
	}
	if cs := spectrumChart(r, points, id("spectrum"), "completion", "total"); cs != nil {
		sub := sec.sub(id("spectrum-section"), "Latency distribution")
		for _, c := range cs {
			sub.add(c)
		}
	}
	if tls := fioTimelines(r, points, id); !tls.empty() {
		sec.Subs = append(sec.Subs, tls)
	}
	if len(findings) == 0 {
		findings = fioBest(points, labels)
	}
	return sec, findings
}

// headline is a point's figure as a storage engineer quotes it:
// "141,443 IOPS at 0.902 ms" for random I/O, "5,113 MB/s at 0.819 ms" for sequential.
func headline(p results.Step) string {
	if p.Fio.Sequential() {
		return fmt.Sprintf("%s MB/s at %s ms", thousands(mbs(p)), millis(fioMS(p, results.FigureLatMeanUS)))
	}
	return fmt.Sprintf("%s IOPS at %s ms", thousands(iops(p)), millis(fioMS(p, results.FigureLatMeanUS)))
}

// fourCornersFindings quote each corner by its figure, per target: IOPS
// for small random I/O, MB/s for large sequential I/O.
func fourCornersFindings(points []results.Step, labels []string) []string {
	perLabel := map[string][]string{}
	for _, p := range points {
		if analysis.Completed(p) {
			perLabel[p.Fio.Label] = append(perLabel[p.Fio.Label], blockSize(p.Fio.BS)+" "+pattern(p.Fio.FioPlan)+" "+headline(p))
		}
	}
	var findings []string
	for _, l := range labels {
		if len(perLabel[l]) == 0 {
			continue
		}
		who := "Four corners"
		if len(labels) > 1 {
			who += " on " + l
		}
		findings = append(findings, who+": "+strings.Join(perLabel[l], "; ")+".")
	}
	return findings
}

// fioPointsTable lists every point with its figures; the four corners'
// table is the same with each corner's own figure in bold.
func fioPointsTable(points []results.Step, labels []string, id string, corners bool) *table {
	t := &table{ID: id, Title: "fio points", Collapsed: len(points) > 12,
		Caption: "Every point as fio measured it after its warm-up. fio CPU is per job, in % of one CPU."}
	if corners {
		t.Title = "Four corners"
		t.Caption = "Every point as fio measured it after its warm-up: small random I/O is read as IOPS, large sequential I/O as MB/s (the figure in bold). fio CPU is per job, in % of one CPU."
	}
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
		t.Columns = append(t.Columns, column{Name: results.FigureRateTargetIOPS.Def().Heading(), Numeric: true})
	}
	spread := false
	for _, p := range points {
		_, ok := p.Figure(results.FigureIOPSStdev)
		spread = spread || ok
	}
	t.Columns = append(t.Columns, column{Name: results.FigureIOPS.Def().Heading(), Numeric: true})
	if spread {
		sd := results.FigureIOPSStdev.Def().Heading()
		t.Columns = append(t.Columns, column{Name: sd, Numeric: true})
		t.Caption += " " + sd + " is the standard deviation of the point's per-second IOPS around their mean, as DiskSpd reports it."
	}
	t.Columns = append(t.Columns, column{Name: results.FigureMBPerSec.Def().Heading(), Numeric: true})
	for _, n := range pointLatencies {
		t.Columns = append(t.Columns, column{Name: n.Def().Heading(), Numeric: true, Group: "latency (ms)"})
	}
	for _, n := range []results.FigureName{results.FigureFioUsrCPU, results.FigureFioSysCPU} {
		t.Columns = append(t.Columns, column{Name: n.Def().Heading(), Numeric: true, Group: "fio CPU (%)"})
	}
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
		what := pattern(d.FioPlan)
		if d.WriteThrough {
			what += ", O_DSYNC"
		}
		row = append(row, textCell(what), cell{Text: blockSize(d.BS), Raw: raw(float64(d.BS))},
			textCell(fmt.Sprintf("%d × %d", d.Jobs, d.IODepth)))
		if rated {
			row = append(row, rate)
		}
		iopsCell, mbsCell := numCell(iops(p), thousands), numCell(mbs(p), quantity)
		if corners && analysis.Completed(p) && !d.LogWrite() {
			if d.Sequential() {
				mbsCell.Class = "key"
			} else {
				iopsCell.Class = "key"
			}
		}
		row = append(row, iopsCell)
		if spread {
			sd := textCell("-")
			if v, ok := p.Figure(results.FigureIOPSStdev); ok {
				sd = numCell(v, thousands)
			}
			row = append(row, sd)
		}
		row = append(row, mbsCell)
		for _, n := range pointLatencies {
			row = append(row, numCell(fioMS(p, n), millis))
		}
		row = append(row, numCell(analysis.Value(p, results.FigureFioUsrCPU), percent), numCell(analysis.Value(p, results.FigureFioSysCPU), percent))
		if mixedIO {
			row = append(row, textCell(ioText(d)))
		}
		row = append(row, statusCell(string(p.Status)))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// pointLatencies are the completion latencies a fio point's row shows, in ms.
var pointLatencies = []results.FigureName{results.FigureLatMeanUS, results.FigureLatP50US, results.FigureLatP95US,
	results.FigureLatP99US, results.FigureLatP999US, results.FigureLatMaxUS}

// ioText says how fio reached the storage: "io_uring with O_DIRECT".
func ioText(d *results.FioPoint) string {
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
func latencyBounded(r *runView, points []results.Step, profile, id string) *boundedRows {
	bound, configured := analysis.BoundOf(r.Run.Config)
	rows := analysis.BestWithin(points, bound)
	if len(rows) == 0 || !(profile == "sqlio" || configured || analysis.Swept(points)) {
		return nil
	}
	stat := string(bound.Stat)
	what := bound.String()
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
			cells = append(cells, textCell(rw.Label))
		}
		cells = append(cells, textCell(rw.Series), textCell(fmt.Sprintf("%d/%d", rw.Within, rw.Points)))
		if rw.BestIOPS == nil {
			cells = append(cells, cell{Text: "none within the bound", Class: "worse"}, textCell(""), textCell(""), textCell("-"), textCell(""), textCell(""))
			out.findings = append(out.findings, fmt.Sprintf("%s %s: no point kept %s.", rw.Label, rw.Series, what))
		} else {
			bi, bm := rw.BestIOPS, rw.BestMBPerSec
			cells = append(cells, numCell(bi.IOPS, thousands), numCell(bi.LatencyUS/1000, millis), textCell(bi.Name),
				numCell(bm.MBPerSec, quantity), numCell(bm.LatencyUS/1000, millis), textCell(bm.Name))
			out.findings = append(out.findings, fmt.Sprintf("%s %s within %s: best %s IOPS (%s) and %s MB/s (%s).",
				rw.Label, rw.Series, what, thousands(bi.IOPS), bi.Name, quantity(bm.MBPerSec), bm.Name))
		}
		t.Rows = append(t.Rows, cells)
	}
	return out
}

// fioCurves are the I/O-rate curves: a maximum, then fixed rates against it.
func fioCurves(points []results.Step, labels []string, id func(string) string) (*section, []string) {
	curves := analysis.Curves(points)
	if len(curves) == 0 {
		return nil, nil
	}
	sec := &section{ID: id("curves"), Title: "I/O-rate curves"}
	ch := &chart{ID: id("curve-chart"), Title: "Latency vs IOPS along the I/O-rate curve",
		Note: "Each point is a fixed rate, a share of the measured maximum; where the line turns up, the device is saturating.",
		X:    axis{Label: "IOPS achieved", Unit: "I/O per s", Zero: true}, Y: axis{Label: "completion latency", Unit: "ms", Zero: true}}
	var findings []string
	for ci, c := range curves {
		name := blockSize(c.Pattern.BS) + " " + pattern(c.Pattern)
		if len(labels) > 1 {
			name = c.Pattern.Label + " " + name
		}
		t := &table{ID: id("curve-" + fmt.Sprint(ci+1)), Title: "I/O-rate curve " + name}
		if m := c.Max; m != nil {
			t.Caption = fmt.Sprintf("Maximum (%s): %s IOPS, mean %s ms, p99 %s ms.", m.Name, thousands(m.IOPS), millis(m.MeanUS/1000), millis(m.P99US/1000))
			findings = append(findings, fmt.Sprintf("%s unthrottled: %s IOPS at %s ms mean, %s ms p99.", name, thousands(m.IOPS), millis(m.MeanUS/1000), millis(m.P99US/1000)))
		}
		t.Columns = []column{{Name: "rate (% of max)", Numeric: true}, {Name: "asked IOPS", Numeric: true}, {Name: "IOPS", Numeric: true},
			{Name: "MB/s", Numeric: true}, {Name: "mean ms", Numeric: true}, {Name: "p99 ms", Numeric: true}}
		mean := series{Name: name + " mean", Color: 2 * ci}
		p99 := series{Name: name + " p99", Color: 2 * ci, Dash: dashed}
		for _, p := range c.Points {
			t.Rows = append(t.Rows, []cell{numCell(p.Pct, percent), numCell(float64(p.TargetIOPS), thousands),
				numCell(p.IOPS, thousands), numCell(p.MBPerSec, quantity), numCell(p.MeanUS/1000, millis), numCell(p.P99US/1000, millis)})
			mean.X, mean.Y = append(mean.X, p.IOPS), append(mean.Y, p.MeanUS/1000)
			p99.X, p99.Y = append(p99.X, p.IOPS), append(p99.Y, p.P99US/1000)
		}
		ch.Series = append(ch.Series, mean, p99)
		sec.add(t)
		knee := fmt.Sprintf("On %s, mean latency never doubled over the rates run.", name)
		if k := c.Knee(); k >= 0 {
			p, ref := c.Points[k], c.Points[c.Lowest()].MeanUS/1000
			knee = fmt.Sprintf("On %s, latency bends at %s %% of the maximum (%s IOPS): mean %s ms, twice the %s ms at the lowest rate.",
				name, quantity(p.Pct), thousands(p.IOPS), millis(p.MeanUS/1000), millis(ref))
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
	points         []results.Step
}

// groupPoints groups unthrottled, completed points by key.
func groupPoints(points []results.Step, key func(d *results.FioPoint) string) []*fioGroup {
	var out []*fioGroup
	index := map[string]*fioGroup{}
	for _, p := range points {
		d := p.Fio
		if d.RateOf != "" || d.Loops > 0 || !analysis.Completed(p) {
			continue
		}
		k := key(d)
		g, ok := index[k]
		if !ok {
			g = &fioGroup{label: d.Label, pattern: pattern(d.FioPlan), jobs: d.Jobs, qd: d.IODepth, bs: d.BS}
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
// measured at two block sizes or more. The four corners are drawn as reads
// and writes over every block size, so that the small random corners stand
// beside the large sequential ones in both charts.
func blockSizeCharts(points []results.Step, labels []string, id func(string) string, corners bool) []*chart {
	key := func(d *results.FioPoint) string {
		return fmt.Sprintf("%s/%s/%d/%d/%d", d.Label, d.RW, d.ReadPct, d.Jobs, d.IODepth)
	}
	if corners {
		key = func(d *results.FioPoint) string { return d.Label + "/" + cornerDirection(d.RW) }
	}
	groups := groupPoints(points, key)
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
	// Block sizes are categories (often just two, as in four corners): bars
	// side by side, where a line would invent values between them.
	iopsChart := &chart{ID: id("iops-vs-bs"), Title: "IOPS vs block size", X: bsAxis, Y: figureAxis(results.FigureIOPS), Bars: true,
		Note: "Small blocks show what the device does per operation; IOPS fall as blocks grow and throughput takes over."}
	mbsChart := &chart{ID: id("mbs-vs-bs"), Title: "MB/s vs block size", X: bsAxis, Y: axis{Label: "throughput", Unit: "MB/s", Zero: true}, Bars: true,
		Note: "Where the bars stop growing, the device (or the path to it) is at its bandwidth."}
	if corners {
		random := map[int64]bool{}
		for _, g := range kept {
			for _, p := range g.points {
				random[p.Fio.BS] = random[p.Fio.BS] || !p.Fio.Sequential()
			}
		}
		bsAxis.Label = "block size and pattern"
		bsAxis.Format = func(v float64) string {
			if random[int64(v)] {
				return blockSize(int64(v)) + " random"
			}
			return blockSize(int64(v)) + " sequential"
		}
		iopsChart.X, mbsChart.X = bsAxis, bsAxis
		iopsChart.Title, mbsChart.Title = "Four corners: IOPS", "Four corners: MB/s"
		iopsChart.Note = "Every corner, reads and writes side by side: the small random corners are read by their IOPS, the large sequential ones by their MB/s (the other chart)."
		mbsChart.Note = "The same corners by their throughput: where the sequential bars stop growing, the device (or the path to it) is at its bandwidth."
		for i, g := range kept {
			names[i] = cornerDirection(g.points[0].Fio.RW)
			if len(labels) > 1 {
				names[i] = g.label + " " + names[i]
			}
		}
	}
	for i, g := range kept {
		sort.SliceStable(g.points, func(a, b int) bool { return g.points[a].Fio.BS < g.points[b].Fio.BS })
		si := series{Name: names[i], Color: i}
		sm := series{Name: names[i], Color: i}
		for _, p := range g.points {
			si.X, si.Y = append(si.X, float64(p.Fio.BS)), append(si.Y, iops(p))
			sm.X, sm.Y = append(sm.X, float64(p.Fio.BS)), append(sm.Y, mbs(p))
		}
		iopsChart.Series = append(iopsChart.Series, si)
		mbsChart.Series = append(mbsChart.Series, sm)
	}
	return []*chart{iopsChart, mbsChart}
}

// cornerDirection names a corner's direction: "read" or "write".
func cornerDirection(rw string) string {
	if strings.Contains(rw, "write") {
		return "write"
	}
	return "read"
}

// sweepCharts plot IOPS against mean latency for points that sweep the
// queue depth (three depths or more) or, failing that, the block size.
func sweepCharts(points []results.Step, labels []string, id func(string) string) []*chart {
	byQueue := groupPoints(points, func(d *results.FioPoint) string {
		return fmt.Sprintf("%s/%s/%d/%d", d.Label, d.RW, d.ReadPct, d.BS)
	})
	withBS := true
	kept := keepSweeps(byQueue, func(d *results.FioPoint) float64 { return float64(d.IODepth * d.Jobs) })
	if len(kept) == 0 {
		withBS = false
		bySize := groupPoints(points, func(d *results.FioPoint) string {
			return fmt.Sprintf("%s/%s/%d/%d/%d", d.Label, d.RW, d.ReadPct, d.Jobs, d.IODepth)
		})
		kept = keepSweeps(bySize, func(d *results.FioPoint) float64 { return float64(d.BS) })
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
			X:    figureAxis(results.FigureIOPS), Y: axis{Label: "mean completion latency", Unit: "ms", Zero: true}}
		for i, g := range gs {
			s := series{Name: names[i], Color: i}
			for _, p := range g.points {
				s.X, s.Y = append(s.X, iops(p)), append(s.Y, fioMS(p, results.FigureLatMeanUS))
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
func keepSweeps(groups []*fioGroup, swept func(d *results.FioPoint) float64) []*fioGroup {
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

// roundsSection shows a series repeated in rounds until steady (the
// snia-rounds profile): each round's IOPS against the round, and the
// verdict on the window of rounds after each one.
func roundsSection(points []results.Step, labels []string, id func(string) string) (*section, []string) {
	var rounds []results.Step
	for _, p := range points {
		if p.Fio.Rounds != nil {
			rounds = append(rounds, p)
		}
	}
	if len(rounds) == 0 {
		return nil, nil
	}
	sec := &section{ID: id("rounds-section"), Title: "Rounds until steady"}
	first := rounds[0].Fio.Rounds
	c := &chart{ID: id("rounds"), Title: "IOPS per round",
		Note: fmt.Sprintf("Each round is one point; after each, fio's tests (%s) are applied to the IOPS of the last %d rounds, and the rounds end once they all hold.", strings.Join(first.Criteria, " and "), first.Window),
		X:    axis{Label: "round", Integer: true}, Y: figureAxis(results.FigureIOPS)}
	multi := len(labels) > 1
	t := &table{ID: id("rounds-table"), Title: "Rounds",
		Caption: "The verdict after each round on the window of rounds ending with it; a figure is what a test compared with its limit, in % of the window's mean where the limit is a percentage."}
	if multi {
		t.Columns = append(t.Columns, column{Name: "target"})
	}
	t.Columns = append(t.Columns, column{Name: "round", Numeric: true}, column{Name: "IOPS", Numeric: true}, column{Name: "window mean", Numeric: true})
	for _, cr := range first.Criteria {
		t.Columns = append(t.Columns, column{Name: cr, Numeric: true})
	}
	t.Columns = append(t.Columns, column{Name: "verdict"})
	var findings []string
	bySeries := map[string]int{}
	for _, p := range rounds {
		d, v := p.Fio, p.Fio.Rounds
		key := d.Label + "\x00" + d.Series
		i, ok := bySeries[key]
		if !ok {
			i = len(c.Series)
			bySeries[key] = i
			c.Series = append(c.Series, series{Name: d.Label, Color: i})
		}
		c.Series[i].X = append(c.Series[i].X, float64(d.Round))
		c.Series[i].Y = append(c.Series[i].Y, iops(p))
		var row []cell
		if multi {
			row = append(row, textCell(d.Label))
		}
		mean := textCell("-")
		if v.Judged {
			mean = numCell(v.WindowIOPSMean, thousands)
		}
		row = append(row, numCell(float64(d.Round), thousands), numCell(iops(p), thousands), mean)
		for k := range v.Criteria {
			f := textCell("-")
			if k < len(v.Figures) && v.Figures[k] != nil {
				f = numCell(*v.Figures[k], func(x float64) string { return fixed(x, 2) })
			}
			row = append(row, f)
		}
		verdict := cell{Text: "too few rounds to judge", Raw: "unjudged"}
		switch {
		case v.Steady:
			verdict = cell{Text: "steady", Raw: "steady", Class: "better"}
		case v.Judged:
			verdict = cell{Text: "not steady", Raw: "not steady"}
		}
		if v.Last && !v.Steady {
			verdict = cell{Text: fmt.Sprintf("not steady after the most rounds (%d)", v.Max), Raw: "not steady", Class: "worse"}
		}
		row = append(row, verdict)
		t.Rows = append(t.Rows, row)
		if v.Last {
			tests := strings.Join(v.Criteria, " and ")
			if v.Steady {
				findings = append(findings, fmt.Sprintf("Rounds on %s: steady after %s (%s over the last %d), at %s IOPS.", d.Label, plural(d.Round, "round", "rounds"), tests, v.Window, thousands(v.WindowIOPSMean)))
			} else {
				findings = append(findings, fmt.Sprintf("Rounds on %s: not steady after %s (%s over the last %d); the last %d averaged %s IOPS.", d.Label, plural(d.Round, "round", "rounds"), tests, v.Window, v.Window, thousands(v.WindowIOPSMean)))
			}
		}
	}
	sec.add(c, t)
	return sec, findings
}

// steadyTable reports fio's steady-state detection (the precondition profile).
func steadyTable(points []results.Step, id string) *table {
	t := &table{ID: id, Title: "Steady state", Caption: "fio's steady-state detection: the criterion over a rolling window, and whether it held before the runtime ran out."}
	t.Columns = []column{{Name: "point"}, {Name: "criterion"}, {Name: "window (s)", Numeric: true}, {Name: "outcome"},
		{Name: "IOPS over the window", Numeric: true}}
	for _, p := range points {
		ss := p.Fio.Steady
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
func fioTelemetry(points []results.Step, id string) *table {
	t := &table{ID: id, Title: "CPU and bottleneck per point",
		Caption: "CPU in % of the whole machine, means over the point's seconds."}
	t.Columns = []column{{Name: "point"}, {Name: "idle %", Numeric: true}, {Name: "iowait %", Numeric: true}, {Name: "verdict", Wrap: true}, {Name: "load generator", Wrap: true}}
	for _, p := range points {
		if p.Telemetry == nil {
			continue
		}
		t.Rows = append(t.Rows, []cell{textCell(p.Name), numCell(p.Telemetry.Mean("cpu_idle_pct"), percent), numCell(p.Telemetry.Mean("cpu_iowait_pct"), percent),
			verdictCell(p.Telemetry), shareCell(p.Telemetry, true)})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// fioTimelines are fio's per-second logs over the run, points shaded.
func fioTimelines(r *runView, points []results.Step, id func(string) string) *section {
	sec := &section{ID: id("timelines"), Title: "Second by second"}
	name := func(s results.Step) string { return s.Name }
	note := "fio's per-second logs; each point is shaded (its warm-up hatched). A dip inside a point is the device, not the tool."
	for _, c := range []*chart{
		r.timelineChart(id("iops-timeline"), "IOPS per second", note, points, figureAxis(results.FigureIOPS),
			[]tlSpec{{name: "IOPS", column: "fio_iops", color: 0}, {name: "read IOPS", column: "fio_read_iops", color: 2}, {name: "write IOPS", column: "fio_write_iops", color: 1}}, name),
		r.timelineChart(id("mbs-timeline"), "MB/s per second", "", points, axis{Label: "throughput", Unit: "MB/s", Zero: true},
			[]tlSpec{{name: "MB/s", column: "fio_mb_s", color: 4}}, name),
		r.timelineChart(id("latency-timeline"), latencyTitle(r), latencyNote(r), points, axis{Label: "latency", Unit: "ms", Zero: true},
			[]tlSpec{{name: "mean", column: "fio_lat_mean_us", color: 3, factor: 0.001},
				{name: "read mean", column: "fio_read_lat_mean_us", color: 2, factor: 0.001}, {name: "write mean", column: "fio_write_lat_mean_us", color: 1, factor: 0.001},
				{name: "p99", column: "fio_lat_p99_us", color: 3, dash: dashed, factor: 0.001},
				{name: "read p99", column: "fio_read_lat_p99_us", color: 2, dash: dashed, factor: 0.001},
				{name: "write p99", column: "fio_write_lat_p99_us", color: 1, dash: dashed, factor: 0.001}}, name),
	} {
		if c.ID == id("latency-timeline") && r.Series.Column("fio_lat_p99_us") >= 0 {
			autoLog(c)
		}
		if c.hasData() {
			sec.add(c)
		}
	}
	return sec
}

// latencyTitle and latencyNote name the per-second latency chart: the mean
// alone for runs recorded before dbio kept fio's per-second histograms,
// the mean and the p99 drawn from them since.
func latencyTitle(r *runView) string {
	if r.Series.Column("fio_lat_p99_us") < 0 {
		return "Mean completion latency per second"
	}
	return "Completion latency per second"
}

func latencyNote(r *runView) string {
	if r.Series.Column("fio_lat_p99_us") < 0 {
		return ""
	}
	return "Each second's mean completion latency (solid) and 99th percentile (dashed), the p99 of every I/O that completed in that second, read from fio's per-second latency histograms with fio's own percentile rule (log scale where they spread over more than a factor of 30)."
}

// fioBest are the findings of a run without a profile table: the best
// IOPS and the best MB/s point of each target.
func fioBest(points []results.Step, labels []string) []string {
	var out []string
	for _, b := range analysis.Highest(points) {
		who := ""
		if len(labels) > 1 {
			who = " on " + b.Label
		}
		bi, bm := b.BestIOPS, b.BestMBPerSec
		out = append(out, fmt.Sprintf("Highest IOPS%s: %s IOPS at %s ms mean (%s); highest throughput: %s MB/s at %s ms (%s).", who,
			thousands(bi.IOPS), millis(bi.LatencyUS/1000), bi.Name, thousands(bm.MBPerSec), millis(bm.LatencyUS/1000), bm.Name))
	}
	return out
}

// fleetTable puts every fleet point's fleet row and its hosts' rows side by
// side, all over the point's common window; nil when no point ran on a fleet.
func fleetTable(points []results.Step, id string) *table {
	fleet := false
	for _, p := range points {
		fleet = fleet || (p.Fio != nil && p.Fio.Fleet != nil)
	}
	if !fleet {
		return nil
	}
	t := &table{ID: id, Title: "Fleet and hosts",
		Caption: "Each point ran on every host at once. The fleet's IOPS and MB/s are the sums of the hosts' over the window in which all of them were measuring " +
			"(the whole seconds every host logged); its latency percentiles are those of the hosts' latency bins merged over that window, never an average of the hosts' percentiles. " +
			"Each host's row covers the same window; fio's own IOPS for the host covers its whole run."}
	t.Columns = []column{{Name: "point"}, {Name: "host"}, {Name: "window (s)", Numeric: true}, {Name: "IOPS", Numeric: true}, {Name: "MB/s", Numeric: true}}
	for _, n := range []string{"mean", "p50", "p95", "p99", "p99.9"} {
		t.Columns = append(t.Columns, column{Name: n, Numeric: true, Group: "latency (ms)"})
	}
	t.Columns = append(t.Columns, column{Name: "fio's IOPS, whole run", Numeric: true}, column{Name: "starts apart (ms)", Numeric: true})
	t.Caption += " Starts apart is how far apart the hosts' first logged seconds were."
	row := func(point, host string, seconds int, d *results.FioDirection, own cell) []cell {
		r := []cell{textCell(point), textCell(host), numCell(float64(seconds), thousands)}
		if d == nil {
			r = append(r, textCell("-"), textCell("-"), textCell("-"), textCell("-"), textCell("-"), textCell("-"), textCell("-"))
			return append(r, own)
		}
		r = append(r, numCell(d.IOPS, thousands), numCell(d.MBPerSec(), quantity), numCell(d.Completion.MeanUS/1000, millis))
		for _, p := range []float64{50, 95, 99, 99.9} {
			if v, ok := d.Completion.At(p); ok {
				r = append(r, numCell(v/1000, millis))
			} else {
				r = append(r, textCell("-"))
			}
		}
		return append(r, own)
	}
	var leftOut []string
	for _, p := range points {
		f := p.Fio.Fleet
		if f == nil || !analysis.Completed(p) {
			continue
		}
		fleetRow := append(row(p.Name, "fleet", f.Seconds, p.Fio.Total, textCell("")), numCell(float64(f.StartSpreadMS), thousands))
		for i := range fleetRow {
			fleetRow[i].Class = "key"
		}
		t.Rows = append(t.Rows, fleetRow)
		for _, h := range f.Hosts {
			t.Rows = append(t.Rows, append(row("", h.Host, f.Seconds, h.Total, numCell(h.FioIOPS, thousands)), textCell("")))
		}
		for _, l := range f.LeftOut {
			if !slices.Contains(leftOut, l) {
				leftOut = append(leftOut, l)
			}
		}
	}
	if len(leftOut) > 0 {
		t.Caption += " Left out of the fleet's figures (failed hosts): " + strings.Join(leftOut, "; ") + "."
	}
	return t
}
