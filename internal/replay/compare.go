package replay

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"dbio/internal/blocktrace"
	"dbio/internal/units"
)

// Row is the source or one replay, side by side with the others.
type Row struct {
	Name string
	// Where is the storage: the source's devices or the replay's target.
	Where     string
	Pace      string
	ReadIOPS  float64
	WriteIOPS float64
	SyncsPerS float64
	Read      blocktrace.Latency
	Write     blocktrace.Latency
	Sync      blocktrace.Latency
	// Seconds is how long the requests took, from the first issue.
	Seconds float64
	// Verdict says whether a replay at the recorded pace kept up, and by
	// how much it fell behind; a replay at max pace says how much faster
	// than the source it went.
	Verdict string
	// IOPSDeviation is the median over the source's busy seconds of how far
	// the replay's IOPS in that second were from the source's (a fraction);
	// NaN where it does not apply (the source, or not at the recorded pace
	// and speed 1).
	IOPSDeviation float64
}

// Compare lays the source capture and its replays side by side; source is
// the signature of the capture's active span (blocktrace.Trace.Active), so
// that its rates and seconds are over the span a replay reproduces.
func Compare(sourceName, sourceWhere string, source blocktrace.Signature, replays []Record, names []string) []Row {
	busy := slices.Clone(source.Seconds)
	for len(busy) > 0 && busy[0].ReadIOPS+busy[0].WriteIOPS == 0 {
		busy = busy[1:]
	}
	rows := []Row{{
		Name: sourceName, Where: sourceWhere, Pace: "captured",
		ReadIOPS: source.Reads.PerSecond, WriteIOPS: source.Writes.PerSecond, SyncsPerS: source.Flushes.PerSecond,
		Read: source.Reads.Latency, Write: source.Writes.Latency, Sync: source.Flushes.Latency,
		Seconds: source.DurationSeconds, Verdict: "source", IOPSDeviation: math.NaN(),
	}}
	for i, r := range replays {
		row := Row{
			Name: names[i], Where: r.Target, Pace: string(r.Pace),
			ReadIOPS: r.Reads.PerSecond, WriteIOPS: r.Writes.PerSecond, SyncsPerS: r.Syncs.PerSecond,
			Read: r.Reads.Latency, Write: r.Writes.Latency, Sync: r.Syncs.Latency,
			Seconds: r.RuntimeSeconds, IOPSDeviation: math.NaN(),
		}
		if r.Pace == Recorded && r.Speed != 1 {
			row.Pace = fmt.Sprintf("recorded ×%g", r.Speed)
		}
		switch {
		case r.Pace == Max:
			row.Verdict = fmt.Sprintf("%.2f× the source's pace", r.ExpectedSeconds/max(r.RuntimeSeconds, 0.001))
		case r.KeptUp:
			row.Verdict = "kept up"
		default:
			row.Verdict = fmt.Sprintf("fell behind by %.2f s (%.0f %%)", r.BehindSeconds, 100*r.BehindSeconds/max(r.ExpectedSeconds, 0.001))
		}
		if r.Pace == Recorded && r.Speed == 1 {
			row.IOPSDeviation = deviation(busy, r.Seconds)
		}
		rows = append(rows, row)
	}
	return rows
}

// deviation is the median relative difference of the replay's IOPS from
// the source's, second by second from each one's first busy second.
func deviation(source []blocktrace.Second, replay []Second) float64 {
	var d []float64
	for i := 0; i < len(source) && i < len(replay); i++ {
		want := source[i].ReadIOPS + source[i].WriteIOPS
		if want == 0 {
			continue
		}
		d = append(d, math.Abs(replay[i].ReadIOPS+replay[i].WriteIOPS-want)/want)
	}
	if len(d) == 0 {
		return math.NaN()
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// WriteTable writes rows as an aligned table for a terminal, or as
// Markdown when markdown is set.
func WriteTable(w io.Writer, rows []Row, markdown bool) error {
	head := []string{"run", "storage", "pace", "reads/s", "writes/s", "syncs/s", "read p50", "read p99", "write p50", "write p99", "sync p50", "sync p99", "seconds", "IOPS/s vs source", "verdict"}
	lat := func(us float64) string {
		if us == 0 {
			return "-"
		}
		return units.FormatMicros(us)
	}
	var lines [][]string
	for _, r := range rows {
		dev := "-"
		if !math.IsNaN(r.IOPSDeviation) {
			dev = fmt.Sprintf("±%.0f %%", 100*r.IOPSDeviation)
		}
		lines = append(lines, []string{r.Name, r.Where, r.Pace,
			fmt.Sprintf("%.1f", r.ReadIOPS), fmt.Sprintf("%.1f", r.WriteIOPS), fmt.Sprintf("%.1f", r.SyncsPerS),
			lat(r.Read.P50), lat(r.Read.P99), lat(r.Write.P50), lat(r.Write.P99), lat(r.Sync.P50), lat(r.Sync.P99),
			fmt.Sprintf("%.2f", r.Seconds), dev, r.Verdict})
	}
	if markdown {
		var b strings.Builder
		row := func(cells []string) {
			for i := range cells {
				cells[i] = strings.ReplaceAll(cells[i], "|", `\|`)
			}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		row(slices.Clone(head))
		sep := make([]string, len(head))
		for i := range sep {
			sep[i] = "---"
		}
		row(sep)
		for _, l := range lines {
			row(l)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, l := range lines {
		fmt.Fprintln(tw, strings.Join(l, "\t"))
	}
	return tw.Flush()
}
