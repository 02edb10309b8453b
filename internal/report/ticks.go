package report

import (
	"math"
	"strconv"
	"strings"
)

// niceStep is the tick step for span cut into about target intervals: 1, 2,
// 2.5 or 5 times a power of ten. Integer axes (users) never step below 1 or
// by 2.5.
func niceStep(span float64, target int, integer bool) float64 {
	if span <= 0 || target < 1 {
		return 1
	}
	raw := span / float64(target)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	var f float64
	switch r := raw / mag; {
	case r <= 1:
		f = 1
	case r <= 2:
		f = 2
	case r <= 2.5:
		f = 2.5
	case r <= 5:
		f = 5
	default:
		f = 10
	}
	step := f * mag
	if integer {
		if step < 1 {
			return 1
		}
		if step == 2.5 {
			return 2
		}
	}
	return step
}

// decimalsFor is how many decimals tick labels need for step.
func decimalsFor(step float64) int {
	d := 0
	for s := step; d < 9 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, s); s *= 10 {
		d++
	}
	return d
}

// roundTo removes floating-point noise: 0.30000000000000004 → 0.3.
func roundTo(v float64, decimals int) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', decimals, 64), 64)
	return r
}

// linearTicks are the ticks of [lo, hi]. With loose, the range grows to
// whole steps (the returned lo and hi); otherwise ticks stay inside it.
func linearTicks(lo, hi float64, target int, integer, loose bool) (ticks []float64, newLo, newHi, step float64) {
	step = niceStep(hi-lo, target, integer)
	dec := decimalsFor(step)
	start := math.Ceil(lo/step-1e-9) * step
	end := math.Floor(hi/step+1e-9) * step
	if loose {
		start = math.Floor(lo/step+1e-9) * step
		end = math.Ceil(hi/step-1e-9) * step
		lo, hi = roundTo(start, dec), roundTo(end, dec)
	}
	for i := 0; ; i++ {
		v := roundTo(start+float64(i)*step, dec)
		if v > end+step*1e-6 || i > 100 {
			break
		}
		ticks = append(ticks, v)
	}
	return ticks, lo, hi, step
}

// logTicks are the ticks of a log axis over [lo, hi] (both > 0): every
// decade, with 2 and 5 in between when the range spans few decades.
func logTicks(lo, hi float64) []float64 {
	first := math.Floor(math.Log10(lo) + 1e-9)
	last := math.Ceil(math.Log10(hi) - 1e-9)
	if math.IsNaN(first) || math.IsInf(first, 0) || math.IsNaN(last) || math.IsInf(last, 0) {
		return nil // the loop below would never end
	}
	decades := last - first
	mults := []float64{1}
	switch {
	case decades <= 1:
		mults = []float64{1, 2, 5}
	case decades <= 3:
		mults = []float64{1, 2, 5}
	}
	every := 1.0
	if decades > 6 {
		every = math.Ceil(decades / 6)
	}
	var ticks []float64
	for e := first; e <= last; e++ {
		if math.Mod(e-first, every) != 0 {
			continue
		}
		base := math.Pow(10, e)
		for _, m := range mults {
			v := roundTo(m*base, max(0, int(-e)))
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				ticks = append(ticks, v)
			}
		}
	}
	return ticks
}

// tickLabel writes an axis label compactly: 1,500 → "1.5k", 2000000 → "2M",
// 0.25 → "0.25". step is the distance between ticks (0 on log axes).
func tickLabel(v, step float64) string {
	a := math.Abs(v)
	suffix, div := "", 1.0
	switch {
	case a != 0 && a < 1e-6:
		// Beyond the decimals a label keeps: "1e-09", not "0".
		return strconv.FormatFloat(v, 'g', 2, 64)
	case a >= 1e9:
		suffix, div = "G", 1e9
	case a >= 1e6:
		suffix, div = "M", 1e6
	case a >= 1e4 || (a >= 1e3 && step >= 1e3):
		suffix, div = "k", 1e3
	}
	var dec int
	if step > 0 {
		dec = decimalsFor(step / div)
	} else {
		dec = decimalsFor(roundTo(v/div, 6))
	}
	s := strconv.FormatFloat(v/div, 'f', dec, 64)
	if strings.Contains(s, ".") && suffix == "" && dec == 0 {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + suffix
}
