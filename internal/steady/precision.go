package steady

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"dbio/internal/results"
	"dbio/internal/stats"
)

// A precision bound ends a measurement once its figures are known well
// enough: when the confidence interval of each named figure's mean is
// within ±P % of that mean, the interval read from the per-second series by
// batch means (stats.SeriesMeanInterval), and the series is steady. It is
// written as the --precision flag takes it:
//
//	2%                     the workload's headline throughput within ±2 %
//	nopm:2%                a per-second series by its name
//	new_order:p99:10%      a transaction type's per-second percentile
//	nopm:2%,new_order:p99:10%   every figure listed
//
// Which names a workload records is the runner's to check; here only the
// form is.

// ErrPrecision marks a precision bound that does not parse; the message
// names the accepted form.
var ErrPrecision = errors.New("malformed precision")

const precisionForm = "use P% (the headline throughput), SERIES:P% (e.g. nopm:2%) or TYPE:pQ:P% " +
	"(a transaction type's percentile, e.g. new_order:p99:10%), several joined by commas"

// PrecisionTarget is one figure a precision bound waits for.
type PrecisionTarget struct {
	// Series names a per-second series ("nopm", "tps"); empty for the
	// workload's headline throughput, which the runner chooses.
	Series string
	// TxType and Quantile, when TxType is set, name a transaction type's
	// per-second percentile instead ("new_order", 99).
	TxType   string
	Quantile float64
	// Percent is the half-width asked for, in % of the figure's mean.
	Percent float64
}

// Name is the figure's name as written: "nopm", "new_order:p99", or ""
// for the headline.
func (t PrecisionTarget) Name() string {
	if t.TxType != "" {
		return t.TxType + ":p" + strconv.FormatFloat(t.Quantile, 'g', -1, 64)
	}
	return t.Series
}

// String writes the target back in the form ParsePrecision reads.
func (t PrecisionTarget) String() string {
	p := strconv.FormatFloat(t.Percent, 'g', -1, 64) + "%"
	if n := t.Name(); n != "" {
		return n + ":" + p
	}
	return p
}

// Precision is a precision bound: every target must be reached.
type Precision struct {
	Targets []PrecisionTarget
}

// String writes the bound back in the form ParsePrecision reads.
func (p Precision) String() string {
	parts := make([]string, len(p.Targets))
	for i, t := range p.Targets {
		parts[i] = t.String()
	}
	return strings.Join(parts, ",")
}

// ParsePrecision reads a precision bound: "2%", "nopm:2%",
// "new_order:p99:10%", or several joined by commas. Names are lower-cased.
func ParsePrecision(s string) (Precision, error) {
	var p Precision
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return Precision{}, fmt.Errorf("%w %q: an empty item: %s", ErrPrecision, s, precisionForm)
		}
		t, err := parseTarget(item)
		if err != nil {
			return Precision{}, fmt.Errorf("%w %q: %v: %s", ErrPrecision, s, err, precisionForm)
		}
		if seen[t.Name()] {
			name := t.Name()
			if name == "" {
				name = "the headline"
			}
			return Precision{}, fmt.Errorf("%w %q: %s is given twice: give each figure once", ErrPrecision, s, name)
		}
		seen[t.Name()] = true
		p.Targets = append(p.Targets, t)
	}
	return p, nil
}

func parseTarget(item string) (PrecisionTarget, error) {
	parts := strings.Split(item, ":")
	for i := range parts {
		parts[i] = strings.ToLower(strings.TrimSpace(parts[i]))
	}
	var t PrecisionTarget
	pct, err := parsePercent(parts[len(parts)-1])
	if err != nil {
		return t, err
	}
	t.Percent = pct
	switch len(parts) {
	case 1:
	case 2:
		if parts[0] == "" {
			return t, errors.New("the series' name is empty")
		}
		t.Series = parts[0]
	case 3:
		if parts[0] == "" {
			return t, errors.New("the transaction type is empty")
		}
		q, ok := strings.CutPrefix(parts[1], "p")
		v, err := strconv.ParseFloat(q, 64)
		if !ok || err != nil || !(v > 0 && v < 100) {
			return t, fmt.Errorf("%q is not a percentile: write p50, p95, p99 or p99.9", parts[1])
		}
		t.TxType, t.Quantile = parts[0], v
	default:
		return t, errors.New("too many colons")
	}
	return t, nil
}

