package results

import (
	"fmt"
	"math"
	"strconv"
)

// How a precision-bound step's measurement ended (StepPrecision.Ended).
const (
	// PrecisionReached: every figure's interval was within its bound and
	// the series steady, after at least the minimum; the step ended there.
	PrecisionReached = "precision reached"
	// PrecisionCeiling: the step ran to its full time (the ceiling), steady
	// at its end, without every figure reaching its bound.
	PrecisionCeiling = "ceiling"
	// PrecisionNotSteady: the step ran to its ceiling and was not steady at
	// its end; its figures describe a moving system.
	PrecisionNotSteady = "not steady"
	// PrecisionStopped: the step stopped early (interrupted or failed)
	// before either.
	PrecisionStopped = "stopped"
)

// PrecisionEnding is how a measurement that did not reach its bound
// ended: stopped when it did not run its full time (completed false),
// else at its ceiling, steady or not at its end.
func PrecisionEnding(completed, steadyAtEnd bool) string {
	switch {
	case !completed:
		return PrecisionStopped
	case steadyAtEnd:
		return PrecisionCeiling
	default:
		return PrecisionNotSteady
	}
}

// StepPrecision is the measurement of a step that was to end once its
// figures were precise: what was asked, how it ended and the intervals it
// reached.
type StepPrecision struct {
	// Asked is the bound as given: "nopm:2%,new_order:p99:10%".
	Asked string `json:"asked"`
	// Steady is the steadiness also required, in words: "nopm's drift
	// across the measurement known within ±40 % at 95 % confidence, and
	// not significant or within it" (runs recorded with the first drift
	// test say "not significant at 95 % or within ±20 %").
	// Runs recorded before the drift test say a criterion over a window
	// here ("tpm_slope:0.5% over 20s").
	Steady string `json:"steady"`
	// Confidence is the intervals' nominal coverage (0.95).
	Confidence float64 `json:"confidence"`
	// MinS is the shortest the measurement could last, CeilingS the longest.
	MinS     float64 `json:"min_s"`
	CeilingS float64 `json:"ceiling_s"`
	// Ended is one of PrecisionReached, PrecisionCeiling,
	// PrecisionNotSteady and PrecisionStopped.
	Ended string `json:"ended"`
	// AtS is how long the measurement lasted when it ended.
	AtS float64 `json:"at_s"`
	// SteadyAtEnd says the series was steady when the measurement ended.
	SteadyAtEnd bool `json:"steady_at_end"`
	// Drift is what the steadiness test judged when the measurement ended:
	// the steadiness series' line across the measurement. Absent when the
	// seconds were too few (or their memory too long) for one, and in runs
	// recorded before the drift test.
	Drift *PrecisionDrift `json:"drift,omitempty"`
	// Figures are the intervals each figure reached, in the order asked.
	Figures []PrecisionFigure `json:"figures"`
}

// PrecisionFigure is one figure's interval when the measurement ended.
type PrecisionFigure struct {
	// Name is the per-second series ("nopm") or a transaction type's
	// percentile ("new_order:p99", in ms).
	Name string `json:"name"`
	// AskedPct is the half-width asked for, in % of the mean.
	AskedPct float64 `json:"asked_pct"`
	// Seconds counts the seconds with a value.
	Seconds int `json:"seconds"`
	// Mean is the mean of those seconds; Lo and Hi the interval, absent
	// when the seconds' memory left no interval (see BatchS).
	Mean float64  `json:"mean"`
	Lo   *float64 `json:"lo,omitempty"`
	Hi   *float64 `json:"hi,omitempty"`
	// ReachedPct is the half-width reached, in % of the mean; absent
	// without an interval.
	ReachedPct *float64 `json:"reached_pct,omitempty"`
	// BatchS and Batches are the batch means the interval was read from:
	// batches of BatchS seconds, the length at which successive batch
	// means were no longer correlated.
	BatchS  int `json:"batch_s,omitempty"`
	Batches int `json:"batches,omitempty"`
}

// PrecisionDrift is the least-squares line of a measurement's steadiness
// series, judged against the series' noise by batch means.
type PrecisionDrift struct {
	// Series names the per-second series judged ("nopm", "iops").
	Series string `json:"series"`
	// Pct is the line's change from the measurement's start to its end, in
	// % of the series' mean (signed: negative when it fell), and HalfPct
	// the half-width of its interval at the bound's confidence; absent
	// when the seconds' memory left no interval (no batch length left
	// uncorrelated noise about the line, as when the level steps).
	Pct     float64  `json:"pct"`
	HalfPct *float64 `json:"half_pct,omitempty"`
	// Significant says the interval excludes zero: the series moved more
	// than its noise explains.
	Significant bool `json:"significant"`
	// BatchS and Batches are the batch means the line was fitted to, with
	// the interval.
	BatchS  int `json:"batch_s,omitempty"`
	Batches int `json:"batches,omitempty"`
}

// Said is the drift as the terminal says it: "nopm drifted +3.1 % ± 8.2 %",
// or "tps drifted -62 % (no interval: the seconds scatter about no line)".
func (d PrecisionDrift) Said() string {
	sign := "+"
	if d.Pct < 0 {
		sign = "-"
	}
	out := fmt.Sprintf("%s drifted %s%s %%", d.Series, sign, percentDigits(math.Abs(d.Pct)))
	if d.HalfPct == nil {
		return out + " (no interval: the seconds scatter about no line)"
	}
	return out + " ± " + percentDigits(*d.HalfPct) + " %"
}

// Said is the figure as a terminal line names it when its measurement
// ends: "nopm ±1.8 % (asked ±2 %)". A wide interval keeps plain digits
// (±150 %, not ±1.5e+02 %).
func (f PrecisionFigure) Said() string {
	reached := "no interval yet"
	if f.ReachedPct != nil {
		reached = "±" + percentDigits(*f.ReachedPct) + " %"
	}
	return fmt.Sprintf("%s %s (asked ±%s %%)", f.Name, reached, strconv.FormatFloat(f.AskedPct, 'f', -1, 64))
}

// percentDigits gives a reached half-width two significant digits under
// 10 % and whole numbers above.
func percentDigits(v float64) string {
	switch {
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
