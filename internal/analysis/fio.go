package analysis

import (
	"fmt"
	"strconv"
	"time"

	"dbio/internal/results"
)

// The answers drawn from fio points. Each function takes the fio steps of
// a run in the order they ran, each carrying its FioPoint (Run.Fio, or the
// steps fio has just written).

// LatencyBound is a ceiling on one latency statistic.
type LatencyBound struct {
	Max  time.Duration
	Stat results.LatencyStat
}

// String reads as the table heading: "mean latency ≤ 20ms".
func (b LatencyBound) String() string { return fmt.Sprintf("%s latency ≤ %s", b.stat(), b.Max) }

// stat is the bound's statistic: the mean unless another is named.
func (b LatencyBound) stat() results.LatencyStat {
	if _, err := b.Stat.Percentile(); err != nil || b.Stat == "" {
		return results.StatMean
	}
	return b.Stat
}

// BoundOf is the latency bound a disk run's config asked for (fio's
// --latency-max and --latency-stat), results.DefaultLatencyMax on the mean for
// what it left out; set says the config named either.
func BoundOf(c results.RunConfig) (b LatencyBound, set bool) {
	b = LatencyBound{Max: results.DefaultLatencyMax, Stat: results.StatMean}
	if c.Disk == nil {
		return b, false
	}
	if d, err := time.ParseDuration(c.Disk.LatencyMax); err == nil && d > 0 {
		b.Max, set = d, true
	}
	if stat := c.Disk.LatencyStat; stat != "" {
		set = true
		if _, err := stat.Percentile(); err == nil {
			b.Stat = stat
		}
	}
	return b, set
}

// latencyFigure is the step figure holding a latency statistic.
func latencyFigure(stat results.LatencyStat) results.FigureName {
	switch stat {
	case results.StatP50:
		return results.FigureLatP50US
	case results.StatP95:
		return results.FigureLatP95US
	case results.StatP99:
		return results.FigureLatP99US
	case results.StatP999:
		return results.FigureLatP999US
	}
	return results.FigureLatMeanUS
}

// Pick is a point chosen for a table cell, with its figures.
type Pick struct {
	Name      string
	IOPS      float64
	MBPerSec  float64
	LatencyUS float64
}

func pick(s results.Step, lat results.FigureName) *Pick {
	return &Pick{Name: s.Name, IOPS: Value(s, results.FigureIOPS), MBPerSec: Value(s, results.FigureMBPerSec), LatencyUS: Value(s, lat)}
}

// BestRow is one line of the latency-bounded table: one pattern on one target.
type BestRow struct {
	Label, Series string
	// Pattern is the first point's plan, for naming the row.
	Pattern results.FioPlan
	// Points completed in the row, and how many of them kept within the bound.
	Points, Within int
	// BestIOPS and BestMBPerSec are nil when no point kept within the bound.
	BestIOPS, BestMBPerSec *Pick
}

// BestWithin is the SQLIO study's answer: for each target and pattern, the
// highest IOPS and the highest MB/s among the completed points whose latency
// statistic stays at or below the bound. Points run at a fixed rate are
// left out (they measure the rate asked, not the device). Ties go to the
// earlier point, the lighter load as plans order them.
func BestWithin(points []results.Step, b LatencyBound) []BestRow {
	lat := latencyFigure(b.stat())
	limitUS := float64(b.Max) / float64(time.Microsecond)
	return best(points, lat, bySeries, unrated, func(s results.Step) bool { return Value(s, lat) <= limitUS })
}

// Highest is, for each target, the highest IOPS and the highest MB/s of
// any completed point, read with its mean latency.
func Highest(points []results.Step) []BestRow {
	all := func(results.Step) bool { return true }
	return best(points, results.FigureLatMeanUS, func(s results.Step) string { return s.Fio.Label }, all, all)
}

// best finds each row's best points among the completed points it counts
// (counted) that qualify (within); row keys the points into rows.
func best(points []results.Step, lat results.FigureName, row func(results.Step) string, counted, within func(results.Step) bool) []BestRow {
	var rows []BestRow
	index := map[string]int{}
	for _, p := range points {
		if !Completed(p) || !counted(p) {
			continue
		}
		key := row(p)
		i, ok := index[key]
		if !ok {
			i = len(rows)
			index[key] = i
			rows = append(rows, BestRow{Label: p.Fio.Label, Series: p.Fio.Series, Pattern: p.Fio.FioPlan})
		}
		r := &rows[i]
		r.Points++
		if !within(p) {
			continue
		}
		r.Within++
		pk := pick(p, lat)
		if r.BestIOPS == nil || pk.IOPS > r.BestIOPS.IOPS {
			r.BestIOPS = pk
		}
		if r.BestMBPerSec == nil || pk.MBPerSec > r.BestMBPerSec.MBPerSec {
			r.BestMBPerSec = pk
		}
	}
	return rows
}

