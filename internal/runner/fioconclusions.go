package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"dbio/internal/analysis"
	"dbio/internal/fio"
	"dbio/internal/results"
	"dbio/internal/units"
)

// The conclusions of a fio phase: what its points answer together, drawn
// once by analysis from the points as the results record them (the same
// functions the report reads a finished run with), and written here for
// the terminal and run.json's notes as the phase ends.

// concludeFio prints the plan's conclusions on its completed points and
// adds them to run.json's notes.
func concludeFio(dir *results.Dir, plan fio.Plan, points []results.FioPoint, out io.Writer) {
	lines := fioConclusions(plan, points)
	if len(lines) == 0 {
		return
	}
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
	_ = dir.UpdateRun(func(r *results.Run) { r.Notes = append(r.Notes, lines...) })
}

// fioConclusions are the I/O-rate curves with their knees (the curve
// profile's points; none in other plans), then the latency-bounded best
// points when the plan asks for them.
func fioConclusions(plan fio.Plan, points []results.FioPoint) []string {
	steps := fio.Steps(points)
	lines := curveTable(analysis.Curves(steps))
	if plan.LatencyBounded() {
		most, stat := plan.Config.LatencyBound()
		b := analysis.LatencyBound{Max: most, Stat: stat}
		lines = append(lines, latencyBoundedTable(analysis.BestWithin(steps, b), b)...)
	}
	return lines
}

// latencyBoundedTable writes BestWithin's rows as text lines.
func latencyBoundedTable(rows []analysis.BestRow, b analysis.LatencyBound) []string {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "best within %s:\n", b)
	w := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "target\tpattern\twithin\tbest IOPS\tat\tbest MB/s\tat\t")
	for _, r := range rows {
		iops, iopsAt, mbs, mbsAt := "-", "none within the bound", "-", ""
		if r.BestIOPS != nil {
			iops = fmt.Sprintf("%s (%s)", thousands(r.BestIOPS.IOPS), units.FormatMicros(r.BestIOPS.LatencyUS))
			iopsAt = r.BestIOPS.Name
		}
		if r.BestMBPerSec != nil {
			mbs = fmt.Sprintf("%.1f (%s)", r.BestMBPerSec.MBPerSec, units.FormatMicros(r.BestMBPerSec.LatencyUS))
			mbsAt = r.BestMBPerSec.Name
		}
		fmt.Fprintf(w, "%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t\n", r.Label, r.Series, r.Within, r.Points, iops, iopsAt, mbs, mbsAt)
	}
	w.Flush()
	return textLines(buf.String())
}

// curveTable writes each I/O-rate curve as text lines: its rates, a
// maximum a later rate beat, and where latency bends.
func curveTable(curves []analysis.Curve) []string {
	var buf bytes.Buffer
	for _, c := range curves {
		fmt.Fprintf(&buf, "I/O-rate curve %s %s", c.Pattern.Label, c.Pattern.Series)
		if c.Max != nil {
			fmt.Fprintf(&buf, " (maximum %s IOPS, mean %s, p99 %s)", thousands(c.Max.IOPS), units.FormatMicros(c.Max.MeanUS), units.FormatMicros(c.Max.P99US))
		}
		buf.WriteString(":\n")
		w := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(w, "rate\tasked IOPS\tIOPS\tMB/s\tmean\tp99\t")
		for _, p := range c.Points {
			fmt.Fprintf(w, "%s%%\t%s\t%s\t%.1f\t%s\t%s\t\n", percent(p.Pct), thousands(float64(p.TargetIOPS)),
				thousands(p.IOPS), p.MBPerSec, units.FormatMicros(p.MeanUS), units.FormatMicros(p.P99US))
		}
		w.Flush()
		if p, ok := c.Overshoot(); ok {
			fmt.Fprintf(&buf, "warning: the %s%% point ran at %s IOPS, above the maximum measured first: that maximum was not the device's (something else was using it, or it was still warming up); re-run the curve\n",
				percent(p.Pct), thousands(p.IOPS))
		}
		if k := c.Knee(); k >= 0 {
			p := c.Points[k]
			fmt.Fprintf(&buf, "latency bends at %s%% of the maximum (%s IOPS): mean %s, twice the latency at the lowest rate\n",
				percent(p.Pct), thousands(p.IOPS), units.FormatMicros(p.MeanUS))
		} else {
			buf.WriteString("mean latency never doubled over the rates run\n")
		}
	}
	return textLines(buf.String())
}

// textLines are a table's lines without the spaces tabwriter pads them with.
func textLines(s string) (lines []string) {
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), " "))
	}
	return lines
}

// thousands writes a rate rounded to a whole count: 145,118.
func thousands(v float64) string { return units.GroupThousands(int64(math.Round(v))) }

// percent writes a share of a maximum without trailing zeros: 10, 0.167.
func percent(v float64) string { return fmt.Sprintf("%.3g", v) }
