// Package steady tells when a per-second throughput series (NOPM, TPS, IOPS)
// has become steady, with fio's steady-state semantics, so that a database
// run's warm-up can end on evidence rather than on a guessed duration.
//
// A criterion is written as fio writes its ss= option: METRIC:LIMIT for the
// deviation test and METRIC_slope:LIMIT for the slope test, the limit either
// absolute or a percentage of the window's mean ("iops:10%",
// "iops_slope:0.2%", "tps:10%", "nopm_slope:0.5%"). Over the last W values:
//
//   - deviation ("iops"): the largest distance of any value from the window's
//     mean, |x - mean|, must be below the limit. This is fio's definition
//     (steadystate_deviation), not max - min: with a 10 % limit the values may
//     span up to 20 % of the mean when they sit evenly around it;
//   - slope ("iops_slope"): the magnitude of the least-squares slope of the
//     values against their index (one per second, so units per second) must
//     be below the limit.
//
// With a percentage the figure compared is 100·deviation/mean or
// 100·|slope|/mean. Like fio, the comparison is strict (below, not at) and a
// window is judged only once it is full.
package steady

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"dbio/internal/results"
)

// Test is the steadiness test a criterion applies.
type Test int

const (
	// Deviation requires every value in the window within the limit of the
	// window's mean (fio's iops and bw criteria).
	Deviation Test = iota
	// Slope requires the least-squares slope of the window within the limit
	// (fio's iops_slope and bw_slope criteria).
	Slope
)

// String names the test as it appears in a criterion's suffix.
func (t Test) String() string {
	if t == Slope {
		return "slope"
	}
	return "deviation"
}

// Metrics returns the metric names Parse accepts: the figures the catalogue
// says a criterion may judge (the database throughputs dbio records per
// second, and fio's iops and bw).
func Metrics() []string {
	var out []string
	for _, f := range results.SteadyFigures() {
		out = append(out, string(f))
	}
	return out
}

// SecondMetrics are the metrics a criterion may name on a series of
// seconds, as a database run's ramp-up is judged: the steady figures the
// catalogue records every second.
func SecondMetrics() []string { return metricsRecordedEverySecond(true) }

// RoundMetrics are the metrics fio's rounds are judged on: the steady
// figures no second records, a fio point's own.
func RoundMetrics() []string { return metricsRecordedEverySecond(false) }

func metricsRecordedEverySecond(every bool) []string {
	var out []string
	for _, f := range results.SteadyFigures() {
		if (f.Def().In&results.InSecond != 0) == every {
			out = append(out, string(f))
		}
	}
	return out
}

// OnSeconds says whether the criterion can judge a series of seconds, and
// if not, which metrics can.
func (c Criterion) OnSeconds() error {
	if slices.Contains(SecondMetrics(), c.Metric) {
		return nil
	}
	return fmt.Errorf("%s are fio's series; a database run's are %s", listed(RoundMetrics(), "and"), listed(SecondMetrics(), "and"))
}

// OnRounds says whether the criterion can judge fio's rounds, and if not,
// which metrics can.
func (c Criterion) OnRounds() error {
	if slices.Contains(RoundMetrics(), c.Metric) {
		return nil
	}
	return fmt.Errorf("the rounds are judged on fio's %s", listed(RoundMetrics(), "or"))
}

// listed writes names as a list in words: "a, b and c".
func listed(names []string, conj string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}

// ErrSyntax marks a criterion that does not parse; the message names the accepted form.
var ErrSyntax = errors.New("malformed steady-state criterion")

// Criterion is one steady-state test on one per-second series.
type Criterion struct {
	// Metric names the series the criterion is meant for, e.g. "tps".
	Metric string
	// Test is Deviation or Slope.
	Test Test
	// Limit is the threshold the figure must stay below.
	Limit float64
	// Percent makes Limit a percentage of the window's mean.
	Percent bool
}

