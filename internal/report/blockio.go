package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"dbio/internal/analysis"
	"dbio/internal/results"
	"dbio/internal/units"
)

// A capture's and a replay's report: the requests and their latency by
// direction, the syncs', second by second, and a replay's verdict
// against the source; compared, the source and its replays side by side.

// micros is a latency in µs as a reader takes it in (87 µs, 1.23 ms); "-"
// for a direction without requests.
func micros(us float64) string {
	if us == 0 {
		return "-"
	}
	return units.FormatMicros(us)
}

// mbps is a direction's MB/s; syncs move no data.
func mbps(direction string, v float64) cell {
	if direction == "syncs" {
		return cell{Text: "-"}
	}
	return numCell(v, quantity)
}

func microsCell(us float64) cell { return cell{Text: micros(us), Raw: raw(us)} }

// blockIOWhat says what a capture or replay step was: "capture of sdb",
// "replay of results/x-capture (sdb) at the recorded pace".
func blockIOWhat(s results.Step) string {
	b := s.BlockIO
	devs := strings.Join(b.Devices, "+")
	if s.Kind == results.KindCapture {
		return "capture of " + orDash(devs)
	}
	what := "replay of " + b.Capture
	if devs != "" {
		what += " (" + devs + ")"
	}
	switch {
	case b.Pace == "max":
		return what + " as fast as possible"
	case b.Speed != 1 && b.Speed != 0:
		return what + fmt.Sprintf(" at %g× the recorded pace", b.Speed)
	}
	return what + " at the recorded pace"
}

// blockIOFinding is a step in one sentence: its rates, its write and sync
// p99, and a replay's verdict.
func blockIOFinding(s results.Step) string {
	b := s.BlockIO
	text := fmt.Sprintf("%s: %s reads/s, %s writes/s and %s syncs/s over %s s", sentenceCase(blockIOWhat(s)),
		quantity(b.Reads.PerSecond), quantity(b.Writes.PerSecond), quantity(b.Syncs.PerSecond), fixed(b.RuntimeS, 2))
	var lat []string
	for _, d := range []struct {
		name string
		op   results.BlockIOOp
	}{{"read", b.Reads}, {"write", b.Writes}, {"sync", b.Syncs}} {
		if d.op.Requests > 0 {
			lat = append(lat, d.name+" p99 "+micros(d.op.Latency.P99))
		}
	}
	if len(lat) > 0 {
		text += "; " + strings.Join(lat, ", ")
	}
	if s.Kind == results.KindReplay {
		text += "; " + analysis.BlockIOVerdict(s)
	}
	return text + "."
}

// blockIOSection is a run's captures and replays.
func blockIOSection(r *runView, prefix string) (*section, []string) {
	sec := &section{ID: prefix + "blockio", Title: "Block I/O"}
	var findings []string
	for _, s := range r.BlockIO {
		b := s.BlockIO
		findings = append(findings, blockIOFinding(s))
		sec.add(&paragraph{Text: sentenceCase(blockIOWhat(s)) + ". " + blockIONote(s)})
		t := &table{ID: prefix + s.Name + "-directions", Title: "Requests and latency by direction"}
		t.Columns = []column{{Name: "direction"}, {Name: "requests", Numeric: true}, {Name: "per second", Numeric: true}, {Name: "MB/s", Numeric: true}}
		for _, p := range []string{"mean", "p50", "p90", "p99", "p99.9", "max"} {
			t.Columns = append(t.Columns, column{Name: p, Numeric: true, Group: "latency"})
		}
		for _, d := range []struct {
			name string
			op   results.BlockIOOp
		}{{"reads", b.Reads}, {"writes", b.Writes}, {"syncs", b.Syncs}} {
			if d.op.Requests == 0 {
				continue
			}
			l := d.op.Latency
			t.Rows = append(t.Rows, []cell{textCell(d.name), numCell(float64(d.op.Requests), thousands), numCell(d.op.PerSecond, quantity),
				mbps(d.name, d.op.MBps), microsCell(l.Mean), microsCell(l.P50), microsCell(l.P90), microsCell(l.P99), microsCell(l.P999), microsCell(l.Max)})
		}
		sec.add(t)
		if s.Kind == results.KindReplay {
			sec.add(&paragraph{Class: "verdict", Text: sentenceCase(analysis.BlockIOVerdict(s)) + fmt.Sprintf(": the requests took %s s; the source took %s s.", fixed(b.RuntimeS, 2), fixed(b.SourceS, 2))})
		}
		label := func(results.Step) string { return s.Name }
		steps := []results.Step{s}
		sec.add(r.timelineChart(prefix+s.Name+"-iops", "Requests per second by direction", "", steps,
			axis{Label: "requests per second", Zero: true}, []tlSpec{
				{name: "reads", column: string(results.FigureReadIOPS), color: 0},
				{name: "writes", column: string(results.FigureWriteIOPS), color: 1},
				{name: "syncs", column: string(results.FigureSyncsPerSec), color: 2, dash: dashed},
			}, label))
		sec.add(r.timelineChart(prefix+s.Name+"-p99", "Each second's p99 latency by direction", "", steps,
			axis{Label: "p99 latency", Unit: "ms", Zero: true}, []tlSpec{
				{name: "reads", column: string(results.FigureReadP99US), color: 0, factor: 0.001},
				{name: "writes", column: string(results.FigureWriteP99US), color: 1, factor: 0.001},
			}, label))
	}
	return sec, findings
}

