package report

import (
	"math"
	"strings"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// The database's account of its time (sessions by class), whose the CPUs
// were, and the storage cap's use: the figures the verdict is drawn from,
// step by step and second by second.

// dbTimeColors are each class's color: CPU blue as the CPU chart's user
// time, syncs red as its iowait, the other storage classes warm, locks
// purple, other waits grey.
var dbTimeColors = map[results.DBTimeClass]int{
	results.DBTimeCPU: 0, results.DBTimeIORead: 9, results.DBTimeIOWrite: 3, results.DBTimeIOSync: 1,
	results.DBTimeLock: 4, results.DBTimeOther: 7,
}

// dbTimeNote says how to read a chart of database time.
const dbTimeNote = "The database's own account of its time, stacked: the mean number of its sessions (and its own writers) in each class, so the top of the pile is the mean active sessions (1 is one session busy the whole time). CPU is active time without a wait (on a CPU, or waiting for one); syncs include a session waiting for another's log flush. See docs/verdict.md for how each engine is read."

// verdictList says each step's verdict, the sentence the charts below
// prove: "4 users: storage-bound on log syncs: …".
func verdictList(steps []results.Step) *bullets {
	var items []string
	for _, s := range steps {
		if s.Telemetry != nil && s.Telemetry.Verdict.Text != "" {
			items = append(items, usersLabel(s)+": "+s.Telemetry.Verdict.Text+".")
		}
	}
	if len(items) == 0 {
		return nil
	}
	return &bullets{Items: items}
}

// dbTimeChart piles each step's database time by class against its users;
// nil when no step has the database's account.
func dbTimeChart(steps []results.Step, id string) *chart {
	if !analysis.DBTimeRecorded(steps) {
		return nil
	}
	var lines []lineSpec
	for _, c := range results.DBTimeClasses() {
		lines = append(lines, lineSpec{name: analysis.DBTimeTitle(c), color: dbTimeColors[c],
			value: func(s results.Step) float64 { return s.Telemetry.Mean(c.Sessions()) }})
	}
	ch := usersChart(id, "Database time by class vs virtual users", dbTimeNote, steps,
		axis{Label: "active sessions", Zero: true}, lines)
	ch.Stacked = true
	return ch
}

// dbTimeTable gives each step's database time: the mean active sessions
// against the sessions the step held, and each class's share.
func dbTimeTable(steps []results.Step, id string) *table {
	if !analysis.DBTimeRecorded(steps) {
		return nil
	}
	t := &table{ID: id, Title: "Database time by class per step",
		Caption: "The mean active sessions in the database over each step, and each class's share of that time (they add up to 100 %). In the database is the active sessions over the sessions the step held: the rest of their time went to the client (dbio, think time, pacing, the round trips)."}
	key := keyOf(steps)
	t.Columns = []column{{Name: key.column, Numeric: true}, {Name: "active sessions", Numeric: true}, {Name: "in the database %", Numeric: true}}
	for _, c := range results.DBTimeClasses() {
		t.Columns = append(t.Columns, column{Name: analysis.DBTimeTitle(c), Numeric: true, Group: "share of database time (%)"})
	}
	for _, s := range steps {
		a, ok := analysis.DBTimeOf(s.Telemetry)
		row := []cell{key.cell(s), numCell(math.NaN(), quantity), numCell(math.NaN(), percent)}
		if ok {
			inside := math.NaN()
			if l := analysis.LoadOf(s); l.Sessions > 0 {
				inside = 100 * a.Sessions / float64(l.Sessions)
			}
			row = []cell{key.cell(s), numCell(a.Sessions, quantity), numCell(inside, percent)}
		}
		for _, c := range results.DBTimeClasses() {
			v := math.NaN()
			if ok && a.Sessions > 0 {
				if _, has := s.Telemetry.Metrics[c.Sessions()]; has {
					v = a.Share(c)
				}
			}
			row = append(row, numCell(v, percent))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// dbTimeTimeline piles the database time by class second by second.
func (r *runView) dbTimeTimeline(steps []results.Step, id string) *chart {
	if !analysis.DBTimeRecorded(steps) {
		return nil
	}
	var lines []tlSpec
	for _, c := range results.DBTimeClasses() {
		lines = append(lines, tlSpec{name: analysis.DBTimeTitle(c), column: c.Sessions(), color: dbTimeColors[c]})
	}
	ch := r.timelineChart(id, "Database time by class per second", dbTimeNote, steps, axis{Label: "active sessions", Zero: true}, lines, usersLabel)
	ch.Stacked = true
	if !ch.hasData() {
		return nil
	}
	return ch
}

// cpuSplitRecorded says whether any step split its CPU by whose it was.
func cpuSplitRecorded(steps []results.Step) bool {
	for _, s := range steps {
		if s.Telemetry != nil && s.Telemetry.CPU != nil {
			return true
		}
	}
	return false
}

// cpuWhoseParts are the parts of a step's CPU split, in the order of the
// pile (busy at the bottom, idle on top), with their colors.
func cpuWhoseParts() []struct {
	name  string
	color int
	value func(*results.CPUSplit) float64
} {
	return []struct {
		name  string
		color int
		value func(*results.CPUSplit) float64
	}{
		{"the server", 0, func(c *results.CPUSplit) float64 { return c.Server }},
		{"dbio", 5, func(c *results.CPUSplit) float64 { return c.DBIO }},
		{"other processes", 6, func(c *results.CPUSplit) float64 { return c.Other }},
		{"iowait", 1, func(c *results.CPUSplit) float64 { return c.IOWait }},
		{"steal", 4, func(c *results.CPUSplit) float64 { return c.Steal }},
		{"idle", 2, func(c *results.CPUSplit) float64 { return c.Idle }},
	}
}

// cpuSplitChart piles whose the CPUs were at each step; nil when no step
// split them.
func cpuSplitChart(steps []results.Step, id string) *chart {
	if !cpuSplitRecorded(steps) {
		return nil
	}
	var lines []lineSpec
	for _, p := range cpuWhoseParts() {
		lines = append(lines, lineSpec{name: p.name, color: p.color, value: func(s results.Step) float64 {
			if s.Telemetry == nil || s.Telemetry.CPU == nil {
				return math.NaN()
			}
			return p.value(s.Telemetry.CPU)
		}})
	}
	ch := usersChart(id, "Whose CPU vs virtual users",
		"The machine's CPUs by who used them, stacked to 100 %: the database server's processes, dbio (the load generator, and SQLite inside it), every other process, then the time no one ran. A step where other processes took more than a third measured its neighbours as much as the database.",
		steps, percentAxis("share of the machine's CPU"), lines)
	ch.Stacked = true
	return ch
}

// cpuSplitTable gives whose the CPUs were at each step.
func cpuSplitTable(steps []results.Step, id string) *table {
	if !cpuSplitRecorded(steps) {
		return nil
	}
	t := &table{ID: id, Title: "Whose CPU per step",
		Caption: "Means over each step's per-second shares, in % of the whole machine: other processes are every process that is neither dbio nor the database server (the kernel's threads, and an external server's processes, among them)."}
	key := keyOf(steps)
	t.Columns = []column{{Name: key.column, Numeric: true}}
	for _, p := range cpuWhoseParts() {
		t.Columns = append(t.Columns, column{Name: p.name, Numeric: true, Group: "CPU (%)"})
	}
	for _, s := range steps {
		row := []cell{key.cell(s)}
		for _, p := range cpuWhoseParts() {
			v := math.NaN()
			if s.Telemetry != nil && s.Telemetry.CPU != nil {
				v = p.value(s.Telemetry.CPU)
			}
			c := numCell(v, percent)
			if p.name == "other processes" && s.Telemetry != nil && s.Telemetry.CPU != nil && s.Telemetry.CPU.Neighbours() {
				c.Class = "worse"
			}
			row = append(row, c)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// capTable gives the use of each storage cap (--limit) at each step: the
// cap (as the run recorded it, where every target had the same), what the
// group was served, and the share of seconds it bound.
func capTable(steps []results.Step, limits map[results.IOCapKind]float64, id string) *table {
	var kinds []results.IOCapKind
	seen := map[results.IOCapKind]bool{}
	pressure := false
	for _, s := range steps {
		for _, c := range analysis.CapsOf(s.Telemetry) {
			if !seen[c.Kind] {
				seen[c.Kind] = true
				kinds = append(kinds, c.Kind)
			}
		}
		pressure = pressure || !math.IsNaN(s.Telemetry.Mean(results.MetricIOCapPressureSome))
	}
	if len(kinds) == 0 {
		return nil
	}
	t := &table{ID: id, Title: "The storage cap per step",
		Caption: "What the storage class's block-I/O group (--limit) was served against each cap, on the capped device closest to it: the mean served per second, the mean use of the cap, and the share of seconds served at 90 % of the cap or more (the seconds the cap bound: the throttle smooths a held-back group to just under its cap). The cap's queueing shows neither in iowait nor in the device's await."}
	key := keyOf(steps)
	t.Columns = []column{{Name: key.column, Numeric: true}}
	for _, k := range kinds {
		g := capGroup(k)
		t.Columns = append(t.Columns, column{Name: "cap", Numeric: true, Group: g}, column{Name: "served", Numeric: true, Group: g},
			column{Name: "use %", Numeric: true, Group: g}, column{Name: "seconds at cap %", Numeric: true, Group: g})
	}
	if pressure {
		t.Columns = append(t.Columns, column{Name: "some", Numeric: true, Group: "group's I/O pressure (%)"}, column{Name: "full", Numeric: true, Group: "group's I/O pressure (%)"})
	}
	for _, s := range steps {
		row := []cell{key.cell(s)}
		caps := map[results.IOCapKind]analysis.CapUse{}
		for _, c := range analysis.CapsOf(s.Telemetry) {
			caps[c.Kind] = c
		}
		for _, k := range kinds {
			c, ok := caps[k]
			if !ok {
				c = analysis.CapUse{Cap: math.NaN(), Served: math.NaN(), UsedPct: math.NaN(), AtCapPct: math.NaN()}
			}
			if v, ok := limits[k]; ok {
				c.Cap = v
			}
			at := numCell(c.AtCapPct, percent)
			if c.AtCapPct >= 50 {
				at.Class = "worse"
			}
			row = append(row, numCell(c.Cap, quantity), numCell(c.Served, quantity), numCell(c.UsedPct, percent), at)
		}
		if pressure {
			row = append(row, numCell(s.Telemetry.Mean(results.MetricIOCapPressureSome), percent), numCell(s.Telemetry.Mean(results.MetricIOCapPressureFull), percent))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// capGroup names a cap's columns: "write IOPS", "read MB/s".
func capGroup(k results.IOCapKind) string {
	c := analysis.CapUse{Kind: k}
	dir := "read"
	if c.Write() {
		dir = "write"
	}
	if c.Bytes() {
		return dir + " MB/s"
	}
	return dir + " IOPS"
}

// verdictCaption says what a bottleneck table's verdicts are drawn from.
const verdictCaption = "Each verdict is drawn from the database's own account of its time where the engine gave one (for SQLite, which has none, from the block-I/O delay of dbio's threads), else from the OS's figures (CPU, iowait, pressure, devices), which it then says; it quotes the figures that prove it. The shares say whether the load generator itself could have been the limit. See docs/verdict.md."

// verdictFinding says the verdict of every step where they differ:
// "Bottleneck by step: 1 user not saturated; 4 users CPU-bound (the
// server's)." Empty when every step has the same kind, or one step only.
func verdictFinding(steps []results.Step) string {
	var parts []string
	kinds := map[results.VerdictKind]bool{}
	for _, s := range steps {
		if h := verdictHead(s.Telemetry); h != "" {
			parts = append(parts, usersLabel(s)+" "+h)
			kinds[s.Telemetry.Verdict.Kind] = true
		}
	}
	if len(kinds) < 2 {
		return ""
	}
	return "Bottleneck by step: " + strings.Join(parts, "; ") + "."
}
