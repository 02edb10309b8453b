package fio

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"dbio/internal/results"
)

// LatencyStat is the latency figure a bound applies to: "mean" (fio's mean
// completion latency) or a percentile such as "p99".
type LatencyStat string

// The statistics a latency bound may use.
const (
	StatMean LatencyStat = "mean"
	StatP99  LatencyStat = "p99"
)

// percentile returns the percentile a statistic names, 0 for the mean.
func (s LatencyStat) percentile() (float64, error) {
	switch s {
	case "", StatMean:
		return 0, nil
	case "p50", "p95", "p99", "p99.9":
		return strconv.ParseFloat(string(s[1:]), 64)
	}
	return 0, fmt.Errorf("--latency-stat %q: use mean, p50, p95, p99 or p99.9", string(s))
}

// LatencyBound is a ceiling on one latency statistic.
type LatencyBound struct {
	Max  time.Duration `json:"max"`
	Stat LatencyStat   `json:"stat"`
}

// String reads as the table heading: "mean latency ≤ 20ms".
func (b LatencyBound) String() string {
	stat := b.Stat
	if stat == "" {
		stat = StatMean
	}
	return fmt.Sprintf("%s latency ≤ %s", stat, b.Max)
}

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

// LatencyUS is the point's latency statistic in microseconds, read from
// fio's completion latency over reads and writes together.
func (r PointResult) LatencyUS(stat LatencyStat) (float64, bool) {
	if r.Total == nil {
		return 0, false
	}
	p, err := stat.percentile()
	if err != nil {
		return 0, false
	}
	if p == 0 {
		return r.Total.Completion.MeanUS, true
	}
	return r.Total.Completion.At(p)
}

// Pick is a point chosen for a table cell.
type Pick struct {
	Name      string  `json:"name"`
	IOPS      float64 `json:"iops"`
	MBPerSec  float64 `json:"mb_s"`
	LatencyUS float64 `json:"latency_us"`
}

// BestRow is one line of the latency-bounded table: one pattern on one target.
type BestRow struct {
	Label  string `json:"label"`
	Series string `json:"series"`
	// Points completed in the row, and how many of them kept within the bound.
	Points int `json:"points"`
	Within int `json:"within"`
	// BestIOPS and BestMBPerSec are nil when no point kept within the bound.
	BestIOPS     *Pick `json:"best_iops,omitempty"`
	BestMBPerSec *Pick `json:"best_mb_s,omitempty"`
}

// BestWithin is the SQLIO study's answer: for each target and pattern, the
// highest IOPS and the highest MB/s among completed points whose latency
// statistic stays at or below the bound. Ties go to the earlier point (the
// lighter load, as the plan orders them).
func BestWithin(points []PointResult, b LatencyBound) []BestRow {
	limitUS := float64(b.Max) / float64(time.Microsecond)
	var rows []BestRow
	find := func(label, series string) *BestRow {
		for i := range rows {
			if rows[i].Label == label && rows[i].Series == series {
				return &rows[i]
			}
		}
		rows = append(rows, BestRow{Label: label, Series: series})
		return &rows[len(rows)-1]
	}
	for _, r := range points {
		if r.Status != results.StatusCompleted || r.Total == nil {
			continue
		}
		row := find(r.Label, r.Series)
		row.Points++
		lat, ok := r.LatencyUS(b.Stat)
		if !ok || lat > limitUS {
			continue
		}
		row.Within++
		pick := &Pick{Name: r.Name, IOPS: r.Total.IOPS, MBPerSec: r.Total.MBPerSec(), LatencyUS: lat}
		if row.BestIOPS == nil || pick.IOPS > row.BestIOPS.IOPS {
			row.BestIOPS = pick
		}
		if row.BestMBPerSec == nil || pick.MBPerSec > row.BestMBPerSec.MBPerSec {
			row.BestMBPerSec = pick
		}
	}
	return rows
}

// LatencyBoundedTable renders BestWithin's rows as text lines.
func LatencyBoundedTable(rows []BestRow, b LatencyBound) []string {
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

// CurvePoint is one rate of an I/O-rate curve.
type CurvePoint struct {
	Name string `json:"name"`
	// Pct is the share of the maximum asked for; 0 marks the unthrottled maximum itself.
	Pct        float64 `json:"pct"`
	TargetIOPS int64   `json:"target_iops"`
	IOPS       float64 `json:"iops"`
	MBPerSec   float64 `json:"mb_s"`
	MeanUS     float64 `json:"mean_us"`
	P99US      float64 `json:"p99_us"`
}

// Curve is one curve: a maximum and the rates run against it.
type Curve struct {
	Label  string       `json:"label"`
	Series string       `json:"series"`
	Max    *CurvePoint  `json:"max,omitempty"`
	Points []CurvePoint `json:"points"`
}

// Curves gathers the completed rate points of a run by the maximum they refer to.
func Curves(points []PointResult) []Curve {
	var out []Curve
	index := map[string]int{}
	byName := map[string]PointResult{}
	for _, r := range points {
		byName[r.Name] = r
	}
	for _, r := range points {
		if r.RateOf == "" || r.Status != results.StatusCompleted || r.Total == nil {
			continue
		}
		i, ok := index[r.RateOf]
		if !ok {
			c := Curve{Label: r.Label, Series: r.Series}
			if m, ok := byName[r.RateOf]; ok && m.Total != nil {
				mp := curvePoint(m)
				c.Max = &mp
			}
			out = append(out, c)
			i = len(out) - 1
			index[r.RateOf] = i
		}
		out[i].Points = append(out[i].Points, curvePoint(r))
	}
	return out
}

func curvePoint(r PointResult) CurvePoint {
	p99, _ := r.Total.Completion.At(99)
	return CurvePoint{Name: r.Name, Pct: r.RatePct, TargetIOPS: r.RateIOPS, IOPS: r.Total.IOPS,
		MBPerSec: r.Total.MBPerSec(), MeanUS: r.Total.Completion.MeanUS, P99US: p99}
}

// Knee is where latency bends: the first rate, in the order run, whose mean
// completion latency is at least twice that of the lowest rate. It returns
// the index into c.Points, or -1 when latency never doubled.
func (c Curve) Knee() int {
	if len(c.Points) < 2 {
		return -1
	}
	base := 0
	for i, p := range c.Points {
		if p.Pct < c.Points[base].Pct {
			base = i
		}
	}
	ref := c.Points[base].MeanUS
	for i, p := range c.Points {
		if i != base && p.Pct > c.Points[base].Pct && p.MeanUS >= 2*ref {
			return i
		}
	}
	return -1
}

// Overshoot finds a rate above 100 % that fio sustained (within 2 % of what
// was asked, and more than the maximum): proof that the maximum measured
// first was not the device's, so the curve's percentages are off.
func (c Curve) Overshoot() (CurvePoint, bool) {
	if c.Max == nil {
		return CurvePoint{}, false
	}
	for _, p := range c.Points {
		if p.Pct > 100 && p.IOPS >= 0.98*float64(p.TargetIOPS) && p.IOPS > c.Max.IOPS*1.02 {
			return p, true
		}
	}
	return CurvePoint{}, false
}

// CurveTable renders the curves of a run as text lines.
func CurveTable(points []PointResult) []string {
	var buf bytes.Buffer
	for _, c := range Curves(points) {
		fmt.Fprintf(&buf, "I/O-rate curve %s %s", c.Label, c.Series)
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
func groupThousands(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
