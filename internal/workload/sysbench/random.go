package sysbench

import (
	"math"
	"math/rand/v2"
)

// idFunc draws an id in [lo, hi].
type idFunc func(r *rand.Rand, lo, hi int) int

// distributions are sysbench's --rand-type choices, built from the
// configuration's shape parameters.
var distributions = map[string]func(c Config) idFunc{
	"uniform":  func(Config) idFunc { return uniform },
	"gaussian": func(c Config) idFunc { return gaussian(c.SpecIter) },
	"special":  special,
	"pareto":   pareto,
}

func (c Config) ids() idFunc { return distributions[c.RandType](c) }

func uniform(r *rand.Rand, lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// gaussian approximates a normal distribution centred on the range as the
// mean of iter uniform draws (the central limit theorem), which is what
// sysbench's --rand-spec-iter counts.
func gaussian(iter int) idFunc {
	return func(r *rand.Rand, lo, hi int) int {
		var sum float64
		for range iter {
			sum += r.Float64()
		}
		return scale(lo, hi, sum/float64(iter))
	}
}

// special is sysbench 1.0's default distribution: SpecRes percent of the
// draws fall uniformly on the SpecPct percent of the range at its centre,
// the rest follow the gaussian over the whole range. With the defaults (75 %
// of draws on 1 % of the rows) a handful of rows take most of the load.
func special(c Config) idFunc {
	g := gaussian(c.SpecIter)
	return func(r *rand.Rand, lo, hi int) int {
		if r.Float64()*100 >= c.SpecRes {
			return g(r, lo, hi)
		}
		n := hi - lo + 1
		width := max(1, int(float64(n)*c.SpecPct/100))
		return lo + (n-width)/2 + r.IntN(width)
	}
}

// pareto draws with the Pareto principle's skew towards the low end of the
// range: with h = 0.2, 80 % of the draws fall on the first 20 % of the ids.
func pareto(c Config) idFunc {
	power := math.Log(c.ParetoH) / math.Log(1-c.ParetoH)
	return func(r *rand.Rand, lo, hi int) int {
		return scale(lo, hi, math.Pow(r.Float64(), power))
	}
}

// scale maps u in [0, 1) onto [lo, hi].
func scale(lo, hi int, u float64) int {
	v := lo + int(u*float64(hi-lo+1))
	return min(max(v, lo), hi)
}

// The c and pad columns hold groups of 11 random digits joined by dashes:
// ten groups (119 characters) in c, five (59) in pad.
const (
	cGroups   = 10
	padGroups = 5
	groupLen  = 11
)

// digitGroups appends n dash-separated groups of random digits to b.
func digitGroups(b []byte, r *rand.Rand, n int) []byte {
	for g := range n {
		if g > 0 {
			b = append(b, '-')
		}
		// One 64-bit draw gives 19 decimal digits; two cover a group.
		v := r.Uint64()
		for i := range groupLen {
			if i == 9 {
				v = r.Uint64()
			}
			b = append(b, byte('0'+v%10))
			v /= 10
		}
	}
	return b
}

func cValue(r *rand.Rand) string   { return string(digitGroups(make([]byte, 0, 120), r, cGroups)) }
func padValue(r *rand.Rand) string { return string(digitGroups(make([]byte, 0, 60), r, padGroups)) }
