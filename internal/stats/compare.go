package stats

import (
	"fmt"
	"math"
	"slices"
)

// DefaultAlpha is the significance level of comparisons: 0.05.
const DefaultAlpha = 0.05

// Verdict is what a comparison of A and B concludes.
type Verdict int

const (
	// TooFewRepeats means the repeats could not show a difference whatever
	// their values: the U test cannot reach alpha with these sizes, or the
	// noise rule needs intervals the sizes cannot give.
	TooFewRepeats Verdict = iota
	// NoDifference means no significant difference: either the test did not
	// reach alpha, or it did but the difference lies within the noise
	// between repeats (see Comparison.WithinNoise).
	NoDifference
	// Different means a significant difference beyond the noise.
	Different
)

// String names the verdict as a report states it.
func (v Verdict) String() string {
	switch v {
	case TooFewRepeats:
		return "too few repeats to tell"
	case NoDifference:
		return "no significant difference"
	case Different:
		return "significant difference"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Direction says where B's median lies relative to A's.
type Direction int

const (
	// Same means equal medians.
	Same Direction = iota
	// Higher means B's median is above A's.
	Higher
	// Lower means B's median is below A's.
	Lower
)

// String names the direction.
func (d Direction) String() string {
	switch d {
	case Same:
		return "same"
	case Higher:
		return "higher"
	case Lower:
		return "lower"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// NoiseRule decides when a difference the U test found significant also
// lies beyond the noise measured between repeats of the same configuration.
// The U test alone can call a consistent 1 % shift significant even when each
// configuration's own repeats wander by 5 %; a rule keeps such a shift from
// being reported as a difference.
type NoiseRule int

const (
	// SpreadRule (the default) requires the medians to differ by more than
	// the range of A's repeats and more than the range of B's: the
	// difference must exceed what repeating either configuration already
	// produced. When every value is positive (throughput, latency) the
	// noise between repeats is multiplicative, so the rule reads ratios:
	// median(B)/median(A) must be further from 1 than max/min of either
	// side. A side that wanders from 3,000 to 16,000 tx/s then does not hide
	// a 100x difference from a side at 50, while a 7 % shift inside a side's
	// own 8 % range stays noise. With a zero or negative value the rule
	// reads differences (max - min).
	SpreadRule NoiseRule = iota
	// IntervalRule requires the confidence intervals of the two medians
	// (at 1 - alpha) not to overlap. It needs MedianRepeatsNeeded repeats
	// per side (6 at alpha 0.05); with fewer the verdict is TooFewRepeats.
	IntervalRule
	// TestOnly applies no rule beyond the U test.
	TestOnly
)

// String names the rule.
func (r NoiseRule) String() string {
	switch r {
	case SpreadRule:
		return "difference beyond each side's range"
	case IntervalRule:
		return "median intervals apart"
	case TestOnly:
		return "U test only"
	}
	return fmt.Sprintf("NoiseRule(%d)", int(r))
}

// Options tune a comparison; the zero value means alpha 0.05 and SpreadRule.
type Options struct {
	// Alpha is the significance level; 0 means DefaultAlpha.
	Alpha float64
	// Noise is the rule a significant difference must also pass.
	Noise NoiseRule
}

// RatioInterval is a distribution-free confidence interval of B/A: the
// Hodges-Lehmann interval that goes with the U test, read from the sorted
// ratios b/a of all N1·N2 pairs, the k-th smallest to the k-th largest, with
// k from the U distribution. It is defined only when every value of A is
// positive and no value of B negative (throughput, latency).
type RatioInterval struct {
	// Available is false when the sizes are too small for the confidence
	// (3 against 3 at 95 %) or the values are not all positive.
	Available bool
	// Lo and Hi bound the ratio B/A.
	Lo, Hi float64
	// Confidence is the interval's actual coverage.
	Confidence float64
}

// Comparison is the outcome of comparing repeats of configuration A with
// repeats of configuration B.
type Comparison struct {
	// A and B summarise each side.
	A, B Summary
	// Test is the U test of A against B.
	Test UTest
	// Alpha is the significance level used.
	Alpha float64
	// MinP is the smallest p-value the U test could give with these sizes.
	MinP float64
	// NeedPerSide is the smallest number of repeats per side with which a
	// difference could be shown under the rule used (4 at alpha 0.05 with
	// SpreadRule, 6 with IntervalRule).
	NeedPerSide int
	// Ratio is median(B) / median(A); +Inf or -Inf when A's median is zero
	// and B's is not, 1 when both are zero.
	Ratio float64
	// Direction says whether B's median is higher or lower than A's.
	Direction Direction
	// RatioInterval is the confidence interval of B/A at 1 - Alpha.
	RatioInterval RatioInterval
	// Noise is the rule applied.
	Noise NoiseRule
	// WithinNoise is true when the U test reached alpha but the difference
	// failed the noise rule; the verdict is then NoDifference.
	WithinNoise bool
	// Verdict is the conclusion.
	Verdict Verdict
}

// Compare tests whether B's repeats differ from A's. The verdict is:
//   - TooFewRepeats when MinP(len(a), len(b)) ≥ alpha (no outcome could be
//     significant), or when the noise rule needs median intervals that the
//     sizes cannot give; NeedPerSide says how many repeats would do;
//   - NoDifference when the U test's p-value is at least alpha, or when it is
//     below but the difference fails the noise rule (WithinNoise);
//   - Different otherwise, with Ratio and RatioInterval saying by how much.
//
// Neither slice is modified.
func Compare(a, b []float64, opt Options) (Comparison, error) {
	alpha := opt.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	if err := checkLevel(alpha); err != nil {
		return Comparison{}, fmt.Errorf("alpha %v: %w", alpha, err)
	}
	if opt.Noise < SpreadRule || opt.Noise > TestOnly {
		return Comparison{}, fmt.Errorf("unknown noise rule %d", int(opt.Noise))
	}
	sa, err := sortedCopy(a)
	if err != nil {
		return Comparison{}, fmt.Errorf("sample A: %w", err)
	}
	sb, err := sortedCopy(b)
	if err != nil {
		return Comparison{}, fmt.Errorf("sample B: %w", err)
	}
	confidence := 1 - alpha
	c := Comparison{
		A:           summarizeSorted(sa, confidence),
		B:           summarizeSorted(sb, confidence),
		Test:        mannWhitneySorted(sa, sb),
		Alpha:       alpha,
		MinP:        MinP(len(sa), len(sb)),
		NeedPerSide: RepeatsNeeded(alpha),
		Noise:       opt.Noise,
	}
	c.Ratio, c.Direction = medianRatio(c.A.Median, c.B.Median)
	c.RatioInterval = ratioInterval(sa, sb, confidence)
	needIntervals := opt.Noise == IntervalRule
	if needIntervals {
		c.NeedPerSide = max(c.NeedPerSide, MedianRepeatsNeeded(confidence))
	}
	switch {
	case c.MinP >= alpha:
		c.Verdict = TooFewRepeats
	case needIntervals && !(c.A.Interval.Available && c.B.Interval.Available):
		c.Verdict = TooFewRepeats
	case c.Test.P >= alpha:
		c.Verdict = NoDifference
	case !beyondNoise(c.A, c.B, opt.Noise):
		c.Verdict = NoDifference
		c.WithinNoise = true
	default:
		c.Verdict = Different
	}
	return c, nil
}

// ComparePair compares a single run of A with a single run of B. One run per
// side can never show a difference, so the verdict is always TooFewRepeats;
// the ratio and direction are still given for the record.
func ComparePair(a, b float64) (Comparison, error) {
	return Compare([]float64{a}, []float64{b}, Options{})
}

// beyondNoise applies the noise rule to two summaries.
func beyondNoise(a, b Summary, rule NoiseRule) bool {
	switch rule {
	case SpreadRule:
		if a.Min > 0 && b.Min > 0 {
			diff := math.Abs(math.Log(b.Median / a.Median))
			return diff > math.Log(a.Max/a.Min) && diff > math.Log(b.Max/b.Min)
		}
		diff := math.Abs(b.Median - a.Median)
		return diff > a.Range() && diff > b.Range()
	case IntervalRule:
		return a.Interval.Hi < b.Interval.Lo || b.Interval.Hi < a.Interval.Lo
	}
	return true
}

func medianRatio(a, b float64) (float64, Direction) {
	dir := Same
	switch {
	case b > a:
		dir = Higher
	case b < a:
		dir = Lower
	}
	switch {
	case a != 0:
		return b / a, dir
	case b == 0:
		return 1, dir
	case b > 0:
		return math.Inf(1), dir
	}
	return math.Inf(-1), dir
}

// ratioInterval computes the Hodges-Lehmann interval of B/A from sorted
// samples. With positive values, ordering ratios b/a orders the differences
// log b - log a, whose order statistics bound the shift in log scale; k is the
// largest order with P(U ≤ k-1) ≤ (1-confidence)/2 under no ties, exact while
// n1·n2 ≤ ExactLimit and from the normal approximation beyond.
func ratioInterval(a, b []float64, confidence float64) RatioInterval {
	if a[0] <= 0 || b[0] < 0 {
		return RatioInterval{}
	}
	n1, n2 := len(a), len(b)
	k, coverage := shiftOrder(n1, n2, confidence)
	if k == 0 {
		return RatioInterval{}
	}
	ratios := make([]float64, 0, n1*n2)
	for _, x := range a {
		for _, y := range b {
			ratios = append(ratios, y/x)
		}
	}
	slices.Sort(ratios)
	return RatioInterval{Available: true, Lo: ratios[k-1], Hi: ratios[n1*n2-k], Confidence: coverage}
}

// shiftOrder returns the order k of the shift interval and its coverage
// 1 - 2·P(U ≤ k-1), or 0 when no order reaches confidence.
func shiftOrder(n1, n2 int, confidence float64) (int, float64) {
	if n1*n2 > ExactLimit {
		return shiftOrderNormal(n1, n2, confidence)
	}
	tailBudget := (1-confidence)/2 + levelSlack
	counts := untiedUCounts(min(n1, n2), max(n1, n2)) // U's distribution is symmetric in the sizes
	total := choose(n1+n2, n1)
	k, coverage, tail := 0, 0.0, 0.0
	for cand := 1; 2*cand <= n1*n2+1; cand++ {
		tail += float64(counts[cand-1]) / total
		if tail > tailBudget {
			break
		}
		k, coverage = cand, 1-2*tail
	}
	return k, coverage
}

// shiftOrderNormal is shiftOrder from the normal approximation of U with a
// continuity correction: the largest k with Φ((k - 1/2 - n1·n2/2)/σ) ≤ (1-confidence)/2.
func shiftOrderNormal(n1, n2 int, confidence float64) (int, float64) {
	mean := float64(n1*n2) / 2
	sd := math.Sqrt(float64(n1*n2*(n1+n2+1)) / 12)
	z := math.Sqrt2 * math.Erfinv(confidence)
	k := int(math.Floor(mean - z*sd + 0.5))
	if k < 1 {
		return 0, 0
	}
	lower := 0.5 * math.Erfc(-((float64(k)-0.5-mean)/sd)/math.Sqrt2)
	return k, 1 - 2*lower
}
