package stats

import (
	"fmt"
	"math"
)

// A per-second series of a running database (its TPS, its p99) is not a
// sample of independent values: a checkpoint, a lock convoy or a cache
// filling lasts several seconds, so each second resembles the one before.
// Treating the seconds as independent then gives an interval of the mean
// that is several times too narrow, and a step "precise" long before it is.
//
// SeriesMeanInterval uses batch means instead: the series is cut into k
// batches of b consecutive seconds, and the interval comes from the spread
// of the k batch means, which are close to independent once b is longer than
// the series' memory. b starts at one second and grows until the lag-1
// autocorrelation of successive batch means is no longer significantly
// positive, keeping at least MinBatches batches; a series whose memory
// outlasts that has no interval yet (more seconds are needed).

// MinBatches is the fewest batches an interval is read from: fewer leave the
// t quantile large and the correlation check with too little to judge.
const MinBatches = 10

// batchGrowth is the factor the batch size grows by between checks: coarse
// enough to reach long memories in few steps, fine enough not to jump far
// past the size the series needs (which would waste batches).
const batchGrowth = 1.5

// uncorrelatedZ is the one-sided normal quantile the batch means' lag-1
// autocorrelation must stay under, in units of its standard error under
// independence (1/sqrt(k)). 1.28 is a 10 % test: generous to the "correlated"
// side, because accepting batches too short narrows the interval, the error
// that makes a step stop too early.
const uncorrelatedZ = 1.2816

// SeriesInterval is the confidence interval of a series' mean read from
// batch means.
type SeriesInterval struct {
	// Available is false when the series is too short, or its memory too
	// long, for MinBatches uncorrelated batches; the other fields except N
	// and Mean are then zero.
	Available bool
	// N is the number of values in the series; Used the number the batches
	// hold (the most recent Batches·BatchSize, the oldest remainder dropped).
	N, Used int
	// Mean is the mean of the values used (of the whole series when no
	// interval is available).
	Mean float64
	// Lo and Hi bound the interval; HalfWidth is (Hi - Lo) / 2.
	Lo, Hi, HalfWidth float64
	// BatchSize is the batch length chosen, in values; Batches how many.
	BatchSize, Batches int
	// Lag1 is the lag-1 autocorrelation of the batch means at BatchSize.
	Lag1 float64
	// Confidence is the interval's nominal coverage.
	Confidence float64
}

// RelHalfWidth is the half-width as a fraction of |Mean|: 0.02 is ±2 %. It
// is +Inf when no interval is available or the mean is zero.
func (s SeriesInterval) RelHalfWidth() float64 {
	return relHalfWidth(s.Available, s.HalfWidth, s.Mean)
}

// batchMeans fills dst with the means of the series' most recent whole
// batches of b values, oldest first: the values that do not fill a batch
// are the oldest, left out.
func batchMeans(dst, series []float64, b int) []float64 {
	k := len(series) / b
	recent := series[len(series)-k*b:]
	dst = dst[:0]
	for i := range k {
		dst = append(dst, mean(recent[i*b:(i+1)*b]))
	}
	return dst
}

// relHalfWidth is half as a fraction of |mean|, +Inf when there is no
// interval or the mean is zero: the form both of a series' intervals
// (its mean's and its drift's) are judged in.
func relHalfWidth(available bool, half, mean float64) float64 {
	if !available || mean == 0 {
		return math.Inf(1)
	}
	return half / math.Abs(mean)
}

// SeriesMeanInterval returns the interval of the mean of a stationary
// series (oldest value first) at the given confidence, from batch means
// whose batches grow until successive means are uncorrelated. It does not
// modify series.
func SeriesMeanInterval(series []float64, confidence float64) (SeriesInterval, error) {
	if err := checkSeries(series, confidence); err != nil {
		return SeriesInterval{}, err
	}
	n := len(series)
	out := SeriesInterval{N: n, Mean: mean(series), Confidence: confidence}
	means := make([]float64, 0, n)
	for b := 1; n/b >= MinBatches; b = nextBatchSize(b) {
		means = batchMeans(means, series, b)
		k := len(means)
		r1 := lag1(means)
		if r1 > uncorrelatedZ/math.Sqrt(float64(k)) {
			continue
		}
		m := mean(means)
		var ss float64
		for _, v := range means {
			ss += (v - m) * (v - m)
		}
		// What correlation is left between the batch means still shrinks
		// the spread of their mean's estimate; the estimate of r1 is biased
		// low by about 1/k, so the correction uses r1 + 1/k.
		rho := min(max(0, r1+1/float64(k)), 0.5)
		se := math.Sqrt(ss / float64(k-1) / float64(k) * (1 + rho) / (1 - rho))
		half := studentT(1-(1-confidence)/2, k-1) * se
		return SeriesInterval{Available: true, N: n, Used: k * b, Mean: m, Lo: m - half, Hi: m + half,
			HalfWidth: half, BatchSize: b, Batches: k, Lag1: r1, Confidence: confidence}, nil
	}
	return out, nil
}

func nextBatchSize(b int) int {
	return max(b+1, int(math.Ceil(float64(b)*batchGrowth)))
}

func mean(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

// lag1 is the lag-1 autocorrelation of vs; 0 when vs does not vary (a
// constant series has no memory to correct for).
func lag1(vs []float64) float64 {
	m := mean(vs)
	var num, den float64
	for i, v := range vs {
		d := v - m
		den += d * d
		if i > 0 {
			num += d * (vs[i-1] - m)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// normalQuantile is Φ⁻¹(p).
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// studentT is the p quantile of Student's t with df degrees of freedom, from
// the Cornish-Fisher expansion about the normal quantile (Abramowitz and
// Stegun 26.7.5): within 1e-3 of the exact value from 5 degrees of freedom
// up at the quantiles an interval uses, and exact in the limit. Below 5 the
// few exact values needed are tabulated.
func studentT(p float64, df int) float64 {
	z := normalQuantile(p)
	if df < 5 && math.Abs(p-0.975) < 1e-9 {
		return [...]float64{0, 12.7062, 4.3027, 3.1824, 2.7764}[df]
	}
	v := float64(df)
	z2 := z * z
	g1 := (z2 + 1) * z / 4
	g2 := ((5*z2+16)*z2 + 3) * z / 96
	g3 := (((3*z2+19)*z2+17)*z2 - 15) * z / 384
	g4 := ((((79*z2+776)*z2+1482)*z2-1920)*z2 - 945) * z / 92160
	return z + g1/v + g2/(v*v) + g3/(v*v*v) + g4/(v*v*v*v)
}

// checkSeries refuses what no interval can be read from: a confidence
// outside (0, 1), an empty series, a value that is not a finite number.
func checkSeries(series []float64, confidence float64) error {
	if err := checkLevel(confidence); err != nil {
		return fmt.Errorf("confidence %v: %w", confidence, err)
	}
	if len(series) == 0 {
		return ErrEmpty
	}
	for i, v := range series {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("value %d (%v): %w", i+1, v, ErrNotFinite)
		}
	}
	return nil
}
