package analysis

import "math"

// RegressionFinding is one figure of one row (a user count, a fio point)
// that a run's repeats put worse than the baseline's beyond the noise.
type RegressionFinding struct {
	Kind, Row string
	RepeatedDifference
}

// RegressionCheck is what a run says against its baseline: the figures
// worse beyond the noise, and how many compared rows could not be told
// from noise for want of repeats.
type RegressionCheck struct {
	Regressions []RegressionFinding
	// Diagnostics are the diagnostic metrics (Metric.Diagnostic) worse
	// beyond the noise: said beside the regressions, never one alone.
	Diagnostics []RegressionFinding
	// Compared counts the figures compared (a row's metric on both sides);
	// TooFew those with too few repeats on a side to call any difference,
	// and NeedPerSide how many a side needs.
	Compared, TooFew, NeedPerSide int
	// AgainstSpread counts the figures of a single run read against the
	// spread of at least EarlierRunsNeeded earlier runs (AgainstEarlier)
	// rather than as repeats against repeats.
	AgainstSpread int
}

// EarlierRunsNeeded is how many earlier runs of its configuration a single
// run is read against. When nothing changed, a run is worse than every one
// of n earlier runs by chance with probability 1/(n+1) at most (its rank
// among n+1 exchangeable runs): 5 % from 19 on.
const EarlierRunsNeeded = 19

// AgainstEarlier reads one run's value of a figure (d.B, a single value)
// against the values of earlier runs of its configuration (d.A): a
// regression when it is worse than every one of them, they are at least
// EarlierRunsNeeded, and it is further from their median than their whole
// spread (max − min), so that a run merely at the edge of the noise is not
// one. The verdict's P is the rank test's one-sided p-value, 1/(n+1).
func AgainstEarlier(d RepeatedDifference) (RepeatedDifference, bool) {
	if d.B.N != 1 || d.A.N < EarlierRunsNeeded {
		return d, false
	}
	a, b := d.A, d.B.Median
	diff := Compare(Side{Mean: a.Median, Runs: a.Values, Min: a.Min, Max: a.Max}, Side{Mean: b, Runs: []float64{b}, Min: b, Max: b}, d.Metric)
	worseThanAll := (b < a.Median && b < a.Min) || (b > a.Median && b > a.Max)
	beyondSpread := math.Abs(b-a.Median) > a.Max-a.Min
	d.Difference, d.P, d.WithinNoise = diff, 1/float64(a.N+1), worseThanAll && !beyondSpread
	d.Verdict = NotSignificant
	if diff.Judgement == Worsened && worseThanAll && beyondSpread {
		d.Verdict = Significant
	} else if diff.Judgement != NoValue {
		d.Judgement = Unchanged
	}
	return d, true
}

// CheckRegressions reads run's repeats against baseline's as a comparison
// of repeat sets does (CompareRepeatedSets): a figure is a regression only
// when the difference is significant and beyond each side's own spread,
// and worse for the figure.
func CheckRegressions(baseline, run []*Recorded) RegressionCheck {
	var c RegressionCheck
	for _, v := range CompareRepeatedSets(baseline, run) {
		for _, row := range v.Rows {
			if !row.Has {
				continue
			}
			c.Compared++
			if c.NeedPerSide == 0 {
				c.NeedPerSide = row.NeedPerSide
			}
			if row.Verdict == TooFewRepeats {
				if d, ok := AgainstEarlier(row.RepeatedDifference); ok {
					c.AgainstSpread++
					row.RepeatedDifference = d
				}
			}
			switch {
			case row.Verdict == TooFewRepeats:
				c.TooFew++
			case row.Verdict == Significant && row.Judgement == Worsened && row.Metric.Diagnostic:
				c.Diagnostics = append(c.Diagnostics, RegressionFinding{Kind: v.Kind, Row: row.Label, RepeatedDifference: row.RepeatedDifference})
			case row.Verdict == Significant && row.Judgement == Worsened:
				c.Regressions = append(c.Regressions, RegressionFinding{Kind: v.Kind, Row: row.Label, RepeatedDifference: row.RepeatedDifference})
			}
		}
	}
	return c
}
