package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/results"
)

// A step's latency distribution read from the histograms it recorded
// (latency-<kind>.hdr, microseconds): the percentile spectrum HdrHistogram
// plots, and the ladder of percentiles DiskSpd prints.

// Percentile is one latency percentile of a distribution.
type Percentile struct {
	// P is the percentile, 0 to 100 (0 is the smallest value, 100 the largest).
	P  float64
	US float64
}

// Nines is where percentile p sits on HdrHistogram's percentile plot: 1 /
// (1 - p/100), so that 90 % is 10, 99 % is 100, 99.9 % is 1000: each nine
// takes the same width on a log axis.
func Nines(p float64) float64 {
	if p >= 100 {
		return math.Inf(1)
	}
	return 1 / (1 - p/100)
}

// spectrumPerDecade is how many percentiles the spectrum reads per nine.
const spectrumPerDecade = 10

// Spectrum is the percentile spectrum of h: percentiles spaced evenly on
// the nines scale, from the smallest value to the percentile beyond which
// fewer than one value remains, then the largest. It is empty for an empty
// histogram.
func Spectrum(h *hdrhistogram.Histogram) []Percentile {
	n := h.TotalCount()
	if n == 0 {
		return nil
	}
	var out []Percentile
	for k := 0; ; k++ {
		x := math.Pow(10, float64(k)/spectrumPerDecade)
		if x > float64(n) {
			break
		}
		p := 100 * (1 - 1/x)
		v := float64(h.ValueAtPercentile(p))
		if k == 0 {
			v = float64(h.Min())
		}
		out = append(out, Percentile{P: p, US: v})
	}
	// The largest value sits where one value in n remains.
	return append(out, Percentile{P: 100 * (1 - 1/float64(n)), US: float64(h.Max())})
}

// LadderRung is a percentile of DiskSpd's latency table, with its name there.
type LadderRung struct {
	Name string
	// P is the percentile; 0 is the minimum and 100 the maximum.
	P float64
}

// DiskSpdLadder is the percentile table DiskSpd prints under -L: the
// minimum, the quartiles, 90th to 99th, three to eight nines, the maximum.
var DiskSpdLadder = []LadderRung{
	{"min", 0}, {"25th", 25}, {"50th", 50}, {"75th", 75}, {"90th", 90}, {"95th", 95}, {"99th", 99},
	{"3-nines", 99.9}, {"4-nines", 99.99}, {"5-nines", 99.999}, {"6-nines", 99.9999},
	{"7-nines", 99.99999}, {"8-nines", 99.999999}, {"max", 100},
}

// Ladder reads every rung of DiskSpdLadder from h, in microseconds; an
// empty histogram has none. Like DiskSpd, a rung beyond what the count can
// tell apart reads the largest value.
func Ladder(h *hdrhistogram.Histogram) []Percentile {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	out := make([]Percentile, len(DiskSpdLadder))
	for i, r := range DiskSpdLadder {
		v := float64(h.ValueAtPercentile(r.P))
		switch r.P {
		case 0:
			v = float64(h.Min())
		case 100:
			v = float64(h.Max())
		}
		out[i] = Percentile{P: r.P, US: v}
	}
	return out
}

// StepLatency is the latency distribution a step recorded, by kind: fio's
// read and write completions, or a workload's transaction types.
type StepLatency struct {
	// Kinds are the histograms by the name the step's files give them,
	// in name order.
	Kinds  []string
	ByKind map[string]*hdrhistogram.Histogram
}

// ReadStepLatency reads the histograms of step s of the run l, as its
// results directory keeps them; a step that recorded none has no kinds.
// An open-loop step's histograms from the intended start
// (results.CorrectedSuffix) are left out: the spectrum is the service
// time's, as every other kind's.
func ReadStepLatency(l *results.Loaded, s results.Step) (StepLatency, error) {
	hists, err := results.StepHistograms(results.StepPath(l.Path, s.Index, s.Name))
	if err != nil {
		return StepLatency{}, fmt.Errorf("step %s: %w", s.Name, err)
	}
	out := StepLatency{ByKind: map[string]*hdrhistogram.Histogram{}}
	for kind, h := range hists {
		if strings.HasSuffix(kind, results.CorrectedSuffix) || h.TotalCount() == 0 {
			continue
		}
		out.Kinds = append(out.Kinds, kind)
		out.ByKind[kind] = h
	}
	slices.Sort(out.Kinds)
	return out, nil
}

// All is every kind's histogram merged (every I/O of a fio point, every
// transaction of a workload step), nil without any.
func (l StepLatency) All() *hdrhistogram.Histogram {
	var all *hdrhistogram.Histogram
	for _, k := range l.Kinds {
		if all == nil {
			all = hdrhistogram.Import(l.ByKind[k].Export())
			continue
		}
		all.Merge(l.ByKind[k])
	}
	return all
}
