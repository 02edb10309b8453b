package report

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// capNote is why the server's memory group is shown beside the I/O.
const capNote = "The cap (--server-memory) counts the page cache the server reads through, so once the group is full every page it has not kept is read from the disk again: refaults are pages the group evicted and needed again soon after, the reads the cap costs."

// serverMemoryTable is the server's memory group per step: the cap, how
// full it got and with what, and whether it bound; nil when no step
// sampled a group.
func serverMemoryTable(steps []results.Step, id string) *table {
	if !analysis.ServerMemoryRecorded(steps) {
		return nil
	}
	t := &table{ID: id, Title: "Server memory under its cap, per step",
		Caption: "The server's memory cgroup, sampled every second: the cap, the most it held and its mean, the page cache and the processes' own memory among it (means), in MB; then the rates that show the cap binding (cap hits where the kernel counts them, a dash when it counted none all run: a cgroup v1 group whose cap covers swap too may count none; major faults are those the server's processes waited on the disk for). " + capNote}
	key := keyOf(steps)
	t.Columns = []column{{Name: key.column, Numeric: true},
		{Name: "cap", Numeric: true, Group: "MB"}, {Name: "peak", Numeric: true, Group: "MB"}, {Name: "mean", Numeric: true, Group: "MB"},
		{Name: "page cache", Numeric: true, Group: "MB"}, {Name: "own", Numeric: true, Group: "MB"},
		{Name: "peak % of cap", Numeric: true},
		{Name: "refaults", Numeric: true, Group: "per s"}, {Name: "cap hits", Numeric: true, Group: "per s"}, {Name: "major faults", Numeric: true, Group: "per s"},
		{Name: "pressure %", Numeric: true}, {Name: "cap bound"}}
	// Cap hits that stayed at zero the whole run are shown as unknown: the
	// kernel may keep no count of them for the group.
	hits := false
	for _, s := range steps {
		hits = hits || s.Telemetry.Max(results.MetricMemcgLimitHits) > 0
	}
	for _, s := range steps {
		m, ok := analysis.StepServerMemory(s)
		if !ok {
			continue
		}
		if !hits {
			m.LimitHitsPerS = math.NaN()
		}
		row := []cell{key.cell(s), numCell(m.CapMB, quantity), numCell(m.PeakMB, quantity), numCell(m.MeanMB, quantity),
			numCell(m.CacheMB, quantity), numCell(m.AnonMB, quantity), numCell(m.PeakPct, quantity),
			numCell(m.RefaultsPerS, quantity), numCell(m.LimitHitsPerS, quantity), numCell(m.MajorFaultsPerS, quantity),
			numCell(m.PressurePct, quantity), textCell(boundText(m))}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// boundText says in a word or two whether the cap bound in a step.
func boundText(m analysis.ServerMemory) string {
	s := "no"
	if m.Bound {
		s = "yes"
	}
	if m.OOMKills > 0 {
		s += fmt.Sprintf(", %.0f OOM kill(s)", m.OOMKills)
	}
	return s
}

// serverMemoryTimeline charts the server's memory group second by second:
// what it held, of which page cache and own memory, against the cap; nil
// when no step sampled one.
func (r *runView) serverMemoryTimeline(steps []results.Step, id string) *chart {
	if !analysis.ServerMemoryRecorded(steps) {
		return nil
	}
	c := r.timelineChart(id, "Server memory per second, under its cap",
		"All the memory charged to the server's cgroup, the page cache and its processes' own memory among it, and the cap (dashed). "+capNote,
		steps, axis{Label: "memory", Unit: "MB", Zero: true}, []tlSpec{
			// The cap first, so that a total at the cap is drawn over it.
			{name: "cap", column: results.MetricMemcgLimit, color: 3, dash: dashed},
			{name: "server total", column: results.MetricMemcgUsage, color: 0},
			{name: "page cache", column: results.MetricMemcgCache, color: 1},
			{name: "own memory", column: results.MetricMemcgAnon, color: 2},
		}, usersLabel)
	if !c.hasData() {
		return nil
	}
	return c
}

// serverMemoryBindingTimeline charts the rates that show the cap binding,
// second by second; nil when the steps sampled none above zero.
func (r *runView) serverMemoryBindingTimeline(steps []results.Step, id string) *chart {
	// A counter that stayed at zero the whole run is left out: the kernel
	// may not keep it for this group (cap hits on cgroup v1 with swap
	// capped), and a flat line at zero would read as "never".
	var lines []tlSpec
	for _, l := range []tlSpec{
		{name: "refaults", column: results.MetricMemcgRefaults, color: 1},
		{name: "cap hits", column: results.MetricMemcgLimitHits, color: 3},
		{name: "major faults", column: results.MetricMemcgMajorFaults, color: 4, dash: dashed},
	} {
		for _, s := range steps {
			if s.Telemetry.Max(l.column) > 0 {
				lines = append(lines, l)
				break
			}
		}
	}
	if len(lines) == 0 {
		return nil
	}
	c := r.timelineChart(id, "Server memory cap binding per second",
		"Pages the server's cgroup evicted and read back soon after (refaults), the times it hit its cap, and the page faults its processes waited on the disk for; a counter that stayed at zero, or that the kernel does not keep for the group, is not drawn. "+capNote,
		steps, axis{Label: "per second", Zero: true}, lines, usersLabel)
	autoLog(c)
	if !c.hasData() {
		return nil
	}
	return c
}

// serverMemoryText prints the server's memory group per step in the
// terminal summary, when the run capped it.
func serverMemoryText(w io.Writer, ss []results.Step) error {
	if !analysis.ServerMemoryRecorded(ss) {
		return nil
	}
	fmt.Fprintln(w, "\nserver memory under its cap, MB (page cache included); refaults: pages evicted and read back")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "step\tusers\tcap\tpeak\tpage cache\town\trefaults/s\tcap bound\t\n")
	value := func(v float64) string { return fixed(v, 0) }
	for _, s := range ss {
		m, ok := analysis.StepServerMemory(s)
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Name, s.Users, value(m.CapMB), value(m.PeakMB), value(m.CacheMB), value(m.AnonMB), value(m.RefaultsPerS), boundText(m))
	}
	return tw.Flush()
}

