package fio

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"dbio/internal/fioformat"
	"dbio/internal/results"
	"dbio/internal/stats"
	"dbio/internal/steady"
)

// PrecisionBound ends each point once its figures are known well enough:
// every named figure's 95 % confidence interval, read by batch means from
// the seconds fio reports while it runs, within ±P % of its value, and the
// IOPS steady across the point's measurement (their least-squares drift
// known within twice the tightest P, 10 % at least, and not significant or
// within that; steady.PrecisionTracker), after at
// least Min. The point's runtime is then its ceiling. fio runs a point as
// one process and its own steady-state options judge a slope or a spread,
// never an interval, so dbio judges the seconds itself and interrupts fio,
// which stops its jobs and writes its report over the seconds it ran: the
// point's figures are those of the measured seconds.
type PrecisionBound struct {
	Precision steady.Precision
	// Min is the shortest a point's measurement lasts, whatever its
	// intervals say.
	Min time.Duration
}

// DefaultPrecisionMin is the shortest a point's measurement lasts when
// none is given, and MinPrecisionMin the shortest accepted: the database
// steps' (ten batches of three seconds, and ten of one).
const (
	DefaultPrecisionMin = 30 * time.Second
	MinPrecisionMin     = 10 * time.Second
)

// steadyText says the steadiness as run.json and the terminal write it.
func (b PrecisionBound) steadyText() string {
	return steady.SteadyText(string(results.FigureIOPS), b.Precision, stats.DefaultConfidence)
}

// String says the bound the way the terminal and the dry run do.
func (b PrecisionBound) String() string {
	var figs []string
	for _, t := range b.Precision.Targets {
		name := t.Name()
		if name == "" {
			name = string(results.FigureIOPS)
		}
		figs = append(figs, fmt.Sprintf("%s ±%g%%", name, t.Percent))
	}
	return fmt.Sprintf("%s at 95 %% confidence, at least %s", strings.Join(figs, ", "), b.Min)
}

// PrecisionFigureNames are the names a fio point's bound may wait for:
// the point's per-second throughput and completion latency as its figures
// are named, and any percentile written pQ (p50, p99, p99.9).
var PrecisionFigureNames = []string{string(results.FigureIOPS), string(results.FigureMBPerSec), string(results.FigureLatMeanUS),
	string(results.FigureLatP50US), string(results.FigureLatP95US), string(results.FigureLatP99US), string(results.FigureLatP999US)}

// precisionPercentile is the percentile a figure's name asks for: "p99"
// and "lat_p99_us" alike, "p99.9" and "lat_p99_9_us" alike.
func precisionPercentile(name string) (float64, bool) {
	switch name {
	case string(results.FigureLatP50US):
		return 50, true
	case string(results.FigureLatP95US):
		return 95, true
	case string(results.FigureLatP99US):
		return 99, true
	case string(results.FigureLatP999US):
		return 99.9, true
	}
	q, ok := strings.CutPrefix(name, "p")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(q, 64)
	return v, err == nil && v > 0 && v < 100
}

// precisionValue is a second's value of the bound's figure name ("" for
// the headline, the IOPS); NaN when the second has none.
func precisionValue(name string, l fioformat.Live) float64 {
	switch name {
	case "", string(results.FigureIOPS):
		return l.IOPS
	case string(results.FigureMBPerSec):
		return l.MBPerSec
	case string(results.FigureLatMeanUS), "mean":
		if l.HasMean {
			return l.MeanUS
		}
		return math.NaN()
	}
	if q, ok := precisionPercentile(name); ok {
		if v, ok := l.At(q); ok {
			return v
		}
	}
	return math.NaN()
}

