package analysis

import (
	"math"

	"dbio/internal/results"
	"dbio/internal/stats"
)

// RunHeadline is a run's headline figure at its best step and what it is
// ("TPM at its best step"): the figure a sequential A/B judges each run
// by, in dbio ab and a suite's comparisons alike.
func RunHeadline(l *results.Loaded) (float64, string, bool) {
	for _, h := range Headlines(NewRecorded(l)) {
		if len(h.Values) > 0 && !math.IsNaN(h.Values[0]) {
			return h.Values[0], h.Figures[0].Title + " at its best step", true
		}
	}
	return 0, "", false
}

// LookSequential compares A's and B's figures so far (a run's headline
// each, in run order) with design d, records the look in seq with the
// study's verdict so far, and says whether the study is decided.
func LookSequential(d stats.Sequential, margin float64, seq *results.ABSequential, a, b []float64) (bool, error) {
	l, err := d.Look(a, b, margin)
	if err != nil {
		return false, err
	}
	look := results.ABLook{N: l.N, A: a[:l.N], B: b[:l.N], Z: results.Round6(l.Z)}
	if !math.IsInf(l.Bound, 0) {
		bound := results.Round6(l.Bound)
		look.Bound = &bound
	}
	if l.Ratio.Available {
		lo, hi := results.Round6(l.Ratio.Lo), results.Round6(l.Ratio.Hi)
		look.RatioLo, look.RatioHi = &lo, &hi
	}
	seq.Looks = append(seq.Looks, look)
	seq.RunsPerSide, seq.Decided = l.N, l.Decided
	switch {
	case l.Decided:
		seq.Verdict = l.Verdict.String()
	case l.N == d.MaxPerSide:
		seq.Verdict = "undecided at the maximum"
	default:
		seq.Verdict = "undecided"
	}
	return l.Decided, nil
}
