package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// A/B studies add runs until they know: after each pair of runs (one of A,
// one of B) the sides are compared again. Checking a fixed-size test after
// every pair calls a difference far more often than its level when there is
// none, since every look is another chance for noise to cross the line.
// Sequential is a group-sequential design instead: the Mann-Whitney
// statistic after n runs a side, standardized as Z, is compared with a
// boundary c(n), and the boundaries are set so that the chance of crossing
// any of them when A and B do not differ is alpha in all. The error is
// spent over the looks by Lan and DeMets' Pocock-type function
// alpha·ln(1 + (e - 1)·t), t = n / max, which spends evenly enough for a
// large difference to stop a study at its first looks.
//
// Under no difference every order of A's and B's runs is equally likely,
// whatever the figure's distribution, so the joint law of the Z's at every
// look is the same for any figure: the boundaries are computed once, by
// simulating that law (sequencesSimulated sequences from a fixed seed),
// for the design's alpha and maximum. Ties between runs, rare in measured
// figures, are counted as halves.
//
// A study may also stop early with no difference, when the Hodges-Lehmann
// interval of B/A at 1 - 2·alpha (two one-sided tests at alpha) lies within
// ±margin: a difference at least that large is then ruled out. This stop
// never makes a difference more likely to be called, so it leaves the
// design's false-difference rate as it is.

// sequencesSimulated is how many sequences set the boundaries: the rate
// they give is within about ±0.003 of alpha at 0.05.
const sequencesSimulated = 20000

// Sequential is a group-sequential design for comparing A and B one pair of
// runs at a time, up to MaxPerSide runs a side.
type Sequential struct {
	Alpha      float64
	MaxPerSide int
	// Bounds[n-1] is the |Z| a look after n runs a side must reach to call
	// a difference; +Inf where no outcome may (too few runs, or the error
	// already spent).
	Bounds []float64
}

// NewSequential designs a sequential comparison at level alpha with at
// most maxPerSide runs a side (2 to 100).
func NewSequential(alpha float64, maxPerSide int) (Sequential, error) {
	if err := checkLevel(alpha); err != nil {
		return Sequential{}, fmt.Errorf("alpha %v: %w", alpha, err)
	}
	if maxPerSide < 2 || maxPerSide > 100 {
		return Sequential{}, fmt.Errorf("a sequential design takes 2 to 100 runs a side, not %d", maxPerSide)
	}
	r := rand.New(rand.NewPCG(uint64(maxPerSide), uint64(alpha*1e9)))
	zs := make([][]float64, sequencesSimulated) // each sequence's Z at every look
	a, b := make([]float64, maxPerSide), make([]float64, maxPerSide)
	for s := range zs {
		zs[s] = make([]float64, maxPerSide)
		u := 0.0 // pairs (a, b) with b above a
		for n := 1; n <= maxPerSide; n++ {
			a[n-1], b[n-1] = r.Float64(), r.Float64()
			for i := range n - 1 {
				u += above(a[n-1], b[i]) + above(a[i], b[n-1])
			}
			u += above(a[n-1], b[n-1])
			zs[s][n-1] = standardU(u, n)
		}
	}
	d := Sequential{Alpha: alpha, MaxPerSide: maxPerSide, Bounds: make([]float64, maxPerSide)}
	stopped := make([]bool, sequencesSimulated)
	crossed := 0
	alive := make([]float64, 0, sequencesSimulated)
	for n := 1; n <= maxPerSide; n++ {
		allowed := int(math.Floor(pocockSpent(alpha, float64(n)/float64(maxPerSide))*sequencesSimulated+1e-9)) - crossed
		alive = alive[:0]
		for s := range zs {
			if !stopped[s] {
				alive = append(alive, math.Abs(zs[s][n-1]))
			}
		}
		slices.Sort(alive)
		slices.Reverse(alive)
		// The lowest |Z| that at most allowed sequences reach: a bound
		// between two distinct values of |Z| that Z can take.
		bound := math.Inf(1)
		for i := 0; i < len(alive); {
			j := i
			for j < len(alive) && alive[j] == alive[i] {
				j++
			}
			if j > allowed || alive[i] <= 0 {
				break
			}
			bound, i = alive[i], j
		}
		d.Bounds[n-1] = bound
		for s := range zs {
			if !stopped[s] && math.Abs(zs[s][n-1]) >= bound {
				stopped[s] = true
				crossed++
			}
		}
	}
	return d, nil
}

func above(x, y float64) float64 {
	switch {
	case y > x:
		return 1
	case y == x:
		return 0.5
	}
	return 0
}

// standardU is the Mann-Whitney U (pairs with B above A) of n runs a side
// as a standard normal deviate under no difference.
func standardU(u float64, n int) float64 {
	nn := float64(n * n)
	return (u - nn/2) / math.Sqrt(nn*float64(2*n+1)/12)
}

// pocockSpent is the error spent by information fraction t.
func pocockSpent(alpha, t float64) float64 {
	return alpha * math.Log(1+(math.E-1)*min(t, 1))
}

// SequentialLook is the verdict of one look.
type SequentialLook struct {
	// N is the runs a side compared (the shorter side's count; the longer
	// side's later runs wait for their pair).
	N int
	// Z is the standardized Mann-Whitney statistic, positive when B's
	// runs lie above A's; Bound is the |Z| that would call a difference.
	Z, Bound float64
	// Ratio is the Hodges-Lehmann interval of B/A at 1 - 2·alpha, when
	// a margin was given and the figure is positive.
	Ratio RatioInterval
	// Decided says the study may stop; Verdict is then Different or
	// NoDifference, and TooFewRepeats while undecided. At the maximum the
	// study stops undecided: Verdict NoDifference, Decided false.
	Decided bool
	Verdict Verdict
}

// Look judges the runs so far (a and b in the order they ran) against a
// margin of equivalence (0.05: a difference under 5 % either way counts
// as none; 0 never stops early for no difference).
func (d Sequential) Look(a, b []float64, margin float64) (SequentialLook, error) {
	n := min(len(a), len(b), d.MaxPerSide)
	if n == 0 {
		return SequentialLook{}, ErrEmpty
	}
	a, b = a[:n], b[:n]
	for _, v := range append(slices.Clone(a), b...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return SequentialLook{}, fmt.Errorf("value %v: %w", v, ErrNotFinite)
		}
	}
	u := 0.0
	for _, x := range a {
		for _, y := range b {
			u += above(x, y)
		}
	}
	l := SequentialLook{N: n, Z: standardU(u, n), Bound: d.Bounds[n-1], Verdict: TooFewRepeats}
	if margin > 0 {
		sa, sb := slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
		l.Ratio = ratioInterval(sa, sb, 1-2*d.Alpha)
	}
	switch {
	case math.Abs(l.Z) >= l.Bound:
		l.Decided, l.Verdict = true, Different
	case margin > 0 && l.Ratio.Available && l.Ratio.Lo >= 1/(1+margin) && l.Ratio.Hi <= 1+margin:
		l.Decided, l.Verdict = true, NoDifference
	case n == d.MaxPerSide:
		l.Verdict = NoDifference
	}
	return l, nil
}