// serverMemoryCompared puts every run's server memory group side by side,
// row by row (the steps matched across runs): the cap, the most it held
// and that as a share of the cap, its page cache, its refaults and
// whether the cap bound; a dash where a run did not cap its server or
// lacks the step. Nil when no run capped its server. The A/B tables of
// the same figures (ServerMemoryMetrics) say what changed, in the words
// every comparison uses.
func serverMemoryCompared(runs []*runView, rows []analysis.Row, id string) *table {
	capped := false
	for _, row := range rows {
		for _, s := range row.Steps {
			if s != nil {
				_, ok := analysis.StepServerMemory(*s)
				capped = capped || ok
			}
		}
	}
	if !capped {
		return nil
	}
	t := &table{ID: id, Title: "Server memory under its cap, per step: " + runLetters(runs),
		Caption: "Each run's server memory cgroup over each step: the cap, the most it held (MB and % of the cap), the mean page cache in it (MB), the pages per second it evicted and read back soon after (refaults), and whether the cap bound; a dash where a run did not cap its server's memory (--server-memory) or lacks the step. " + capNote}
	t.Columns = []column{{Name: "users", Numeric: true}}
	for _, r := range runs {
		g := r.Letter
		t.Columns = append(t.Columns, column{Name: "cap MB", Numeric: true, Group: g}, column{Name: "peak MB", Numeric: true, Group: g},
			column{Name: "peak % of cap", Numeric: true, Group: g}, column{Name: "page cache MB", Numeric: true, Group: g},
			column{Name: "refaults per s", Numeric: true, Group: g}, column{Name: "cap bound", Group: g})
	}
	for _, row := range rows {
		cells := []cell{{Text: row.Label, Raw: row.Label}}
		for _, s := range row.Steps {
			m, ok := analysis.ServerMemory{}, false
			if s != nil {
				m, ok = analysis.StepServerMemory(*s)
			}
			if !ok {
				cells = append(cells, textCell("-"), textCell("-"), textCell("-"), textCell("-"), textCell("-"), textCell("-"))
				continue
			}
			cells = append(cells, numCell(m.CapMB, quantity), numCell(m.PeakMB, quantity), numCell(m.PeakPct, quantity),
				numCell(m.CacheMB, quantity), numCell(m.RefaultsPerS, quantity), textCell(boundText(m)))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}
