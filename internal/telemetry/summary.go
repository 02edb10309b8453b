package telemetry

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"dbio/internal/results"
)

// Summary is the telemetry of one step, the results contract's own type:
// every metric summarized over the step's per-second samples. The verdict
// and the process shares are drawn from it by internal/analysis
// (analysis.Conclude).
type Summary = results.TelemetrySummary

// Stat summarizes one metric over the per-second samples of a step.
type Stat = results.TelemetryStat

// accumulator keeps a step's per-second values.
type accumulator struct {
	samples int
	values  map[string][]float64
}

func newAccumulator() *accumulator { return &accumulator{values: map[string][]float64{}} }

func (a *accumulator) add(pts []Point) {
	a.samples++
	for _, p := range pts {
		a.values[p.Name] = append(a.values[p.Name], p.Value)
	}
}

// problem counts the failures of one source.
type problem struct {
	count int
	last  string
}

// note records a failed read of one source, for the step's warnings.
func (s *Sampler) note(what string, err error) {
	if err == nil {
		return
	}
	p := s.problems[what]
	if p == nil {
		p = &problem{}
		s.problems[what] = p
	}
	p.count++
	p.last = err.Error()
}

// StartStep begins a new step: the samples and warnings gathered so far are
// dropped (the runner calls it when ramp-up ends). The baseline for deltas
// is kept, so the next Sample still covers a full second.
func (s *Sampler) StartStep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.step = newAccumulator()
	s.problems = map[string]*problem{}
}

// StepSummary summarizes the samples since StartStep (or since New). It
// does not reset them.
func (s *Sampler) StepSummary() Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := Summary{Samples: s.step.samples, CPUs: s.prev.cpus, InProcessEngine: s.inProcessEngine, Metrics: map[string]Stat{}}
	for name, v := range s.step.values {
		sum.Metrics[name] = summarize(v)
	}
	for _, d := range s.devices {
		sum.Devices = append(sum.Devices, d.key)
	}
	whats := make([]string, 0, len(s.problems))
	for w := range s.problems {
		whats = append(whats, w)
	}
	sort.Strings(whats)
	for _, w := range whats {
		p := s.problems[w]
		n := "once"
		if p.count > 1 {
			n = strconv.Itoa(p.count) + " times"
		}
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("%s failed %s, last: %s", w, n, p.last))
	}
	return sum
}

// summarize computes a Stat over per-second values.
func summarize(v []float64) Stat {
	if len(v) == 0 {
		return Stat{}
	}
	sorted := append([]float64(nil), v...)
	sort.Float64s(sorted)
	var total float64
	for _, x := range sorted {
		total += x
	}
	rank := int(math.Ceil(0.99*float64(len(sorted)))) - 1
	return Stat{
		Mean:    results.Round6(total / float64(len(sorted))),
		P99:     results.Round6(sorted[max(rank, 0)]),
		Max:     results.Round6(sorted[len(sorted)-1]),
		Samples: len(sorted),
	}
}