const form = "use METRIC:LIMIT (deviation from the mean) or METRIC_slope:LIMIT " +
	"(least-squares slope per second), LIMIT a number or a percentage of the mean, " +
	"e.g. tps:10% or nopm_slope:0.5%"

// Parse reads a criterion in fio's form, e.g. "iops_slope:0.2%" or "tps:10%".
// Metric names are case-insensitive; absolute limits are plain numbers in the
// series' own unit (no size suffixes, even for bw).
func Parse(s string) (Criterion, error) {
	name, limit, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || name == "" || strings.TrimSpace(limit) == "" {
		return Criterion{}, fmt.Errorf("%w %q: %s", ErrSyntax, s, form)
	}
	var c Criterion
	c.Metric = strings.ToLower(strings.TrimSpace(name))
	if m, found := strings.CutSuffix(c.Metric, "_slope"); found {
		c.Metric, c.Test = m, Slope
	}
	if metrics := Metrics(); !slices.Contains(metrics, c.Metric) {
		return Criterion{}, fmt.Errorf("%w %q: unknown metric %q, use one of %s",
			ErrSyntax, s, c.Metric, strings.Join(metrics, ", "))
	}
	num := strings.TrimSpace(limit)
	if n, found := strings.CutSuffix(num, "%"); found {
		num, c.Percent = strings.TrimSpace(n), true
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Criterion{}, fmt.Errorf("%w %q: limit %q is not a number: %s", ErrSyntax, s, limit, form)
	}
	if v <= 0 {
		return Criterion{}, fmt.Errorf("%w %q: limit %v must be above zero (no window is ever below it)", ErrSyntax, s, v)
	}
	c.Limit = v
	return c, nil
}

// String writes the criterion back in the form Parse reads.
func (c Criterion) String() string {
	name := c.Metric
	if c.Test == Slope {
		name += "_slope"
	}
	limit := strconv.FormatFloat(c.Limit, 'g', -1, 64)
	if c.Percent {
		limit += "%"
	}
	return name + ":" + limit
}

// Check is the verdict on one window.
type Check struct {
	// Mean is the window's mean.
	Mean float64
	// Deviation is the largest |x - mean| in the window.
	Deviation float64
	// Slope is the least-squares slope of the window, per second.
	Slope float64
	// Figure is what the criterion compares with its limit: Deviation or
	// |Slope|, as a percentage of Mean when the limit is one. It is +Inf
	// when a percentage is asked of a window whose mean is not positive, and
	// NaN when the window holds a NaN (a second without a sample).
	Figure float64
	// Steady is true when Figure is below the limit.
	Steady bool
}

// Evaluate judges one window of per-second values (oldest first). A window
// of fewer than two values is never steady: it has no slope and no spread.
func (c Criterion) Evaluate(window []float64) Check {
	n := len(window)
	if n < 2 {
		return Check{Figure: math.NaN()}
	}
	var sum float64
	for _, v := range window {
		sum += v
	}
	ch := Check{Mean: sum / float64(n)}
	// Least squares against x = 0..n-1: slope = Σ(x - x̄)(y - ȳ) / Σ(x - x̄)².
	xMean := float64(n-1) / 2
	var sxy, sxx float64
	for i, v := range window {
		d := v - ch.Mean
		ch.Deviation = math.Max(ch.Deviation, math.Abs(d)) // NaN stays NaN
		dx := float64(i) - xMean
		sxy += dx * d
		sxx += dx * dx
	}
	ch.Slope = sxy / sxx
	ch.Figure = ch.Deviation
	if c.Test == Slope {
		ch.Figure = math.Abs(ch.Slope)
	}
	if c.Percent {
		switch {
		case math.IsNaN(ch.Mean):
			ch.Figure = math.NaN()
		case ch.Mean <= 0:
			ch.Figure = math.Inf(1)
		default:
			ch.Figure = 100 * ch.Figure / ch.Mean
		}
	}
	ch.Steady = ch.Figure < c.Limit // false for NaN
	return ch
}
