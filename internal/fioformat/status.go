package fioformat

import (
	"errors"
	"io"
	"maps"
	"math"
	"slices"

	"dbio/internal/results"
)

// StatusReader reads the reports fio writes every --status-interval as
// its output grows: it takes the bytes as fio appends them and hands out
// each report once it is complete. Each report is cumulative, from the
// job's start or, once the warm-up is over, from the warm-up's end.
type StatusReader struct {
	pending []byte
}

// Add takes the bytes fio appended to its output and returns the reports
// they completed, in order. Bytes that are no report (fio's notes, a
// damaged report) are skipped.
func (s *StatusReader) Add(p []byte) []*Output {
	s.pending = append(s.pending, p...)
	var outs []*Output
	for {
		start := jsonStart(s.pending)
		if start < 0 {
			// Keep a line fio may still be writing.
			s.pending = s.pending[max(0, len(s.pending)-1):]
			return outs
		}
		s.pending = s.pending[start:]
		raw, n, err := decodeReport(s.pending)
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return outs // the report is not all written yet
		case err != nil:
			s.pending = s.pending[1:] // not a report: look for the next
			continue
		}
		s.pending = s.pending[n:]
		if out, err := raw.output(&Output{}); err == nil {
			outs = append(outs, out)
		}
	}
}

// Live is what fio did between two of its status reports: the figures a
// live line shows.
type Live struct {
	// Seconds is the time the figures cover (fio's runtime between the reports).
	Seconds  float64
	IOPS     float64
	MBPerSec float64
	// MeanUS is the mean completion latency (fio's clat), in µs; HasMean
	// says whether fio timed any completion (it times none in the warm-up).
	MeanUS  float64
	HasMean bool
	// P99US is the 99th percentile of the completions in the interval,
	// from fio's json+ histogram; HasP99 says whether fio reported one.
	P99US  float64
	HasP99 bool
	// MeasuredS is fio's runtime at the later report: the measured time
	// so far, the warm-up left out.
	MeasuredS float64
	// now and before are the histograms' bins at either report, for At.
	now, before map[int64]int64
}

// At is the p-th percentile (0 < p < 100) of the completions in the
// interval, in µs, read as P99US is; false when there were none.
func (l Live) At(p float64) (float64, bool) {
	if l.now == nil {
		return 0, false
	}
	return binsQuantile(l.now, l.before, p/100)
}

// restartSlackMS is how much less than the wall time between two reports
// fio's runtime may advance before its counts are taken to have started
// again: the warm-up it then left out is a whole second or more.
const restartSlackMS = 500

// Between is what fio did from report prev to report cur (prev may be nil:
// from the job's start), all groups together. fio starts its counts again
// when the warm-up ends, so the counts of a report after that restart are
// not comparable with those before it: a report whose runtime advanced
// much less than the wall time since the last (by the warm-up fio left
// out) or whose counts went back is taken alone, from the restart. It
// says false when no time passed between the reports.
func Between(prev, cur *Output) (Live, bool) {
	now := sumTotals(cur)
	if now == nil {
		return Live{}, false
	}
	before := sumTotals(prev)
	if before == nil || now.IOs < before.IOs || now.RuntimeMS < before.RuntimeMS || now.Completion.N < before.Completion.N ||
		(cur.TimestampMS-prev.TimestampMS)-(now.RuntimeMS-before.RuntimeMS) > restartSlackMS {
		before = &results.FioDirection{}
	}
	ms := now.RuntimeMS - before.RuntimeMS
	if ms <= 0 {
		return Live{}, false
	}
	secs := float64(ms) / 1000
	l := Live{Seconds: secs, IOPS: float64(now.IOs-before.IOs) / secs, MBPerSec: float64(now.Bytes-before.Bytes) / secs / 1e6,
		MeasuredS: float64(now.RuntimeMS) / 1000, now: now.Bins, before: before.Bins}
	if n := now.Completion.N - before.Completion.N; n > 0 {
		l.HasMean = true
		l.MeanUS = (now.Completion.MeanUS*float64(now.Completion.N) - before.Completion.MeanUS*float64(before.Completion.N)) / float64(n)
	}
	l.P99US, l.HasP99 = binsQuantile(now.Bins, before.Bins, 0.99)
	return l, true
}

// sumTotals adds up the groups' totals (fio's mixed figures of reads and
// writes); runtime is the longest group's.
func sumTotals(o *Output) *results.FioDirection {
	if o == nil {
		return nil
	}
	var sum *results.FioDirection
	for _, g := range o.Groups {
		t := g.Total
		if t == nil {
			continue
		}
		if sum == nil {
			sum = &results.FioDirection{Bins: map[int64]int64{}}
		}
		n := sum.Completion.N + t.Completion.N
		if n > 0 {
			sum.Completion.MeanUS = (sum.Completion.MeanUS*float64(sum.Completion.N) + t.Completion.MeanUS*float64(t.Completion.N)) / float64(n)
		}
		sum.Completion.N = n
		sum.IOs += t.IOs
		sum.Bytes += t.Bytes
		sum.RuntimeMS = max(sum.RuntimeMS, t.RuntimeMS)
		for ns, c := range t.Bins {
			sum.Bins[ns] += c
		}
	}
	return sum
}

// binsQuantile is the q quantile of the completions counted in now and not
// in before, in µs: the value of the first bin at which q of them are
// reached.
func binsQuantile(now, before map[int64]int64, q float64) (float64, bool) {
	var total int64
	delta := make(map[int64]int64, len(now))
	for ns, c := range now {
		if d := c - before[ns]; d > 0 {
			delta[ns] = d
			total += d
		}
	}
	if total == 0 {
		return 0, false
	}
	need := int64(math.Ceil(q * float64(total)))
	var seen int64
	keys := slices.Sorted(maps.Keys(delta))
	for _, ns := range keys {
		seen += delta[ns]
		if seen >= need {
			return float64(ns) / 1000, true
		}
	}
	return float64(keys[len(keys)-1]) / 1000, true
}
