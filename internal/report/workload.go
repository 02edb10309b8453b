package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// The section of a transaction workload (TPC-C and the like): figures per
// virtual-user step, what the machine did during each step, the bottleneck,
// and the per-second timelines.

// latencyMS reads a total latency statistic in ms, NaN without transactions.
func latencyMS(s results.Step, pick func(l analysis.Latencies) float64) float64 {
	l, ok := analysis.TotalLatency(s)
	if !ok {
		return math.NaN()
	}
	return pick(l)
}

// percentiles are the latency lines every workload chart shows.
func percentiles() []struct {
	name string
	pick func(analysis.Latencies) float64
	dash int
} {
	return []struct {
		name string
		pick func(analysis.Latencies) float64
		dash int
	}{
		{"p50", func(l analysis.Latencies) float64 { return l.P50 }, solid},
		{"p95", func(l analysis.Latencies) float64 { return l.P95 }, solid},
		{"p99", func(l analysis.Latencies) float64 { return l.P99 }, solid},
		{"p99.9", func(l analysis.Latencies) float64 { return l.P999 }, dashed},
	}
}

// usersLabel names a step for the shading of a timeline.
func usersLabel(s results.Step) string {
	switch {
	case s.Users > 0 && s.Terminals():
		return plural(s.Users, "terminal", "terminals")
	case s.Users > 0:
		return plural(s.Users, "user", "users")
	}
	return s.Name
}

// lineSpec draws one line of a users chart.
type lineSpec struct {
	name  string
	value func(results.Step) float64
	color int
	dash  int
	// unstacked keeps the line out of a stacked chart's pile.
	unstacked bool
}

func usersAxis() axis { return axis{Label: "virtual users", Integer: true} }