// blockIONote says how a capture's or a replay's latencies were measured.
func blockIONote(s results.Step) string {
	b := s.BlockIO
	if s.Kind == results.KindCapture {
		note := "Latencies are the device's, from issue to completion; rates are over the span the requests took (first issue to last completion)."
		if b.Discards > 0 {
			note += fmt.Sprintf(" %s discards are not in the table.", thousands(float64(b.Discards)))
		}
		if b.LostEvents > 0 {
			note += fmt.Sprintf(" The kernel dropped %s trace events: the trace misses requests.", thousands(float64(b.LostEvents)))
		}
		return note
	}
	note := "Latencies are fio's, from submission to completion; syncs are the fdatasyncs standing for the source's flushes and FUA writes."
	if b.Discards > 0 {
		note += fmt.Sprintf(" The source's %s discards were not replayed.", thousands(float64(b.Discards)))
	}
	return note
}

// blockIOHead is the heading of the side-by-side table.
var blockIOHead = []string{"run", "storage", "pace", "reads/s", "writes/s", "syncs/s", "read p50", "read p99", "write p50", "write p99", "sync p50", "sync p99", "seconds", "IOPS vs source", "verdict"}

// blockIOLines are the side-by-side rows' cells.
func blockIOLines(runs []*runView) [][]cell {
	recs := make([]*analysis.Recorded, len(runs))
	for i, r := range runs {
		recs[i] = r.Recorded
	}
	var out [][]cell
	for _, row := range analysis.BlockIORows(recs) {
		r, b := runs[row.Run], row.Step.BlockIO
		name := r.Name
		if r.Letter != "" {
			name = r.Letter + " " + name
		}
		where := storageOf(r.Run)
		if row.Step.Kind == results.KindCapture {
			where = strings.Join(b.Devices, "+")
		}
		dev := cell{Text: "-", Raw: ""}
		if !math.IsNaN(row.IOPSDeviation) {
			dev = cell{Text: "±" + fixed(100*row.IOPSDeviation, 0) + " %", Raw: raw(100 * row.IOPSDeviation)}
		}
		out = append(out, []cell{textCell(name), textCell(where), textCell(row.Pace),
			numCell(b.Reads.PerSecond, quantity), numCell(b.Writes.PerSecond, quantity), numCell(b.Syncs.PerSecond, quantity),
			microsCell(b.Reads.Latency.P50), microsCell(b.Reads.Latency.P99), microsCell(b.Writes.Latency.P50), microsCell(b.Writes.Latency.P99),
			microsCell(b.Syncs.Latency.P50), microsCell(b.Syncs.Latency.P99), numCell(b.RuntimeS, func(v float64) string { return fixed(v, 2) }),
			dev, textCell(row.Verdict)})
	}
	return out
}

// compareBlockIO sets the captures and replays among runs side by side.
func compareBlockIO(runs []*runView) (*section, []string) {
	sec := &section{ID: "cmp-blockio", Title: "Block I/O: the source and its replays"}
	t := &table{ID: "cmp-blockio-rows", Title: "Source and replays side by side",
		Caption: "Rates are over the span each one's requests took. IOPS vs source is the median over the source's busy seconds of how far a replay's reads and writes in that second were from the source's (replays at the recorded pace only). A replay on the source's own storage is the fidelity check."}
	for i, h := range blockIOHead {
		t.Columns = append(t.Columns, column{Name: h, Numeric: i >= 3 && i < len(blockIOHead)-1, Wrap: i == 1 || i == len(blockIOHead)-1})
	}
	t.Rows = blockIOLines(runs)
	sec.add(t)
	var findings []string
	for _, r := range runs {
		for _, s := range r.BlockIO {
			findings = append(findings, r.Letter+": "+blockIOFinding(s))
		}
	}
	steps := func(r *runView) []results.Step { return r.BlockIO }
	label := func(s results.Step) string { return s.Name }
	for _, c := range []struct {
		id, title, column, name string
	}{
		{"cmp-blockio-writes", "Writes per second", string(results.FigureWriteIOPS), "writes"},
		{"cmp-blockio-reads", "Reads per second", string(results.FigureReadIOPS), "reads"},
	} {
		if ch := overlayTimeline(runs, c.id, c.title, steps, c.column, c.name, axis{Label: c.title, Zero: true}, 1, label); ch != nil {
			sec.add(ch)
		}
	}
	return sec, findings
}

// WriteBlockIOTable writes the captures and replays of runs side by side
// for a terminal, or as Markdown: dbio replays.
func WriteBlockIOTable(w io.Writer, runs []*results.Loaded, markdown bool) error {
	views := viewsOf(runs, Options{})
	for _, v := range views {
		v.Letter = ""
		if len(v.BlockIO) == 0 {
			return fmt.Errorf("%s is neither a capture nor a replay: name the results directories of dbio capture and dbio replay (a run with --capture holds its trace: dbio replay RUNDIR --target DIR plays it)", v.Path)
		}
	}
	lines := blockIOLines(views)
	if markdown {
		var b strings.Builder
		row := func(cells []string) {
			for i := range cells {
				cells[i] = strings.ReplaceAll(cells[i], "|", `\|`)
			}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		row(slices.Clone(blockIOHead))
		sep := make([]string, len(blockIOHead))
		for i := range sep {
			sep[i] = "---"
		}
		row(sep)
		for _, l := range lines {
			row(texts(l))
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(blockIOHead, "\t"))
	for _, l := range lines {
		fmt.Fprintln(tw, strings.Join(texts(l), "\t"))
	}
	return tw.Flush()
}

func texts(cells []cell) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = c.Text
	}
	return out
}
