package runner

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/stats"
	"dbio/internal/steady"
	"dbio/internal/workload"
)

// PrecisionBound ends each step's measurement as soon as its figures are
// known well enough: every named figure's 95 % confidence interval, read
// from its per-second series by batch means, within ±P % of its value, and
// throughput steady across the measurement (steady.PrecisionTracker: its
// least-squares drift known within twice the tightest P, 10 % at least, and
// not significant or within that), after at least Min. The plan's Step is
// then the ceiling: the longest a measurement lasts.
type PrecisionBound struct {
	Precision steady.Precision
	// Min is the shortest a measurement lasts, whatever its intervals say:
	// a few seconds' interval judges too little of the system.
	Min time.Duration
	// Series names the per-second series whose drift the steadiness test
	// judges ("nopm"): the ramp-up's criterion's, which the ramp-up's own
	// checks hold to the series the workload records; empty for the
	// workload's headline throughput.
	Series string
}

// DefaultPrecisionMin is the shortest a precision-bound measurement lasts
// when none is given: ten batches of three seconds, enough for the interval
// to see a memory of a few seconds.
const DefaultPrecisionMin = 30 * time.Second

// MinPrecisionMin is the shortest minimum accepted: ten seconds, ten
// batches of one.
const MinPrecisionMin = 10 * time.Second

// String says it the way the terminal and the docs do.
func (p PrecisionBound) String() string {
	var figs []string
	for _, t := range p.Precision.Targets {
		name := t.Name()
		if name == "" {
			name = "headline throughput"
		}
		figs = append(figs, fmt.Sprintf("%s ±%g%%", name, t.Percent))
	}
	return fmt.Sprintf("%s at 95 %% confidence, at least %s", strings.Join(figs, ", "), p.Min)
}

// Problems checks the bound against the ceiling and the workload whose
// series it reads, in words that fit a flag and a suite key alike: every
// problem at once, each with its fix. paced says the steps run open loop,
// which records the paced series too.
func (p PrecisionBound) Problems(w workload.Workload, ceiling time.Duration, paced bool) []error {
	var out []error
	if p.Min > ceiling {
		out = append(out, fmt.Errorf("precision: the shortest measurement (%s) is longer than the step (%s), its ceiling: lengthen the step or shorten the minimum", p.Min, ceiling))
	}
	if w == nil {
		return out
	}
	if len(SecondSeries(w)) == 0 {
		return append(out, fmt.Errorf("precision: %s records no per-second throughput to judge steadiness on: drop the precision bound", w.Name()))
	}
	var series []string
	for _, n := range workload.SecondFigureNames(w) {
		series = append(series, string(n))
	}
	if paced {
		for _, n := range workload.PacedSecondFigureNames() {
			series = append(series, string(n))
		}
	}
	for _, t := range p.Precision.Targets {
		switch {
		case t.TxType != "" && !slices.Contains(w.TxTypes(), t.TxType):
			out = append(out, fmt.Errorf("precision %s: %s has no transaction type %q; use one of %s", t, w.Name(), t.TxType, strings.Join(w.TxTypes(), ", ")))
		case t.TxType == "" && t.Series != "" && !slices.Contains(series, t.Series):
			out = append(out, fmt.Errorf("precision %s: %s records no per-second %s; use one of %s, or TYPE:p99 for a transaction type's percentile", t, w.Name(), t.Series, strings.Join(series, ", ")))
		}
	}
	return out
}

// measurement watches one step's measurement for its precision bound. A
// nil measurement (a measurement of fixed length) never ends it early and
// records nothing.
type measurement struct {
	bound   PrecisionBound
	series  string // the steadiness series
	targets []steady.PrecisionTarget
	txIndex []int // each target's transaction type's index, -1 for a series
	ceiling time.Duration
	tracker *steady.PrecisionTracker
	ended   string
	at      time.Duration
}

