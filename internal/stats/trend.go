package stats

import (
	"math"
)

// A precision-bound measurement also asks whether the figure it reads was
// steady: a mean of a throughput that climbed all along says when the
// measurement stopped, not what the system does. A slope over the last few
// seconds answers that badly, since one noisy second moves it far.
// SeriesDrift judges the whole series instead: the least-squares line
// through it, and whether that line's change from the first value to the
// last is more than the series' noise can make, with the noise's memory
// allowed for by batch means as SeriesMeanInterval allows for it.
//
// The series is cut into k batches of b consecutive values, and the line
// is fitted to the k batch means against their order. b starts at one
// value and grows (as for the mean's interval) until the lag-1
// autocorrelation of the residuals about that line is no longer
// significantly positive, keeping at least MinBatches batches; the
// residuals, not the batch means, decide it, since a trend itself makes
// successive means alike. The drift's interval then comes from the
// residuals' spread, Student's t with k - 2 degrees of freedom.

// SeriesTrend is the trend of a series across its values, read from batch
// means.
type SeriesTrend struct {
	// Available is false when the series is too short, or its memory too
	// long, for MinBatches batches whose residuals are uncorrelated (a
	// level that steps, about which no line leaves uncorrelated noise); the
	// other fields except N, Mean and Drift are then zero, and Drift is
	// the line's through every value, without an interval.
	Available bool
	// N is the number of values in the series; Used the number the batches
	// hold (the most recent Batches·BatchSize).
	N, Used int
	// Mean is the mean of the values used (of the whole series when no
	// trend is available).
	Mean float64
	// Drift is the fitted line's change across the values used, from the
	// start of the first batch to the end of the last: its slope per value
	// times Used (times N when no trend is available). HalfWidth is the
	// half-width of Drift's interval.
	Drift, HalfWidth float64
	// BatchSize is the batch length chosen, in values; Batches how many.
	BatchSize, Batches int
	// Lag1 is the lag-1 autocorrelation of the residuals about the line.
	Lag1 float64
	// Confidence is the interval's nominal coverage.
	Confidence float64
}

// Significant says the drift's interval excludes zero: the series moved by
// more than its noise explains.
func (t SeriesTrend) Significant() bool {
	return t.Available && math.Abs(t.Drift) > t.HalfWidth
}

// RelDrift is Drift as a fraction of |Mean|, signed: -0.1 is a line that
// fell by 10 % of the mean across the series. It is ±Inf (or NaN) when the
// mean is zero.
func (t SeriesTrend) RelDrift() float64 {
	return t.Drift / math.Abs(t.Mean)
}

// RelHalfWidth is HalfWidth as a fraction of |Mean|; +Inf when no trend is
// available or the mean is zero.
func (t SeriesTrend) RelHalfWidth() float64 {
	return relHalfWidth(t.Available, t.HalfWidth, t.Mean)
}

// SeriesDrift returns the trend of a series (oldest value first) and the
// interval of its drift at the given confidence, from batch means whose
// batches grow until their residuals about the line are uncorrelated. It
// does not modify series.
func SeriesDrift(series []float64, confidence float64) (SeriesTrend, error) {
	if err := checkSeries(series, confidence); err != nil {
		return SeriesTrend{}, err
	}
	n := len(series)
	out := SeriesTrend{N: n, Mean: mean(series), Confidence: confidence}
	if n > 1 {
		slope, _, _ := line(series)
		out.Drift = slope * float64(n)
	}
	means := make([]float64, 0, n)
	resid := make([]float64, 0, n)
	for b := 1; n/b >= MinBatches; b = nextBatchSize(b) {
		means = batchMeans(means, series, b)
		k := len(means)
		slope, m, sxx := line(means) // per batch
		xMean := float64(k-1) / 2
		resid = resid[:0]
		var ss float64
		for i, v := range means {
			e := v - m - slope*(float64(i)-xMean)
			resid = append(resid, e)
			ss += e * e
		}
		r1 := lag1(resid)
		if r1 > uncorrelatedZ/math.Sqrt(float64(k)) {
			continue
		}
		// As for the mean's interval, what correlation is left still
		// narrows the spread, corrected with r1 + 1/k.
		rho := min(max(0, r1+1/float64(k)), 0.5)
		se := math.Sqrt(ss / float64(k-2) / sxx * (1 + rho) / (1 - rho))
		half := studentT(1-(1-confidence)/2, k-2) * se * float64(k)
		return SeriesTrend{Available: true, N: n, Used: k * b, Mean: m, Drift: slope * float64(k), HalfWidth: half,
			BatchSize: b, Batches: k, Lag1: r1, Confidence: confidence}, nil
	}
	return out, nil
}

// line is the least-squares line through vs against their index: its slope
// per value, the mean of vs (the line's value at the middle index) and
// Σ(x - x̄)². vs holds two values at least.
func line(vs []float64) (slope, m, sxx float64) {
	m = mean(vs)
	xMean := float64(len(vs)-1) / 2
	var sxy float64
	for i, v := range vs {
		dx := float64(i) - xMean
		sxy += dx * (v - m)
		sxx += dx * dx
	}
	return sxy / sxx, m, sxx
}