// problems checks the bound against the configuration it ends points of,
// every problem with its fix; profile is the profile's name.
func (b PrecisionBound) problems(c Config, profile Profile) []string {
	var out []string
	for _, t := range b.Precision.Targets {
		name := t.Name()
		if t.TxType != "" {
			out = append(out, fmt.Sprintf("--precision %s: a fio point has no transaction types; name one of its figures: %s, or pQ for a percentile (e.g. p99:10%%)",
				t, strings.Join(PrecisionFigureNames, ", ")))
			continue
		}
		if _, ok := precisionPercentile(name); name == "" || name == "mean" || ok || slices.Contains(PrecisionFigureNames, name) {
			continue
		}
		out = append(out, fmt.Sprintf("--precision %s: a fio point records no per-second %s; use one of %s, or pQ for a percentile (e.g. p99:10%%)",
			t, name, strings.Join(PrecisionFigureNames, ", ")))
	}
	runtime := c.Runtime
	if runtime == 0 && profile != nil {
		runtime = profile.DefaultRuntime()
	}
	if runtime > 0 && b.Min > runtime {
		out = append(out, fmt.Sprintf("--precision-min %s is longer than each point's runtime (%s), its ceiling: lengthen --runtime or shorten --precision-min", b.Min, runtime))
	}
	if c.SteadyState != "" {
		out = append(out, "--precision and --steady-state: fio's steady state ends a point on its own rule; give one of them")
	}
	if c.Fleet() {
		out = append(out, "--precision: points on other hosts run through fio's client, which dbio cannot stop early; run without --precision, or on this machine's targets")
	}
	if _, ok := profile.(rounder); ok {
		out = append(out, fmt.Sprintf("--precision: the %s profile's rounds are judged steady round by round; run it without --precision", profile.Name()))
	}
	return out
}

// pointPrecision watches one point's seconds for its bound. A nil one
// (a point of fixed length) never ends the point and records nothing.
type pointPrecision struct {
	bound   PrecisionBound
	ceiling time.Duration
	tracker *steady.PrecisionTracker
	ended   string
	at      time.Duration
}

func newPointPrecision(b *PrecisionBound, ceiling time.Duration) (*pointPrecision, error) {
	if b == nil {
		return nil, nil
	}
	tr, err := steady.NewPrecisionTracker(steady.PrecisionConfig{Precision: b.Precision, Confidence: stats.DefaultConfidence})
	if err != nil {
		return nil, err
	}
	return &pointPrecision{bound: *b, ceiling: ceiling, tracker: tr}, nil
}

// add feeds one second fio reported and says whether the point may end now.
func (m *pointPrecision) add(l fioformat.Live) bool {
	if m == nil || m.ended != "" {
		return false
	}
	vals := make([]float64, len(m.bound.Precision.Targets))
	for i, t := range m.bound.Precision.Targets {
		vals[i] = precisionValue(t.Name(), l)
	}
	st := m.tracker.Add(vals, l.IOPS)
	measured := time.Duration(l.MeasuredS * float64(time.Second))
	if measured >= m.bound.Min && st.Precise && st.Steady.Steady {
		m.ended, m.at = results.PrecisionReached, measured
		return true
	}
	return false
}

// finish settles how a point that did not reach its bound ended: completed
// says fio ran its full runtime, measured is what it measured.
func (m *pointPrecision) finish(completed bool, measured time.Duration) {
	if m == nil || m.ended != "" {
		return
	}
	m.at = measured
	m.ended = results.PrecisionEnding(completed, m.tracker.Last().Steady.Steady)
}

// record is what the point's step keeps of its measurement, in the form
// the database steps keep theirs.
func (m *pointPrecision) record() *results.StepPrecision {
	if m == nil {
		return nil
	}
	last := m.tracker.Last()
	r := &results.StepPrecision{Asked: m.bound.Precision.String(), Steady: m.bound.steadyText(), Confidence: stats.DefaultConfidence,
		MinS: m.bound.Min.Seconds(), CeilingS: m.ceiling.Seconds(), Ended: m.ended, AtS: results.Round6(m.at.Seconds()), SteadyAtEnd: last.Steady.Steady,
		Drift: steady.DriftRecord(string(results.FigureIOPS), last.Steady.Trend)}
	r.Figures = m.tracker.FiguresRecord(string(results.FigureIOPS))
	return r
}

// said is the terminal's line when a precision-bound point ends.
func (m *pointPrecision) said() string {
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
		return fmt.Sprintf("precise after %.0f s of measurement: %s", r.AtS, strings.Join(figs, ", "))
	case results.PrecisionCeiling:
		return fmt.Sprintf("not precise within the %s ceiling: %s", m.ceiling, strings.Join(figs, ", "))
	case results.PrecisionNotSteady:
		drift := "too few seconds for a line"
		if r.Drift != nil {
			drift = r.Drift.Said()
		}
		return fmt.Sprintf("not steady at the %s ceiling (%s; wanted %s): %s", m.ceiling, drift, r.Steady, strings.Join(figs, ", "))
	}
	return ""
}