// newMeasurement prepares the tracker for one step of w.
func newMeasurement(b *PrecisionBound, w workload.Workload, ceiling time.Duration) (*measurement, error) {
	if b == nil {
		return nil, nil
	}
	m := &measurement{bound: *b, ceiling: ceiling}
	headline := ""
	if s := SecondSeries(w); len(s) > 0 {
		headline = s[0]
	}
	m.series = headline
	if b.Series != "" {
		m.series = b.Series
	}
	for _, t := range b.Precision.Targets {
		if t.TxType == "" && t.Series == "" {
			t.Series = headline
		}
		m.targets = append(m.targets, t)
		m.txIndex = append(m.txIndex, slices.Index(w.TxTypes(), t.TxType))
	}
	tr, err := steady.NewPrecisionTracker(steady.PrecisionConfig{Precision: steady.Precision{Targets: m.targets}, Confidence: stats.DefaultConfidence})
	if err != nil {
		return nil, err
	}
	m.tracker = tr
	return m, nil
}

// add feeds one measured second (its row and the counts of its
// transactions by type), measured after the measurement began, and says
// whether the measurement may end now.
func (m *measurement) add(values []results.Sample, interval []metrics.TxCounts, measured time.Duration) bool {
	if m == nil || m.ended != "" {
		return false
	}
	vals := make([]float64, len(m.targets))
	for i, t := range m.targets {
		vals[i] = math.NaN()
		if j := m.txIndex[i]; j >= 0 {
			if j < len(interval) && interval[j].Latency != nil && interval[j].Latency.TotalCount() > 0 {
				vals[i] = float64(interval[j].Latency.ValueAtQuantile(t.Quantile)) / 1000
			}
			continue
		}
		vals[i] = sampleValue(values, t.Series)
	}
	st := m.tracker.Add(vals, sampleValue(values, m.series))
	if measured >= m.bound.Min && st.Precise && st.Steady.Steady {
		m.ended, m.at = results.PrecisionReached, measured
		return true
	}
	return false
}

func sampleValue(values []results.Sample, name string) float64 {
	for _, s := range values {
		if s.Name == name {
			return s.Value
		}
	}
	return math.NaN() // a second without the value counts in no interval
}

// finish settles how a measurement that did not reach its bound ended:
// completed says it ran its full time.
func (m *measurement) finish(completed bool, measured time.Duration) {
	if m == nil || m.ended != "" {
		return
	}
	m.at = measured
	m.ended = results.PrecisionEnding(completed, m.tracker.Last().Steady.Steady)
}

// steadyText says the steadiness the measurement requires.
func (m *measurement) steadyText() string {
	return steady.SteadyText(m.series, steady.Precision{Targets: m.targets}, stats.DefaultConfidence)
}

// record is what the step's summary keeps of its measurement.
func (m *measurement) record() *results.StepPrecision {
	if m == nil {
		return nil
	}
	last := m.tracker.Last()
	r := &results.StepPrecision{Asked: m.bound.Precision.String(), Steady: m.steadyText(), Confidence: stats.DefaultConfidence,
		MinS: m.bound.Min.Seconds(), CeilingS: m.ceiling.Seconds(), Ended: m.ended, AtS: results.Round6(m.at.Seconds()),
		SteadyAtEnd: last.Steady.Steady, Drift: steady.DriftRecord(m.series, last.Steady.Trend)}
	r.Figures = m.tracker.FiguresRecord("")
	return r
}

// said is the terminal's line when a precision-bound measurement ends.
func (m *measurement) said(step string) string {
	if m == nil {
		return ""
	}
	r := m.record()
	var figs []string
	for _, f := range r.Figures {
		figs = append(figs, f.Said())
	}
	switch r.Ended {
	case results.PrecisionReached:
		return fmt.Sprintf("%s: precise after %.0f s of measurement: %s", step, r.AtS, strings.Join(figs, ", "))
	case results.PrecisionCeiling:
		return fmt.Sprintf("%s: not precise within the %s ceiling: %s", step, m.ceiling, strings.Join(figs, ", "))
	case results.PrecisionNotSteady:
		drift := "too few seconds for a line"
		if r.Drift != nil {
			drift = r.Drift.Said()
		}
		return fmt.Sprintf("%s: not steady at the %s ceiling (%s; wanted %s): %s", step, m.ceiling, drift, r.Steady, strings.Join(figs, ", "))
	}
	return ""
}
