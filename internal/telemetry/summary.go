package telemetry

import (
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Summary is the telemetry of one step: every metric summarized over the
// step's per-second samples, the bottleneck verdict, and the CPU and memory
// of the load generator and the server. It is stored as a step's telemetry
// in the results directory.
type Summary struct {
	// Samples is the number of per-second samples in the step.
	Samples int `json:"samples"`
	// CPUs is the number of online CPUs, the "100 %" of the cpu_* and proc_* metrics.
	CPUs int `json:"cpus"`
	// Devices are the watched block devices as they appear in metric names
	// (disk_<device>_…).
	Devices []string `json:"devices,omitempty"`
	// Metrics are keyed by metric name (see the package documentation).
	Metrics map[string]Stat `json:"metrics"`
	Verdict Verdict         `json:"verdict"`
	// Driver is dbio itself: the load generator (and the engine, for SQLite).
	Driver *Share `json:"driver,omitempty"`
	// Server is the database server's processes, when the engine is a server.
	Server *Share `json:"server,omitempty"`
	// Warnings say which sources could not be read, and how often.
	Warnings []string `json:"warnings,omitempty"`
}

// Stat summarizes one metric over the per-second samples of a step.
type Stat struct {
	Mean float64 `json:"mean"`
	// P99 is the 99th percentile of the per-second values (nearest rank).
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
	// Samples is how many seconds had a value: await metrics skip seconds
	// without I/O.
	Samples int `json:"samples"`
}

// Share is the CPU and memory one group of processes used during a step.
type Share struct {
	// CPUPct is the mean share of the whole machine's CPU, in %.
	CPUPct float64 `json:"cpu_pct"`
	// Cores is the same share in CPUs' worth of time.
	Cores float64 `json:"cores"`
	// RSSMB is the largest resident memory seen, in MB (10^6 bytes).
	RSSMB float64 `json:"rss_mb"`
	// Text says it in a sentence: "the load generator used 6 % of the CPU …".
	Text string `json:"text"`
}

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
	sum := Summary{Samples: s.step.samples, CPUs: s.prev.cpus, Metrics: map[string]Stat{}}
	for name, v := range s.step.values {
		sum.Metrics[name] = summarize(v)
	}
	for _, d := range s.devices {
		sum.Devices = append(sum.Devices, d.key)
	}
	sig := signalsFrom(sum.Metrics, sum.Devices)
	sig.Samples, sig.InProcessEngine = sum.Samples, s.inProcessEngine
	sum.Verdict = Judge(sig, DefaultThresholds())
	driver := "the load generator"
	if s.inProcessEngine {
		driver = "dbio (load generator and in-process engine)"
	}
	sum.Driver = share(sum.Metrics, "dbio", driver, sum.CPUs)
	if s.server != nil {
		sum.Server = share(sum.Metrics, "server", "the database server", sum.CPUs)
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

// share builds a process group's Share from its metrics, nil without samples.
func share(m map[string]Stat, role, who string, cpus int) *Share {
	cpu, ok := m["proc_"+role+"_cpu_pct"]
	if !ok {
		return nil
	}
	sh := &Share{CPUPct: cpu.Mean, Cores: round6(cpu.Mean * float64(cpus) / 100), RSSMB: m["proc_"+role+"_rss_mb"].Max}
	sh.Text = fmt.Sprintf("%s used %s of the CPU (%s of %d cores) and %s of memory",
		who, pct(sh.CPUPct), sig3(sh.Cores), cpus, megabytes(sh.RSSMB))
	return sh
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
		Mean:    round6(total / float64(len(sorted))),
		P99:     round6(sorted[max(rank, 0)]),
		Max:     round6(sorted[len(sorted)-1]),
		Samples: len(sorted),
	}
}

// round6 keeps six significant digits, so that the stored JSON shows
// 37.8333 rather than 37.833333333333336.
func round6(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// pct formats a percentage for a sentence: "38 %", "0.4 %".
func pct(v float64) string {
	if v > 0 && v < 1 {
		return strconv.FormatFloat(v, 'f', 1, 64) + " %"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " %"
}

// sig3 formats with three significant digits: 7.05, 0.92, 1.61, 38.2.
func sig3(v float64) string {
	if math.Abs(v) >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func megabytes(mb float64) string {
	if mb >= 1000 {
		return sig3(mb/1000) + " GB"
	}
	return sig3(mb) + " MB"
}