// bySeries keys points by target and pattern; unrated leaves out points run
// at a fixed rate.
func bySeries(s results.Step) string { return s.Fio.Label + "\x00" + s.Fio.Series }
func unrated(s results.Step) bool    { return s.Fio.RateOf == "" }

// Swept says some pattern on some target was measured at three points or
// more (fixed-rate points aside): a sweep whose latency-bounded best is
// worth showing.
func Swept(points []results.Step) bool {
	for _, r := range best(points, results.FigureLatMeanUS, bySeries, unrated, func(results.Step) bool { return false }) {
		if r.Points >= 3 {
			return true
		}
	}
	return false
}

// CurvePoint is one rate of an I/O-rate curve.
type CurvePoint struct {
	Name string
	// Pct is the share of the maximum asked for; 0 marks the unthrottled maximum itself.
	Pct        float64
	TargetIOPS int64
	IOPS       float64
	MBPerSec   float64
	MeanUS     float64
	P99US      float64
}

// Curve is one I/O-rate curve: a maximum and the rates run against it.
type Curve struct {
	// Of names the point whose IOPS is 100 %.
	Of string
	// Pattern is the first rate's plan, for naming the curve.
	Pattern results.FioPlan
	// Max is the maximum's figures, nil when it did not complete.
	Max    *CurvePoint
	Points []CurvePoint
}

// Curves gathers the completed rate points of a run by the maximum they refer to.
func Curves(points []results.Step) []Curve {
	var out []Curve
	index := map[string]int{}
	byName := map[string]results.Step{}
	for _, p := range points {
		byName[p.Name] = p
	}
	for _, p := range points {
		if p.Fio.RateOf == "" || !Completed(p) {
			continue
		}
		i, ok := index[p.Fio.RateOf]
		if !ok {
			c := Curve{Of: p.Fio.RateOf, Pattern: p.Fio.FioPlan}
			if m, ok := byName[p.Fio.RateOf]; ok && Completed(m) {
				mp := curvePoint(m)
				c.Max = &mp
			}
			out = append(out, c)
			i = len(out) - 1
			index[p.Fio.RateOf] = i
		}
		out[i].Points = append(out[i].Points, curvePoint(p))
	}
	return out
}

func curvePoint(s results.Step) CurvePoint {
	return CurvePoint{Name: s.Name, Pct: s.Fio.RatePct, TargetIOPS: s.Fio.RateIOPS, IOPS: Value(s, results.FigureIOPS),
		MBPerSec: Value(s, results.FigureMBPerSec), MeanUS: Value(s, results.FigureLatMeanUS), P99US: Value(s, results.FigureLatP99US)}
}

// Lowest is the index of the curve's lowest rate, -1 without points.
func (c Curve) Lowest() int {
	low := -1
	for i, p := range c.Points {
		if low < 0 || p.Pct < c.Points[low].Pct {
			low = i
		}
	}
	return low
}

// Knee is where latency bends: the first rate, in the order run, above the
// lowest whose mean completion latency is at least twice the lowest rate's.
// It returns the index into c.Points, or -1 when latency never doubled.
func (c Curve) Knee() int {
	low := c.Lowest()
	if low < 0 {
		return -1
	}
	ref := c.Points[low].MeanUS
	for i, p := range c.Points {
		if p.Pct > c.Points[low].Pct && p.MeanUS >= 2*ref {
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

// PointKeys key each fio point by what it measured and its rank among the
// points of the same shape, so that the same plan on another target
// matches point for point whatever the point names.
func PointKeys(points []results.Step) []string {
	count := map[string]int{}
	keys := make([]string, len(points))
	for i, p := range points {
		d := p.Fio
		s := fmt.Sprintf("%s/%d/r%d/qd%dx%d/rate%g/loops%d", d.RW, d.BS, d.ReadPct, d.IODepth, d.Jobs, d.RatePct, d.Loops)
		count[s]++
		keys[i] = s + "#" + strconv.Itoa(count[s])
	}
	return keys
}