// usersChart plots one value per step against the step's users.
func usersChart(id, title, note string, steps []results.Step, y axis, lines []lineSpec) *chart {
	key := keyOf(steps)
	c := &chart{ID: id, Title: strings.Replace(title, " vs virtual users", key.vs, 1), Note: note, X: key.axis, Y: y}
	for _, l := range lines {
		s := series{Name: l.name, Color: l.color, Dash: l.dash, Unstacked: l.unstacked}
		for _, st := range steps {
			s.X = append(s.X, key.value(st))
			s.Y = append(s.Y, l.value(st))
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// autoLog switches a latency axis to log scale when its values spread over
// more than a factor of 30, where a linear axis flattens the low end.
func autoLog(c *chart) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, v := range s.Y {
			if v > 0 && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi/lo > 30 {
		c.Y.Log, c.Y.Zero = true, false
	}
}

// tlSpec draws one column of series.csv in a timeline.
type tlSpec struct {
	name   string
	column string
	color  int
	dash   int
	// factor converts the column's unit to the axis's (µs → ms).
	factor float64
}

// timelineChart plots per-second columns over the run's elapsed time, with
// the steps shaded. Runs longer than 20 minutes are plotted in minutes.
func (r *runView) timelineChart(id, title, note string, steps []results.Step, y axis, lines []tlSpec, label func(results.Step) string) *chart {
	var cols []string
	for _, l := range lines {
		cols = append(cols, l.column)
	}
	tl := r.timeline(steps, cols)
	c := &chart{ID: id, Title: title, Note: note, Y: y}
	scale, unit := 1.0, "s"
	if n := len(tl.X); n > 0 && tl.X[n-1]-tl.X[0] > 1200 {
		scale, unit = 60, "min"
	}
	c.X = axis{Label: "time since the run started", Unit: unit, Tight: true}
	xs := make([]float64, len(tl.X))
	for i, x := range tl.X {
		xs[i] = x / scale
	}
	for _, l := range lines {
		if !tl.has(l.column) {
			continue
		}
		s := series{Name: l.name, X: xs, Color: l.color, Dash: l.dash}
		f := l.factor
		if f == 0 {
			f = 1
		}
		for _, v := range tl.Values[l.column] {
			s.Y = append(s.Y, v*f)
		}
		c.Series = append(c.Series, s)
	}
	c.Bands = r.stepBands(steps, label, scale)
	c.Marks = r.steadyMarks(steps, scale)
	return c
}

// steadyMarks point at the second each step's throughput became steady,
// where its ramp-up ended and its measurement began.
func (r *runView) steadyMarks(steps []results.Step, scale float64) []mark {
	var out []mark
	for _, s := range steps {
		w := s.Warmup
		if w == nil || !w.Reached || s.Started.IsZero() {
			continue
		}
		start, _, _ := r.seconds(s)
		out = append(out, mark{X: (start + w.AtS) / scale, Label: "steady",
			Title: fmt.Sprintf("%s: steady after %s s (%s over %s s)", s.Name, fixed(w.AtS, 0), w.Criterion, fixed(w.WindowS, 0))})
	}
	return out
}

// warmupFinding says how the ramp-ups that were to end at steady state
// ended: in how many steps, after how long, and which steps were measured
// without it. Empty when the ramp-ups were of fixed length.
func warmupFinding(title string, steps []results.Step) string {
	w, ok := analysis.SteadyWarmups(steps)
	if !ok {
		return ""
	}
	how := fmt.Sprintf("%s's ramp-ups were to end once throughput was steady (%s over %s s)", title, w.Criterion, fixed(w.WindowS, 0))
	if len(w.Steps) == 1 {
		how = fmt.Sprintf("%s's ramp-up was to end once throughput was steady (%s over %s s)", title, w.Criterion, fixed(w.WindowS, 0))
	}
	var got string
	switch {
	case len(w.Steps) == 1 && w.Reached == 1:
		got = fmt.Sprintf("it did, after %s s", fixed(w.Shortest, 0))
	case len(w.Steps) == 1:
		got = "it never was"
	case w.Reached == 0:
		got = "no step got there"
	case w.Reached == len(w.Steps):
		got = "every step got there, after " + secondsRange(w.Shortest, w.Longest)
	default:
		got = fmt.Sprintf("%d of %d steps got there, after %s", w.Reached, len(w.Steps), secondsRange(w.Shortest, w.Longest))
	}
	out := how + ": " + got + "."
	if n := len(w.NotReached); n > 0 {
		var who []string
		for _, s := range w.NotReached {
			who = append(who, usersLabel(s))
		}
		subject, its := "The step at "+who[0]+" was", "its"
		if n > 1 {
			subject, its = "The steps at "+strings.Join(who, ", ")+" were", "their"
		}
		out += fmt.Sprintf(" %s measured after the longest ramp-up (%s s) without being steady: %s figures may still include the warm-up's drift.",
			subject, fixed(w.NotReached[0].Warmup.LimitS, 0), its)
	}
	return out
}

// secondsRange writes "12 to 41 s", or "3 s" when both ends read the same.
func secondsRange(from, to float64) string {
	if a, b := fixed(from, 0), fixed(to, 0); a != b {
		return a + " to " + b + " s"
	}
	return fixed(from, 0) + " s"
}

// warmupTable shows each step's ramp-up until steady state: how it ended,
// and the window the criterion judged last.
func warmupTable(steps []results.Step, id string) *table {
	w, ok := analysis.SteadyWarmups(steps)
	if !ok {
		return nil
	}
	t := &table{ID: id, Title: "Ramp-up until steady state",
		Caption: fmt.Sprintf("Each ramp-up ended once per-second throughput held %s over a %s s window (fio's steady-state test), or at its longest; the figure is what the criterion compared with its limit, for the steady window or the last one judged.",
			w.Criterion, fixed(w.WindowS, 0))}
	t.Columns = []column{{Name: "users", Numeric: true}, {Name: "outcome"}, {Name: "ramp-up (s)", Numeric: true},
		{Name: "longest (s)", Numeric: true}, {Name: "windows judged", Numeric: true}, {Name: "window mean", Numeric: true}, {Name: "figure", Numeric: true}}
	for _, s := range w.Steps {
		su := s.Warmup
		outcome := cell{Text: "steady", Raw: "steady", Class: "better"}
		if !su.Reached {
			outcome = cell{Text: "not steady", Raw: "not steady", Class: "worse"}
		}
		figure := cell{Text: "-", Raw: ""}
		if su.Figure != nil {
			figure = numCell(*su.Figure, func(v float64) string { return fixed(v, 2) })
		}
		t.Rows = append(t.Rows, []cell{numCell(float64(s.Users), thousands), outcome, numCell(s.RampUpS, func(v float64) string { return fixed(v, 0) }),
			numCell(su.LimitS, func(v float64) string { return fixed(v, 0) }), numCell(float64(su.Windows), thousands),
			numCell(su.Mean, quantity), figure})
	}
	return t
}

func percentAxis(label string) axis {
	return axis{Label: label, Unit: "%", Fixed: true, Min: 0, Max: 100}
}

// workloadSection builds the section of one workload's steps and returns
// the findings for the summary.
func workloadSection(r *runView, w analysis.WorkloadSteps, prefix string) (*section, []string) {
	title := r.title(w.Kind)
	sec := &section{ID: prefix + w.Kind, Title: title}
	steps := w.Steps
	id := func(s string) string { return prefix + w.Kind + "-" + s }
	tput := analysis.Throughput(steps)
	findings := workloadFindings(r, title, steps, tput)
	paced, search := analysis.Paced(steps), r.Run.Goal
	if search != nil {
		findings = append([]string{analysis.GoalAnswer(search)}, findings...)
	}
	findings = append(findings, analysis.PacingFindings(steps)...)

	// Throughput and latency per step.
	t := &table{ID: id("steps"), Title: title + " per step",
		Caption: "Figures over each step's measured time (ramp-up excluded). Latency is per transaction, all types merged, in ms."}
	latencyGroup := "latency (ms)"
	if paced {
		t.Caption += " The steps ran open loop: each user sent its transactions at the intended starts of a schedule. " + analysis.CorrectedNote
		latencyGroup = groupService
	}
	t.Columns = []column{{Name: "users", Numeric: true}}
	for _, f := range tput {
		t.Columns = append(t.Columns, column{Name: f.Title, Numeric: true, Group: "throughput"})
	}
	hasPerUser := false
	for _, s := range steps {
		if _, ok := s.Figure(results.FigureTPMPerUser); ok {
			hasPerUser = true
		}
	}
	if hasPerUser {
		t.Columns = append(t.Columns, column{Name: results.FigureTPMPerUser.Def().Title, Numeric: true, Group: "throughput"})
	}
	// The server's own count, which HammerDB reports as TPM.
	hasEngineTPM := slices.ContainsFunc(steps, func(s results.Step) bool {
		_, ok := s.Figure(results.FigureEngineTPM)
		return ok
	})
	if hasEngineTPM {
		t.Columns = append(t.Columns, column{Name: results.FigureEngineTPM.Def().Title, Numeric: true, Group: "throughput"})
		t.Caption += " Engine TPM is the transactions the server counted as committed or rolled back per minute (HammerDB's TPM); TPM is those dbio's users committed."
	}
	t.Columns = append(t.Columns, column{Name: results.FigureTPS.Def().Title, Numeric: true, Group: "throughput"})
	if paced {
		t.Columns = append(t.Columns, pacedColumns()...)
	}
	for _, n := range []string{"mean", "p50", "p95", "p99", "p99.9", "max"} {
		t.Columns = append(t.Columns, column{Name: n, Numeric: true, Group: latencyGroup})
	}
	t.Columns = append(t.Columns, column{Name: "committed", Numeric: true, Group: "transactions"},
		column{Name: "rolled back", Numeric: true, Group: "transactions"}, column{Name: "errors", Numeric: true, Group: "transactions"},
		column{Name: "measured (s)", Numeric: true}, column{Name: "status"})
	column := func(value func(results.Step) float64) func(float64) string {
		var vs []float64
		for _, s := range steps {
			vs = append(vs, value(s))
		}
		return throughputFormat(vs)
	}
	tputFormat := make([]func(float64) string, len(tput))
	for i, f := range tput {
		tputFormat[i] = column(func(s results.Step) float64 { return analysis.Value(s, f.Name) })
	}
	perUserFormat := column(func(s results.Step) float64 { return analysis.Value(s, results.FigureTPMPerUser) })
	tpsFormat := column(analysis.TPS)
	engineTPMFormat := column(func(s results.Step) float64 { return analysis.Value(s, results.FigureEngineTPM) })
	for _, s := range steps {
		row := []cell{numCell(float64(s.Users), thousands)}
		for i, f := range tput {
			row = append(row, numCell(analysis.Value(s, f.Name), tputFormat[i]))
		}
		if hasPerUser {
			row = append(row, numCell(analysis.Value(s, results.FigureTPMPerUser), perUserFormat))
		}
		if hasEngineTPM {
			row = append(row, numCell(analysis.Value(s, results.FigureEngineTPM), engineTPMFormat))
		}
		row = append(row, numCell(analysis.TPS(s), tpsFormat))
		if paced {
			row = append(row, pacedCells(s)...)
		}
		for _, p := range []func(analysis.Latencies) float64{
			func(l analysis.Latencies) float64 { return l.Mean }, func(l analysis.Latencies) float64 { return l.P50 },
			func(l analysis.Latencies) float64 { return l.P95 }, func(l analysis.Latencies) float64 { return l.P99 },
			func(l analysis.Latencies) float64 { return l.P999 }, func(l analysis.Latencies) float64 { return l.Max }} {
			row = append(row, numCell(latencyMS(s, p), millis))
		}
		var committed, rolled, errs float64
		if s.Total != nil {
			committed, rolled, errs = float64(s.Total.Committed), float64(s.Total.RolledBack), float64(s.Total.Errors)
		}
		errCell := numCell(errs, thousands)
		if errs > 0 {
			errCell.Class = "worse"
		}
		row = append(row, numCell(committed, thousands), numCell(rolled, thousands), errCell,
			numCell(s.MeasureS, func(v float64) string { return fixed(v, 1) }), statusCell(string(s.Status)))
		t.Rows = append(t.Rows, row)
	}
	sec.add(t)
	if wt := warmupTable(steps, id("warmup")); wt != nil {
		sec.add(wt)
	}
	if pt := precisionTable(steps, id("precision")); pt != nil {
		sec.add(pt)
	}

	var tlines []lineSpec
	for i, f := range tput {
		f := f
		tlines = append(tlines, lineSpec{name: f.Title, value: func(s results.Step) float64 { return analysis.Value(s, f.Name) }, color: i})
	}
	unit := tput[0].Unit
	if len(tput) > 1 {
		unit = "per minute"
	}
	names := make([]string, len(tput))
	for i, f := range tput {
		names[i] = f.Title
	}
	if search != nil {
		// Every probe ran the same users: the curve is against the rate.
		sec.Subs = append(sec.Subs, goalSection(r, steps, id))
	} else {
		sec.add(usersChart(id("throughput-vs-users"), strings.Join(names, " and ")+" vs virtual users",
			"Throughput should grow with users until something saturates; where the line flattens, read the bottleneck table.",
			steps, axis{Label: "throughput", Unit: unit, Zero: true}, tlines))
	}
	if hasPerUser && search == nil {
		perUser := results.FigureTPMPerUser.Def()
		sec.add(usersChart(id("tpm-per-user"), perUser.Title,
			"What each added user gets: a falling line means users wait for each other or for a saturated resource.",
			steps, figureAxis(perUser.Name),
			[]lineSpec{{name: perUser.Title, value: func(s results.Step) float64 { return analysis.Value(s, perUser.Name) }, color: 4}}))
	}
	var llines []lineSpec
	for i, p := range percentiles() {
		p := p
		llines = append(llines, lineSpec{name: p.name, value: func(s results.Step) float64 { return latencyMS(s, p.pick) }, color: i, dash: p.dash})
	}
	if search == nil {
		lc := usersChart(id("latency-vs-users"), "Transaction latency percentiles vs virtual users", "All transaction types merged, measured by dbio around each transaction.",
			steps, axis{Label: "latency", Unit: "ms", Zero: true}, llines)
		autoLog(lc)
		sec.add(lc)
		if paced {
			sec.add(correctedChart(id("corrected-vs-users"), steps))
		}
	}

	for _, c := range spectrumChart(r, steps, id("spectrum"), "transaction", "all types") {
		c.Note += " Service time, from each transaction's actual start."
		sec.add(c)
	}
	if sys := systemSection(r, steps, id); !sys.empty() {
		sec.Subs = append(sec.Subs, sys)
	}
	if tx := transactionTable(steps, id("transactions"), paced); tx != nil {
		sub := sec.sub(id("transactions-section"), "Per transaction type")
		if c := transactionLatencyChart(steps, id("transactions-p99")); c != nil {
			sub.add(c)
		}
		sub.add(tx)
	}
	if tls := workloadTimelines(r, steps, tput, id); !tls.empty() {
		sec.Subs = append(sec.Subs, tls)
	}
	return sec, findings
}

func statusCell(status string) cell {
	c := textCell(status)
	if status != "completed" {
		c.Class = "worse"
	}
	return c
}

// workloadFindings are the sentences a reviewer quotes: the peak, how
// throughput scaled, the bottleneck at the heaviest step and the load
// generator's share of the CPU.
func workloadFindings(r *runView, title string, steps []results.Step, tput []results.FigureDef) []string {
	if len(steps) == 0 {
		return nil
	}
	var out []string
	key := keyOf(steps)
	at := func(s results.Step) string {
		if key.column == "users" {
			return plural(s.Users, "user", "users")
		}
		return quantity(key.value(s)) + " tx/s offered"
	}
	peak := steps[analysis.Peak(steps, tput[0].Name)]
	var parts []string
	for _, f := range tput {
		parts = append(parts, thousands(analysis.Value(peak, f.Name))+" "+f.Title)
	}
	p99 := latencyMS(peak, func(l analysis.Latencies) float64 { return l.P99 })
	latency := fmt.Sprintf("p99 latency %s ms", millis(p99))
	if c, ok := analysis.CorrectedLatency(peak); ok {
		latency = fmt.Sprintf("p99 latency %s ms from the intended start, %s ms service time", millis(c.P99), millis(p99))
	}
	out = append(out, fmt.Sprintf("%s peak: %s at %s (%s).", title, strings.Join(parts, " / "), at(peak), latency))
	if sc, ok := analysis.PerUserScaling(steps); ok && key.column == "users" {
		out = append(out, fmt.Sprintf("TPM per user went from %s at %s to %s at %s: each user got %s %% of what one user alone did.",
			thousands(sc.From), plural(sc.First.Users, "user", "users"), thousands(sc.To), plural(sc.Last.Users, "user", "users"), percent(sc.Pct)))
	}
	last := steps[len(steps)-1]
	if last.Telemetry != nil && last.Telemetry.Verdict.Text != "" {
		out = append(out, fmt.Sprintf("At %s: %s.", at(last), strings.TrimSuffix(last.Telemetry.Verdict.Text, ".")))
	}
	if f := verdictFinding(steps); f != "" {
		out = append(out, f)
	}
	if i := analysis.HeaviestDriver(steps); i >= 0 {
		h := steps[i]
		out = append(out, fmt.Sprintf("At %s, %s.", at(h), h.Telemetry.Driver.Text))
	}
	if f := warmupFinding(title, steps); f != "" {
		out = append(out, f)
	}
	if f := precisionFinding(title, steps); f != "" {
		out = append(out, f)
	}
	return out
}

// systemSection is what the machine did during each step: CPU, disks,
// pressure, and the processes of dbio and the server.
func systemSection(r *runView, steps []results.Step, id func(string) string) *section {
	sec := &section{ID: id("system"), Title: "CPU and storage during each step"}
	if r.Run.Tenants != nil {
		// The tenants ran on the hosts, each sampled by its own dbio; this
		// machine only coordinated them, so only the hosts' figures are shown.
		if t := tenantHostsTable(steps, id("tenant-hosts")); t != nil {
			sec.add(t)
		} else {
			sec.add(&paragraph{Text: "No telemetry was recorded for these steps.", Class: "note"})
		}
		return sec
	}
	anyTel := false
	for _, s := range steps {
		if s.Telemetry != nil {
			anyTel = true
		}
	}
	if !anyTel {
		sec.add(&paragraph{Text: "No telemetry was recorded for these steps.", Class: "note"})
		return sec
	}
	// Two tables rather than one of twenty-odd columns, which no page
	// holds: the machine's CPU and processes, then each device's I/O.
	key, devs := keyOf(steps), deviceOrder(steps)
	t := &table{ID: id("system-steps"), Title: "CPU and processes per step",
		Caption: "Means over each step's per-second samples (the processes' memory is the step's largest). CPU is in % of the whole machine."}
	t.Columns = []column{{Name: key.column, Numeric: true}}
	for _, n := range []string{"user", "system", "idle", "iowait", "steal"} {
		t.Columns = append(t.Columns, column{Name: n, Numeric: true, Group: "CPU (%)"})
	}
	hasPSI, hasServer := false, false
	for _, s := range steps {
		if !math.IsNaN(s.Telemetry.Mean("psi_io_some_pct")) {
			hasPSI = true
		}
		if s.Telemetry != nil && s.Telemetry.Server != nil {
			hasServer = true
		}
	}
	if hasPSI {
		t.Columns = append(t.Columns, column{Name: "I/O some", Numeric: true, Group: "pressure (%)"},
			column{Name: "I/O full", Numeric: true, Group: "pressure (%)"}, column{Name: "CPU some", Numeric: true, Group: "pressure (%)"})
	}
	t.Columns = append(t.Columns, column{Name: "dbio CPU %", Numeric: true, Group: "processes"}, column{Name: "dbio RSS MB", Numeric: true, Group: "processes"})
	if hasServer {
		t.Columns = append(t.Columns, column{Name: "server CPU %", Numeric: true, Group: "processes"}, column{Name: "server RSS MB", Numeric: true, Group: "processes"})
	}
	for _, s := range steps {
		tel := s.Telemetry
		row := []cell{key.cell(s)}
		for _, n := range []string{"user", "system", "idle", "iowait", "steal"} {
			row = append(row, numCell(tel.Mean("cpu_"+n+"_pct"), percent))
		}
		if hasPSI {
			row = append(row, numCell(tel.Mean("psi_io_some_pct"), percent), numCell(tel.Mean("psi_io_full_pct"), percent), numCell(tel.Mean("psi_cpu_some_pct"), percent))
		}
		row = append(row, numCell(tel.Mean("proc_dbio_cpu_pct"), percent), numCell(tel.Max("proc_dbio_rss_mb"), quantity))
		if hasServer {
			row = append(row, numCell(tel.Mean("proc_server_cpu_pct"), percent), numCell(tel.Max("proc_server_rss_mb"), quantity))
		}
		t.Rows = append(t.Rows, row)
	}
	sec.add(t)
	if len(devs) > 0 {
		d := &table{ID: id("storage-steps"), Title: "Storage per step",
			Caption: "Each device behind the targets, means over each step's per-second samples; p99 is the 99th percentile of the per-second values. Latency is the kernel's await (queue included), in ms."}
		d.Columns = []column{{Name: key.column, Numeric: true}, {Name: "device"}}
		for _, n := range []string{"reads/s", "writes/s", "read MB/s", "write MB/s"} {
			d.Columns = append(d.Columns, column{Name: n, Numeric: true, Group: "throughput"})
		}
		for _, n := range []string{"read", "read p99", "write", "write p99"} {
			d.Columns = append(d.Columns, column{Name: n, Numeric: true, Group: "latency (ms)"})
		}
		d.Columns = append(d.Columns, column{Name: "queue", Numeric: true}, column{Name: "util %", Numeric: true})
		for _, s := range steps {
			tel := s.Telemetry
			for _, dev := range devs {
				p := "disk_" + dev + "_"
				d.Rows = append(d.Rows, []cell{key.cell(s), textCell(dev),
					numCell(tel.Mean(p+"rps"), quantity), numCell(tel.Mean(p+"wps"), quantity),
					numCell(tel.Mean(p+"rmbps"), quantity), numCell(tel.Mean(p+"wmbps"), quantity),
					numCell(tel.Mean(p+"r_await_ms"), millis), numCell(tel.P99(p+"r_await_ms"), millis),
					numCell(tel.Mean(p+"w_await_ms"), millis), numCell(tel.P99(p+"w_await_ms"), millis),
					numCell(tel.Mean(p+"aqu"), quantity), numCell(tel.Mean(p+"util_pct"), percent)})
			}
		}
		sec.add(d)
	}
	hosts, hostWarns := serverHostsTable(r.Run.Hosts, steps, id("server-hosts"))
	if hosts != nil {
		sec.add(hosts)
	}
	// The verdicts first, then the figures that prove them: the
	// database's time by class, whose the CPUs were, the cap's use.
	if ch := dbTimeChart(steps, id("db-time-vs-users")); ch != nil {
		if vl := verdictList(steps); vl != nil {
			sec.add(vl)
		}
		sec.add(ch)
	}
	if t := dbTimeTable(steps, id("db-time")); t != nil {
		sec.add(t)
	}
	if ch := cpuSplitChart(steps, id("cpu-whose-vs-users")); ch != nil {
		sec.add(ch, cpuSplitTable(steps, id("cpu-whose")))
	}
	if t := capTable(steps, analysis.RunCaps(r.Run), id("storage-cap")); t != nil {
		sec.add(t)
	}

	cpu := usersChart(id("cpu-vs-users"), "CPU vs virtual users",
		"The machine's CPU time by state, stacked to 100 %: a saturated CPU is all user and system, an I/O-bound database shows iowait, a virtual machine short of CPU shows steal. The dashed line is dbio's own share (the load generator).",
		steps, percentAxis("share of the machine's CPU"), cpuStates(func(state string) lineSpec {
			return lineSpec{value: func(s results.Step) float64 { return s.Telemetry.Mean("cpu_" + state + "_pct") }}
		}))
	cpu.Stacked = true
	cpu.Series = append(cpu.Series, series{Name: "dbio (load generator)", Color: 7, Dash: dashed, Unstacked: true})
	for _, st := range steps {
		last := &cpu.Series[len(cpu.Series)-1]
		last.X, last.Y = append(last.X, key.value(st)), append(last.Y, st.Telemetry.Mean("proc_dbio_cpu_pct"))
	}
	sec.add(cpu)
	if len(devs) > 0 {
		// Each device's writes take an odd color, its reads the even one before.
		perDevice := func(each func(who, prefix string, write, read int) []lineSpec) []lineSpec {
			var out []lineSpec
			for i, d := range devs {
				who := ""
				if len(devs) > 1 {
					who = d + " "
				}
				out = append(out, each(who, "disk_"+d+"_", 2*i+1, 2*i)...)
			}
			return out
		}
		lines := perDevice(func(who, p string, write, read int) []lineSpec {
			return []lineSpec{
				{name: who + "write mean", value: func(s results.Step) float64 { return s.Telemetry.Mean(p + "w_await_ms") }, color: write},
				{name: who + "write p99", value: func(s results.Step) float64 { return s.Telemetry.P99(p + "w_await_ms") }, color: write, dash: dashed},
				{name: who + "read mean", value: func(s results.Step) float64 { return s.Telemetry.Mean(p + "r_await_ms") }, color: read},
				{name: who + "read p99", value: func(s results.Step) float64 { return s.Telemetry.P99(p + "r_await_ms") }, color: read, dash: dashed}}
		})
		dc := usersChart(id("disk-latency-vs-users"), "Disk latency (mean and p99) vs virtual users",
			"The kernel's await per I/O on "+strings.Join(devs, ", ")+": mean over the step and 99th percentile of the per-second means.",
			steps, axis{Label: "disk latency", Unit: "ms", Zero: true}, lines)
		autoLog(dc)
		sec.add(dc)
		iops := perDevice(func(who, p string, write, read int) []lineSpec {
			return []lineSpec{
				{name: who + "writes/s", value: func(s results.Step) float64 { return s.Telemetry.Mean(p + "wps") }, color: write},
				{name: who + "reads/s", value: func(s results.Step) float64 { return s.Telemetry.Mean(p + "rps") }, color: read}}
		})
		sec.add(usersChart(id("disk-iops-vs-users"), "Disk IOPS vs virtual users", "Mean I/Os completed per second on each device.",
			steps, axis{Label: "IOPS", Unit: "I/O per s", Zero: true}, iops))
	} else {
		text := "No block device was watched (the target has none, e.g. tmpfs, or it could not be resolved, or the server was reached by its DSN and keeps its data where dbio does not look): disk figures are not available."
		if slices.ContainsFunc(steps, func(s results.Step) bool { return s.Telemetry != nil && len(s.Telemetry.Hosts) > 0 }) {
			text = "No block device of this machine was watched: the database's data is on other hosts, whose disks are in the table of CPU and disks per host."
		}
		sec.add(&paragraph{Text: text, Class: "note"})
	}

	if dl := dbLatencyTable(steps, id("db-latency")); dl != nil {
		sec.add(dl)
	}
	if sm := serverMemoryTable(steps, id("server-memory")); sm != nil {
		sec.add(sm)
	}
	if ec := engineCounters(steps, id("engine-counters")); ec != nil {
		sec.add(ec)
	}

	v := &table{ID: id("bottleneck"), Title: "Bottleneck and load generator per step", Caption: verdictCaption}
	v.Columns = []column{{Name: key.column, Numeric: true}, {Name: "verdict", Wrap: true}, {Name: "load generator", Wrap: true}}
	if hasServer {
		v.Columns = append(v.Columns, column{Name: "database server", Wrap: true})
	}
	for _, s := range steps {
		row := []cell{key.cell(s), verdictCell(s.Telemetry)}
		row = append(row, shareCell(s.Telemetry, true))
		if hasServer {
			row = append(row, shareCell(s.Telemetry, false))
		}
		v.Rows = append(v.Rows, row)
	}
	sec.add(v)
	var warns []string
	for _, s := range steps {
		if s.Telemetry == nil {
			continue
		}
		for _, w := range s.Telemetry.Warnings {
			warns = append(warns, s.Name+": "+w)
		}
	}
	warns = append(warns, hostWarns...)
	if len(warns) > 0 {
		sec.add(&paragraph{Text: "Telemetry warnings:", Class: "note"}, &bullets{Items: warns})
	}
	return sec
}

// cpuStates are the CPU states a stacked CPU chart piles, in the order of
// the pile (busy at the bottom, idle on top) with their colors; each takes
// its value from line(state).
func cpuStates(line func(state string) lineSpec) []lineSpec {
	var out []lineSpec
	for _, st := range []struct {
		state string
		color int
	}{{"user", 0}, {"system", 3}, {"iowait", 1}, {"steal", 4}, {"idle", 2}} {
		l := line(st.state)
		l.name, l.color = st.state, st.color
		out = append(out, l)
	}
	return out
}

// engineCounters tables the engine's own counters (PostgreSQL's buffer hits
// and reads, checkpoints, WAL bytes; InnoDB's reads and log writes) as
// per-second means, with the buffer hit ratio where both halves are known.
func engineCounters(steps []results.Step, id string) *table {
	seen := map[string]bool{}
	var names []string
	for _, s := range steps {
		if s.Telemetry == nil {
			continue
		}
		for _, n := range sortedKeys(s.Telemetry.Metrics) {
			// The database's own I/O waits have a table of their own (dbLatencyTable).
			if strings.HasPrefix(n, "engine_") && strings.HasSuffix(n, "_per_s") && !strings.HasPrefix(n, "engine_db_") && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	t := &table{ID: id, Title: "Engine counters per step",
		Caption: "The database engine's own counters, as per-second means over each step. The hit ratio is buffer hits over hits and reads."}
	key := keyOf(steps)
	t.Columns = []column{{Name: key.column, Numeric: true}}
	for _, n := range names {
		t.Columns = append(t.Columns, column{Name: strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(n, "engine_"), "_per_s"), "_", " ") + "/s", Numeric: true})
	}
	hitRatio := seen["engine_blks_hit_per_s"] && seen["engine_blks_read_per_s"]
	if hitRatio {
		t.Columns = append(t.Columns, column{Name: "hit ratio %", Numeric: true})
	}
	for _, s := range steps {
		row := []cell{key.cell(s)}
		for _, n := range names {
			row = append(row, numCell(s.Telemetry.Mean(n), quantity))
		}
		if hitRatio {
			row = append(row, numCell(analysis.HitRatio(s.Telemetry), func(v float64) string { return fixed(v, 2) }))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func verdictCell(t *results.TelemetrySummary) cell {
	if t == nil || t.Verdict.Text == "" {
		return textCell("no telemetry")
	}
	c := textCell(t.Verdict.Text)
	c.Class = "verdict-" + string(t.Verdict.Kind)
	return c
}

func shareCell(t *results.TelemetrySummary, driver bool) cell {
	if t == nil {
		return textCell("-")
	}
	sh := t.Server
	if driver {
		sh = t.Driver
	}
	if sh == nil {
		return textCell("-")
	}
	return cell{Text: sh.Text, Raw: raw(sh.CPUPct)}
}

// transactionLatencyChart plots each transaction type's p99 against the
// users: the merged percentiles hide which transaction a stall hurts (a
// Delivery or a Stock-Level can be ten times a Payment).
func transactionLatencyChart(steps []results.Step, id string) *chart {
	var types []string
	seen := map[string]bool{}
	for _, s := range steps {
		for _, tx := range s.Transactions {
			if !seen[tx.Name] {
				seen[tx.Name] = true
				types = append(types, tx.Name)
			}
		}
	}
	if len(types) < 2 {
		return nil
	}
	var lines []lineSpec
	for i, name := range types {
		lines = append(lines, lineSpec{name: name, color: i, value: func(s results.Step) float64 {
			for _, tx := range s.Transactions {
				if tx.Name == name && tx.Committed+tx.RolledBack > 0 {
					return float64(tx.Latency.P99US) / 1000
				}
			}
			return math.NaN()
		}})
	}
	c := usersChart(id, "p99 latency per transaction type vs virtual users", "The 99th percentile of each transaction type, measured by dbio around each transaction; the table below has every percentile.",
		steps, axis{Label: "p99 latency", Unit: "ms", Zero: true}, lines)
	autoLog(c)
	return c
}

// transactionTable lists each transaction type of each step; open-loop
// steps add each type's late starts and latency from the intended start.
func transactionTable(steps []results.Step, id string, paced bool) *table {
	t := &table{ID: id, Title: "Transactions per type and step", Collapsed: true,
		Caption: "Latency in ms per transaction type; per minute counts committed transactions."}
	key := keyOf(steps)
	t.Columns = []column{{Name: key.column, Numeric: true}, {Name: "transaction"}, {Name: "committed", Numeric: true},
		{Name: "rolled back", Numeric: true}, {Name: "errors", Numeric: true}, {Name: "retries", Numeric: true}, {Name: "per minute", Numeric: true},
		{Name: "mean", Numeric: true, Group: "latency (ms)"}, {Name: "p50", Numeric: true, Group: "latency (ms)"},
		{Name: "p95", Numeric: true, Group: "latency (ms)"}, {Name: "p99", Numeric: true, Group: "latency (ms)"},
		{Name: "p99.9", Numeric: true, Group: "latency (ms)"}, {Name: "max", Numeric: true, Group: "latency (ms)"}}
	latCells := func(mean float64, p50, p95, p99, p999, max int64) []cell {
		return []cell{numCell(mean/1000, millis), numCell(float64(p50)/1000, millis), numCell(float64(p95)/1000, millis),
			numCell(float64(p99)/1000, millis), numCell(float64(p999)/1000, millis), numCell(float64(max)/1000, millis)}
	}
	if paced {
		t.Caption = "Latency in ms per transaction type, from the intended start and as service time (from the actual start); per minute counts committed transactions; late counts starts beyond the run's tolerance."
		for i := 7; i < len(t.Columns); i++ {
			t.Columns[i].Group = groupService
		}
		t.Columns = append(t.Columns, column{Name: "late", Numeric: true})
		for _, p := range latencyPicks {
			t.Columns = append(t.Columns, column{Name: p.name, Numeric: true, Group: groupCorrected})
		}
	}
	for _, s := range steps {
		for _, tx := range s.Transactions {
			row := []cell{key.cell(s), textCell(tx.Name),
				numCell(float64(tx.Committed), thousands), numCell(float64(tx.RolledBack), thousands),
				numCell(float64(tx.Errors), thousands), numCell(float64(tx.Retries), thousands), numCell(tx.PerMinute, quantity)}
			l := tx.Latency
			row = append(row, latCells(l.MeanUS, l.P50US, l.P95US, l.P99US, l.P999US, l.MaxUS)...)
			if paced {
				row = append(row, numCell(float64(tx.Late), thousands))
				if c := tx.Corrected; c != nil {
					row = append(row, latCells(c.MeanUS, c.P50US, c.P95US, c.P99US, c.P999US, c.MaxUS)...)
				} else {
					for range latencyPicks {
						row = append(row, numCell(math.NaN(), millis))
					}
				}
			}
			t.Rows = append(t.Rows, row)
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// workloadTimelines are the per-second charts of the workload's steps.
func workloadTimelines(r *runView, steps []results.Step, tput []results.FigureDef, id func(string) string) *section {
	sec := &section{ID: id("timelines"), Title: "Second by second"}
	var lines []tlSpec
	for i, f := range tput {
		lines = append(lines, tlSpec{name: f.Title, column: string(f.Name), color: i})
	}
	unit := tput[0].Unit
	if len(tput) > 1 {
		unit = "per minute"
	}
	note := "Each point is one second (rate scaled to a minute); measured steps are shaded, ramp-ups hatched."
	for _, c := range []*chart{
		r.timelineChart(id("throughput-timeline"), "Throughput per second", note, steps, axis{Label: "throughput", Unit: unit, Zero: true}, lines, usersLabel),
		r.timelineChart(id("latency-timeline"), "Transaction latency per second", "Percentiles of the transactions completed in each second (log scale where they spread over more than a factor of 30, as in the per-step chart, so one spike does not flatten the rest).", steps,
			axis{Label: "latency", Unit: "ms", Zero: true}, []tlSpec{{name: "p50", column: "latency_p50_ms", color: 0}, {name: "p99", column: "latency_p99_ms", color: 2},
				// Open-loop steps only: the same from the intended start.
				{name: "p99 from intended start", column: results.SeriesLatencyP99Corrected, color: 3, dash: dashed}}, usersLabel),
		r.pacedTimeline(id("rate-timeline"), steps),
	} {
		if c.ID == id("latency-timeline") {
			autoLog(c)
		}
		if c.hasData() {
			sec.add(c)
		}
	}
	devs := deviceOrder(steps)
	var iops, lat []tlSpec
	for i, d := range devs {
		p := "disk_" + d + "_"
		who := ""
		if len(devs) > 1 {
			who = d + " "
		}
		iops = append(iops, tlSpec{name: who + "writes/s", column: p + "wps", color: 2*i + 1}, tlSpec{name: who + "reads/s", column: p + "rps", color: 2 * i})
		lat = append(lat, tlSpec{name: who + "write await", column: p + "w_await_ms", color: 2*i + 1}, tlSpec{name: who + "read await", column: p + "r_await_ms", color: 2 * i})
	}
	if len(devs) > 0 {
		for _, c := range []*chart{
			r.timelineChart(id("iops-timeline"), "Disk IOPS per second", "I/Os completed per second on "+strings.Join(devs, ", ")+".", steps,
				axis{Label: "IOPS", Unit: "I/O per s", Zero: true}, iops, usersLabel),
			r.timelineChart(id("disk-latency-timeline"), "Disk latency per second", "Mean await of the I/Os completed in each second (a second without reads has no read value).", steps,
				axis{Label: "disk latency", Unit: "ms", Zero: true}, lat, usersLabel),
		} {
			if c.ID == id("disk-latency-timeline") {
				autoLog(c)
			}
			if c.hasData() {
				sec.add(c)
			}
		}
	}
	// The server's memory next to its I/O: a cap that binds turns into reads.
	for _, c := range []*chart{r.serverMemoryTimeline(steps, id("server-memory-timeline")), r.serverMemoryBindingTimeline(steps, id("server-memory-binding-timeline"))} {
		if c != nil {
			sec.add(c)
		}
	}
	var states []tlSpec
	for _, l := range cpuStates(func(string) lineSpec { return lineSpec{} }) {
		states = append(states, tlSpec{name: l.name, column: "cpu_" + l.name + "_pct", color: l.color})
	}
	cpu := r.timelineChart(id("cpu-timeline"), "CPU per second", "The whole machine's CPU time by state, stacked to 100 %.", steps, percentAxis("CPU"), states, usersLabel)
	cpu.Stacked = true
	if cpu.hasData() {
		sec.add(cpu)
	}
	if c := r.dbTimeTimeline(steps, id("db-time-timeline")); c != nil {
		sec.add(c)
	}
	if c := r.dbLatencyTimeline(steps, id("db-latency-timeline")); c != nil {
		sec.add(c)
	}
	sec.add(r.engineTimelines(steps, id)...)
	return sec
}

// engineTimelines chart the engine's own counters second by second, the
// figures a DBA looks at first beside a latency spike: WAL or redo log
// written, checkpoints, and where reads were served (the engine's cache
// against reads it had to ask of the OS). Only counters the run sampled
// are drawn; counters that stayed at zero get a sentence saying so instead
// of a flat chart.
func (r *runView) engineTimelines(steps []results.Step, id func(string) string) []block {
	sampled := map[string]bool{}
	for _, s := range steps {
		if s.Telemetry == nil {
			continue
		}
		for n := range s.Telemetry.Metrics {
			if strings.HasPrefix(n, "engine_") {
				sampled[n] = true
			}
		}
	}
	var out []block
	for _, g := range []struct {
		id, title, note string
		// none says what a chart of zeros would have shown.
		none  string
		y     axis
		lines []tlSpec
	}{
		{"engine-log-timeline", "Engine log written per second", "Bytes the engine wrote to its write-ahead log (PostgreSQL's WAL, InnoDB's redo log) each second: what every commit costs the storage.",
			"The engine wrote nothing to its log during the steps.",
			axis{Label: "log written", Unit: "MB/s", Zero: true}, []tlSpec{
				{name: "WAL", column: "engine_wal_bytes_per_s", color: 0, factor: 1e-6},
				{name: "redo log", column: "engine_innodb_os_log_written_per_s", color: 0, factor: 1e-6}}},
		{"engine-cache-timeline", "Engine cache per second", "Page reads the engine served from its own cache against those it had to ask of the OS: when the second line rises, the storage is being read.",
			"The engine counted no page reads during the steps.",
			axis{Label: "page reads", Unit: "per s", Zero: true}, []tlSpec{
				{name: "cache hits", column: "engine_cache_hit_reads_per_s", color: 2},
				{name: "reads asked of the OS", column: "engine_cache_miss_reads_per_s", color: 1}}},
		{"engine-sync-timeline", "Checkpoints and fsyncs per second", "PostgreSQL's checkpoints, InnoDB's fsyncs of its data and log files: the moments the engine forces its writes to the device, often the moments latency jumps.",
			"No checkpoint ran and no fsync was counted during the steps: the engine forced none of its writes to the device while they were measured, so no latency jump here comes from one.",
			axis{Label: "per second", Zero: true}, []tlSpec{
				{name: "checkpoints", column: "engine_checkpoints_per_s", color: 3},
				{name: "fsyncs", column: "engine_innodb_data_fsyncs_per_s", color: 4}}},
	} {
		var lines []tlSpec
		for _, l := range g.lines {
			if sampled[l.column] {
				lines = append(lines, l)
			}
		}
		if g.id == "engine-cache-timeline" && len(lines) == 0 && sampled["engine_blks_hit_per_s"] {
			// Runs recorded before the engine-neutral cache counters have
			// PostgreSQL's own.
			lines = []tlSpec{{name: "cache hits", column: "engine_blks_hit_per_s", color: 2}, {name: "reads asked of the OS", column: "engine_blks_read_per_s", color: 1}}
		}
		if len(lines) == 0 {
			continue
		}
		c := r.timelineChart(id(g.id), g.title, g.note, steps, g.y, lines, usersLabel)
		switch {
		case !c.hasData():
		case c.allZero():
			out = append(out, &paragraph{Class: "note", Text: g.none})
		default:
			out = append(out, c)
		}
	}
	return out
}
