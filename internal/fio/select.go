package fio

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"dbio/internal/analysis"
	"dbio/internal/results"
	"dbio/internal/units"
)

// The conclusions a plan prints when its points are done: the
// latency-bounded best points and the I/O-rate curves. internal/analysis
// draws them from the points as recorded; this file writes them for a
// terminal.

// LatencyStat is the latency figure a bound applies to: "mean" (fio's mean
// completion latency) or a percentile such as "p99".
type LatencyStat = results.LatencyStat

// The statistics a latency bound may use.
const (
	StatMean = results.StatMean
	StatP99  = results.StatP99
)

// LatencyBound is a ceiling on one latency statistic.
type LatencyBound = analysis.LatencyBound

// bound is the configured latency bound, DefaultLatencyMax on the mean unless set.
func (c Config) bound() LatencyBound {
	b := LatencyBound{Max: c.LatencyMax, Stat: c.LatencyStat}
	if b.Max == 0 {
		b.Max = DefaultLatencyMax
	}
	if b.Stat == "" {
		b.Stat = StatMean
	}
	return b
}

// steps are points as the results record them, for analysis.
func steps(points []PointResult) []results.Step {
	out := make([]results.Step, 0, len(points))
	for _, r := range points {
		out = append(out, results.Step{Name: r.Name, Kind: results.KindFio, Status: r.Status, Figures: figures(r), Fio: &r})
	}
	return out
}

// BestWithin is the SQLIO study's answer for the points of a plan (see
// analysis.BestWithin).
func BestWithin(points []PointResult, b LatencyBound) []analysis.BestRow {
	return analysis.BestWithin(steps(points), b)
}

// LatencyBoundedTable renders BestWithin's rows as text lines.
func LatencyBoundedTable(rows []analysis.BestRow, b LatencyBound) []string {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "best within %s:\n", b)
	w := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "target\tpattern\twithin\tbest IOPS\tat\tbest MB/s\tat\t")
	for _, r := range rows {
		iops, iopsAt, mbs, mbsAt := "-", "none within the bound", "-", ""
		if r.BestIOPS != nil {
			iops = fmt.Sprintf("%s (%s)", groupThousands(r.BestIOPS.IOPS), formatUS(r.BestIOPS.LatencyUS))
			iopsAt = r.BestIOPS.Name
		}
		if r.BestMBPerSec != nil {
			mbs = fmt.Sprintf("%.1f (%s)", r.BestMBPerSec.MBPerSec, formatUS(r.BestMBPerSec.LatencyUS))
			mbsAt = r.BestMBPerSec.Name
		}
		fmt.Fprintf(w, "%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t\n", r.Label, r.Series, r.Within, r.Points, iops, iopsAt, mbs, mbsAt)
	}
	w.Flush()
	return splitLines(buf.String())
}

// RateFor is the total IOPS limit for pct percent of a measured maximum;
// never below one I/O per second.
func RateFor(maxIOPS, pct float64) int64 {
	return max(1, int64(math.Round(maxIOPS*pct/100)))
}

// Curves gathers the completed rate points of a plan by the maximum they
// refer to (see analysis.Curves).
func Curves(points []PointResult) []analysis.Curve {
	return analysis.Curves(steps(points))
}

// CurveTable renders the curves of a run as text lines.
func CurveTable(points []PointResult) []string {
	var buf bytes.Buffer
	for _, c := range Curves(points) {
		fmt.Fprintf(&buf, "I/O-rate curve %s %s", c.Pattern.Label, c.Pattern.Series)
		if c.Max != nil {
			fmt.Fprintf(&buf, " (maximum %s IOPS, mean %s, p99 %s)", groupThousands(c.Max.IOPS), formatUS(c.Max.MeanUS), formatUS(c.Max.P99US))
		}
		buf.WriteString(":\n")
		w := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(w, "rate\tasked IOPS\tIOPS\tMB/s\tmean\tp99\t")
		for _, p := range c.Points {
			fmt.Fprintf(w, "%s%%\t%s\t%s\t%.1f\t%s\t%s\t\n", trimFloat(p.Pct), groupThousands(float64(p.TargetIOPS)),
				groupThousands(p.IOPS), p.MBPerSec, formatUS(p.MeanUS), formatUS(p.P99US))
		}
		w.Flush()
		if p, ok := c.Overshoot(); ok {
			fmt.Fprintf(&buf, "warning: the %s%% point ran at %s IOPS, above the maximum measured first: that maximum was not the device's (something else was using it, or it was still warming up); re-run the curve\n",
				trimFloat(p.Pct), groupThousands(p.IOPS))
		}
		if k := c.Knee(); k >= 0 {
			p := c.Points[k]
			fmt.Fprintf(&buf, "latency bends at %s%% of the maximum (%s IOPS): mean %s, twice the latency at the lowest rate\n",
				trimFloat(p.Pct), groupThousands(p.IOPS), formatUS(p.MeanUS))
		} else {
			buf.WriteString("mean latency never doubled over the rates run\n")
		}
	}
	return splitLines(buf.String())
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return lines
}

// formatUS renders microseconds with a unit a reader takes in at a glance.
func formatUS(us float64) string {
	switch {
	case math.IsNaN(us):
		return "-"
	case us >= 1e6:
		return fmt.Sprintf("%.2f s", us/1e6)
	case us >= 1000:
		return fmt.Sprintf("%.2f ms", us/1000)
	}
	return fmt.Sprintf("%.0f µs", us)
}

// groupThousands renders a count with thousands separators: 145,118.
func groupThousands(v float64) string { return units.GroupThousands(int64(math.Round(v))) }
