package telemetry

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"dbio/internal/results"
)

// accumulator keeps a step's per-second values.
type accumulator struct {
	samples int
	values  map[string][]float64
}

func newAccumulator() *accumulator { return &accumulator{values: map[string][]float64{}} }

// summary summarizes the samples added, taken on a machine with cpus CPUs
// watching devices; warnings say what could not be read.
func (a *accumulator) summary(cpus int, devices, warnings []string) results.TelemetrySummary {
	sum := results.TelemetrySummary{Samples: a.samples, CPUs: cpus, Devices: devices, Metrics: map[string]results.TelemetryStat{}, Warnings: warnings}
	for name, v := range a.values {
		sum.Metrics[name] = summarize(v)
	}
	return sum
}

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

// problems are the failed reads of a Sampler's or an Exporter's sources
// since they were last reset, by source; the zero value is empty.
type problems struct{ bySource map[string]*problem }

// note records a failed read of source what; a nil err is no failure.
func (p *problems) note(what string, err error) {
	if err == nil {
		return
	}
	if p.bySource == nil {
		p.bySource = map[string]*problem{}
	}
	pr := p.bySource[what]
	if pr == nil {
		pr = &problem{}
		p.bySource[what] = pr
	}
	pr.count++
	pr.last = err.Error()
}

// reset forgets the failures recorded so far.
func (p *problems) reset() { p.bySource = nil }

// warnings word the failures per source, in name order: how often it
// failed, and the last error.
func (p *problems) warnings() []string {
	whats := make([]string, 0, len(p.bySource))
	for w := range p.bySource {
		whats = append(whats, w)
	}
	sort.Strings(whats)
	var out []string
	for _, w := range whats {
		pr := p.bySource[w]
		n := "once"
		if pr.count > 1 {
			n = strconv.Itoa(pr.count) + " times"
		}
		out = append(out, fmt.Sprintf("%s failed %s, last: %s", w, n, pr.last))
	}
	return out
}

// StartStep begins a new step: the samples and warnings gathered so far are
// dropped (the runner calls it when ramp-up ends). The baseline for deltas
// is kept, so the next Sample still covers a full second.
func (s *Sampler) StartStep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.step = newAccumulator()
	s.problems.reset()
	for _, h := range s.hosts {
		h.startStep()
	}
}

// StepSummary summarizes the samples since StartStep (or since New). It
// does not reset them.
func (s *Sampler) StepSummary() results.TelemetrySummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	var devices []string
	for _, d := range s.devices {
		devices = append(devices, d.key)
	}
	sum := s.step.summary(s.prev.cpus, devices, s.problems.warnings())
	sum.InProcessEngine = s.inProcessEngine
	sum.ServerUnknown = s.serverUnknown
	for _, h := range s.hosts {
		sum.Hosts = append(sum.Hosts, h.summary())
	}
	return sum
}

// Summarize summarizes per-second samples taken elsewhere than by a
// Sampler, e.g. a host's through its node exporter over the seconds a
// fleet point measured: cpus is the host's CPUs, devices the watched
// devices as in metric names, warnings what could not be read.
func Summarize(samples [][]Point, cpus int, devices, warnings []string) results.TelemetrySummary {
	acc := newAccumulator()
	for _, pts := range samples {
		acc.add(pts)
	}
	return acc.summary(cpus, devices, warnings)
}

// summarize computes a metric's statistics over per-second values.
func summarize(v []float64) results.TelemetryStat {
	if len(v) == 0 {
		return results.TelemetryStat{}
	}
	sorted := append([]float64(nil), v...)
	sort.Float64s(sorted)
	var total float64
	for _, x := range sorted {
		total += x
	}
	rank := int(math.Ceil(0.99*float64(len(sorted)))) - 1
	return results.TelemetryStat{
		Mean:    results.Round6(total / float64(len(sorted))),
		P99:     results.Round6(sorted[max(rank, 0)]),
		Max:     results.Round6(sorted[len(sorted)-1]),
		Samples: len(sorted),
	}
}
