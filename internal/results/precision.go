package results

import (
	"fmt"
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
	// Steady is the steadiness also required, a criterion over a window:
	// "tpm_slope:0.5% over 20s".
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
	// SteadyAtEnd says the last window was steady when it ended.
	SteadyAtEnd bool `json:"steady_at_end"`
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
