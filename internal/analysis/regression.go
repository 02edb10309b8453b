package analysis

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
	// Compared counts the figures compared (a row's metric on both sides);
	// TooFew those with too few repeats on a side to call any difference,
	// and NeedPerSide how many a side needs.
	Compared, TooFew, NeedPerSide int
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
			switch {
			case row.Verdict == TooFewRepeats:
				c.TooFew++
			case row.Verdict == Significant && row.Judgement == Worsened:
				c.Regressions = append(c.Regressions, RegressionFinding{Kind: v.Kind, Row: row.Label, RepeatedDifference: row.RepeatedDifference})
			}
		}
	}
	return c
}