func parsePercent(s string) (float64, error) {
	num, ok := strings.CutSuffix(s, "%")
	if !ok {
		return 0, fmt.Errorf("%q is not a percentage: write the ± bound with %%, e.g. 2%%", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a percentage: write the ± bound with %%, e.g. 2%%", s)
	}
	if !(v > 0 && v < 100) {
		return 0, fmt.Errorf("%s is outside (0%%, 100%%): a bound of 0 is never reached, one of 100%% or more says nothing", s)
	}
	return v, nil
}

// PrecisionConfig is a tracker's setting.
type PrecisionConfig struct {
	Precision Precision
	// Confidence is the intervals' coverage, 0.95 for 95 %, and the
	// steadiness test's.
	Confidence float64
}

// A precision bound also asks that the series it reads be steady: a mean
// of a throughput that climbed or fell all along says when the
// measurement stopped, not what the system does. The test judges the whole
// measurement so far, not its last few seconds: the least-squares line
// through the steadiness series, and its drift from the measurement's
// start to its end, with the interval of that drift read from batch means
// (stats.SeriesDrift), so that the seconds' memory is allowed for as the
// figures' intervals allow for it.
//
// The series is steady when that interval is no wider than ±L and the
// drift is either within its noise (not significant) or, interval and
// all, within ±L, where L, the drift allowed, is twice the tightest
// precision asked and never under DriftLimitPct: a line that drifts by 2P
// across the measurement starts and ends within ±P of the mean, where the
// bound asked the mean to be known. Both parts matter. "Not significant"
// alone lets a noisy machine hide any change behind a wide interval (a
// throughput cut to a tenth in mid-step, on the loaded CI machine: a drift
// of -243 % ± 260 %); the width's limit keeps such a step running, to its
// ceiling if need be. An interval within ±L alone would
// ask of a short step's line three or four times the precision its mean
// needs. A series too short, or of too long a memory, for ten batches is
// not steady yet, and one whose level changes by more than L in
// mid-measurement never is.

// DriftLimitPct is the least drift allowed, in % of the mean: the 10 %
// that SNIA's steady-state slope rule allows across its window.
const DriftLimitPct = 10.0

// Steadiness is the steadiness test's verdict on the measurement so far.
type Steadiness struct {
	// Trend is the steadiness series' line across the measurement.
	Trend stats.SeriesTrend
	// LimitPct is the drift allowed, in % of the mean (see DriftLimit).
	LimitPct float64
	// Steady is true when Trend is available, its interval's half-width
	// at most LimitPct, and its drift within that half-width or, with it,
	// within LimitPct.
	Steady bool
}

// DriftLimit is the drift a bound allows across the measurement, in % of
// the mean: twice its tightest precision, at least DriftLimitPct.
func (p Precision) DriftLimit() float64 {
	tightest := math.Inf(1)
	for _, t := range p.Targets {
		tightest = min(tightest, t.Percent)
	}
	return max(DriftLimitPct, 2*tightest)
}

// SteadyText says the steadiness test the bound p applies to series (its
// name, e.g. "nopm"), in the words run.json and the terminal use.
func SteadyText(series string, p Precision, confidence float64) string {
	return fmt.Sprintf("%s's drift across the measurement known within ±%s %% at %s %% confidence, and not significant or within it",
		series, strconv.FormatFloat(p.DriftLimit(), 'f', -1, 64), strconv.FormatFloat(100*confidence, 'f', -1, 64))
}

// PrecisionTracker judges a measurement second by second: Add the second's
// value of each target (NaN when the second has none, such as a
// transaction type that completed nothing) and of the steadiness series,
// and it says whether every target's interval is within its bound and the
// series steady. It is not safe for concurrent use.
type PrecisionTracker struct {
	cfg    PrecisionConfig
	series [][]float64
	steady []float64
	second int
	last   PrecisionStatus
}

// NewPrecisionTracker checks cfg and returns a tracker.
func NewPrecisionTracker(cfg PrecisionConfig) (*PrecisionTracker, error) {
	if len(cfg.Precision.Targets) == 0 {
		return nil, fmt.Errorf("%w: no figure to wait for", ErrPrecision)
	}
	if !(cfg.Confidence > 0 && cfg.Confidence < 1) {
		return nil, fmt.Errorf("confidence %v: %w", cfg.Confidence, stats.ErrConfidence)
	}
	return &PrecisionTracker{cfg: cfg, series: make([][]float64, len(cfg.Precision.Targets))}, nil
}

// PrecisionStatus is the verdict after one second.
type PrecisionStatus struct {
	// Second counts the seconds added, from 1.
	Second int
	// Intervals are each target's interval so far, in the targets' order.
	Intervals []stats.SeriesInterval
	// Precise is true when every interval is available and within its bound.
	Precise bool
	// Steady is the steadiness test's verdict on the seconds so far.
	Steady Steadiness
}

// Add feeds one second: values in the targets' order, and the steadiness
// series' value (a NaN one is left out of its line).
func (t *PrecisionTracker) Add(values []float64, steadyValue float64) PrecisionStatus {
	t.second++
	if !math.IsNaN(steadyValue) && !math.IsInf(steadyValue, 0) {
		t.steady = append(t.steady, steadyValue)
	}
	st := PrecisionStatus{Second: t.second, Precise: true, Steady: t.steadiness()}
	for i, target := range t.cfg.Precision.Targets {
		if i < len(values) && !math.IsNaN(values[i]) && !math.IsInf(values[i], 0) {
			t.series[i] = append(t.series[i], values[i])
		}
		var iv stats.SeriesInterval
		if len(t.series[i]) > 0 {
			// The series holds only finite values and the confidence was
			// checked: no error can come back.
			iv, _ = stats.SeriesMeanInterval(t.series[i], t.cfg.Confidence)
		}
		st.Intervals = append(st.Intervals, iv)
		if !(iv.RelHalfWidth()*100 <= target.Percent) {
			st.Precise = false
		}
	}
	t.last = st
	return st
}

func (t *PrecisionTracker) steadiness() Steadiness {
	s := Steadiness{LimitPct: t.cfg.Precision.DriftLimit()}
	if len(t.steady) == 0 {
		return s
	}
	// Only finite values and a checked confidence: no error.
	s.Trend, _ = stats.SeriesDrift(t.steady, t.cfg.Confidence)
	drift, half := 100*math.Abs(s.Trend.RelDrift()), 100*s.Trend.RelHalfWidth()
	s.Steady = s.Trend.Available && half <= s.LimitPct && (drift <= half || drift+half <= s.LimitPct)
	return s
}

// Last is the verdict after the last second added.
func (t *PrecisionTracker) Last() PrecisionStatus { return t.last }

// DriftRecord is what run.json keeps of a trend on series: nil when there
// was no line (fewer than two seconds) or its mean was zero, without an
// interval when the seconds' memory left none.
func DriftRecord(series string, t stats.SeriesTrend) *results.PrecisionDrift {
	if t.N < 2 || t.Mean == 0 {
		return nil
	}
	d := &results.PrecisionDrift{Series: series, Pct: results.Round6(100 * t.RelDrift())}
	if t.Available {
		half := results.Round6(100 * t.RelHalfWidth())
		d.HalfPct, d.Significant, d.BatchS, d.Batches = &half, t.Significant(), t.BatchSize, t.Batches
	}
	return d
}

// FiguresRecord is what run.json keeps of each target's interval after the
// last second added, in the targets' order; a target without a name is
// recorded as unnamed (the measurement's headline figure).
func (t *PrecisionTracker) FiguresRecord(unnamed string) []results.PrecisionFigure {
	var out []results.PrecisionFigure
	for i, target := range t.cfg.Precision.Targets {
		name := target.Name()
		if name == "" {
			name = unnamed
		}
		f := results.PrecisionFigure{Name: name, AskedPct: target.Percent}
		if i < len(t.last.Intervals) {
			iv := t.last.Intervals[i]
			f.Seconds, f.Mean = iv.N, results.Round6(iv.Mean)
			if iv.Available {
				lo, hi, pct := results.Round6(iv.Lo), results.Round6(iv.Hi), results.Round6(100*iv.RelHalfWidth())
				f.Lo, f.Hi, f.BatchS, f.Batches = &lo, &hi, iv.BatchSize, iv.Batches
				if !math.IsInf(pct, 0) {
					f.ReachedPct = &pct
				}
			}
		}
		out = append(out, f)
	}
	return out
}
