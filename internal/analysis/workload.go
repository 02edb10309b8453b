package analysis

import (
	"math"

	"dbio/internal/results"
)

// Peak is the index of the step with the highest value of a figure, the
// earliest on a tie; -1 without steps.
func Peak(steps []results.Step, name results.FigureName) int {
	if len(steps) == 0 {
		return -1
	}
	peak := 0
	for i, s := range steps {
		if Value(s, name) > Value(steps[peak], name) {
			peak = i
		}
	}
	return peak
}

// Scaling is how a per-user figure moved from a run's first step to its
// last: each value, and the last in % of the first (what each user got of
// what the first step's users did). ok is false without two steps that
// both have the figure.
type Scaling struct {
	First, Last   results.Step
	From, To, Pct float64
}

// PerUserScaling reads Scaling for TPM per user.
func PerUserScaling(steps []results.Step) (Scaling, bool) {
	if len(steps) < 2 {
		return Scaling{}, false
	}
	first, last := steps[0], steps[len(steps)-1]
	a, b := Value(first, results.FigureTPMPerUser), Value(last, results.FigureTPMPerUser)
	if math.IsNaN(a) || math.IsNaN(b) || a <= 0 {
		return Scaling{}, false
	}
	return Scaling{First: first, Last: last, From: a, To: b, Pct: b / a * 100}, true
}

// HeaviestDriver is the index of the step in which the load generator used
// the largest share of the CPU, -1 when no step sampled it.
func HeaviestDriver(steps []results.Step) int {
	best := -1
	for i, s := range steps {
		if s.Telemetry != nil && s.Telemetry.Driver != nil && (best < 0 || s.Telemetry.Driver.CPUPct > steps[best].Telemetry.Driver.CPUPct) {
			best = i
		}
	}
	return best
}

// HitRatio is the engine's buffer hits over hits and reads in %, from the
// per-second means of its counters (NaN without both).
func HitRatio(t *results.TelemetrySummary) float64 {
	hit, read := t.Mean("engine_blks_hit_per_s"), t.Mean("engine_blks_read_per_s")
	return hit / (hit + read) * 100
}
