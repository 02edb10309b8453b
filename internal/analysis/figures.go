package analysis

import (
	"cmp"
	"math"
	"slices"

	"dbio/internal/results"
)

// Value is a step's figure, NaN when the step does not have it.
func Value(s results.Step, name results.FigureName) float64 {
	if v, ok := s.Figure(name); ok {
		return v
	}
	return math.NaN()
}

// TPS is the step's TPS figure, or its committed transactions per second.
func TPS(s results.Step) float64 {
	if v, ok := s.Figure(results.FigureTPS); ok {
		return v
	}
	if s.Total != nil {
		return s.Total.PerMinute / 60
	}
	return math.NaN()
}

// Latencies are a step's transaction latency figures in ms, every type merged.
type Latencies struct{ Mean, P50, P95, P99, P999, Max float64 }

// TotalLatency is the latency of every transaction of the step in ms;
// false when the step completed none.
func TotalLatency(s results.Step) (Latencies, bool) {
	if s.Total == nil || s.Total.Latency.Count == 0 {
		return Latencies{}, false
	}
	l := s.Total.Latency
	return Latencies{Mean: l.MeanUS / 1000, P50: float64(l.P50US) / 1000, P95: float64(l.P95US) / 1000,
		P99: float64(l.P99US) / 1000, P999: float64(l.P999US) / 1000, Max: float64(l.MaxUS) / 1000}, true
}

// Throughput lists the figures a workload's throughput is read from, the
// first being its headline: TPM and NOPM where the steps recorded them
// (TPC-C), the interactive TPS of a workload that separates interactive
// work from background batch jobs (AS3AP), else TPS.
func Throughput(steps []results.Step) []results.FigureDef {
	var out []results.FigureDef
	for _, n := range []results.FigureName{results.FigureTPM, results.FigureNOPM} {
		if anyHas(steps, n) {
			out = append(out, n.Def())
		}
	}
	switch {
	case len(out) > 0:
	case anyHas(steps, results.FigureInteractiveTPS):
		out = append(out, results.FigureInteractiveTPS.Def())
	default:
		out = append(out, results.FigureTPS.Def())
	}
	return out
}

func anyHas(steps []results.Step, name results.FigureName) bool {
	for _, s := range steps {
		if _, ok := s.Figure(name); ok {
			return true
		}
	}
	return false
}

// Metric is a figure read from each step of a run, to compare runs by:
// a recorded figure as the catalogue defines it (FigureMetric), or one
// analysis derives from what a step recorded (its latency, the machine's
// telemetry).
type Metric struct {
	// ID is a short stable name: the figure's name, or "latency-mean".
	ID     string
	Title  string
	Unit   string
	Better results.Better
	// Floor is the smallest value, in Unit, that a ratio or a change in %
	// is computed from (0 for none beyond zero itself): CPU shares under
	// 1 % of the machine, say, whose ratios are noise.
	Floor float64
	// Value reads the metric from a step, NaN when the step lacks it.
	Value func(results.Step) float64
	// Diagnostic marks a metric that explains a run rather than measures
	// its work: the machine's CPU and busiest device, the database's own
	// waits and time, the server's memory group. It is compared and shown
	// like any other, but a regression check does not fail on it alone:
	// the busiest device is the host's, which any other writer moves.
	Diagnostic bool
}

// FigureMetric compares runs by a recorded figure, as the catalogue
// defines it; the ID is the figure's name.
func FigureMetric(f results.FigureDef) Metric {
	return Metric{ID: string(f.Name), Title: f.Title, Unit: f.Unit, Better: f.Better,
		Value: func(s results.Step) float64 { return Value(s, f.Name) }}
}

// latencyMetric compares runs by a recorded latency in µs, read in ms as
// dbio prints every latency.
func latencyMetric(id string, name results.FigureName) Metric {
	f := name.Def()
	return Metric{ID: id, Title: f.Title, Unit: "ms", Better: f.Better, Floor: latencyFloorMS,
		Value: func(s results.Step) float64 { return Value(s, name) / 1000 }}
}

// ResponseTime compares runs by a statistic of their response time (mean,
// p95 or p99): that of the interactive work where the step recorded it
// apart (AS3AP), else that of every transaction.
func ResponseTime(stat results.LatencyStat) Metric {
	interactive := map[results.LatencyStat]results.FigureName{results.StatMean: results.FigureInteractiveLatencyMean,
		results.StatP95: results.FigureInteractiveLatencyP95, results.StatP99: results.FigureInteractiveLatencyP99}[stat]
	total := func(l Latencies) float64 { return l.Mean }
	switch stat {
	case results.StatP95:
		total = func(l Latencies) float64 { return l.P95 }
	case results.StatP99:
		total = func(l Latencies) float64 { return l.P99 }
	}
	return Metric{ID: "latency-" + string(stat), Title: string(stat) + " latency", Unit: "ms", Better: results.LowerBetter, Floor: latencyFloorMS,
		Value: func(s results.Step) float64 {
			if v, ok := s.Figure(interactive); ok {
				return v
			}
			if l, ok := TotalLatency(s); ok {
				return total(l)
			}
			return math.NaN()
		}}
}

// Floors of the compared metrics. A CPU share under 1 % of the machine is
// idle noise, and a device latency under 10 µs means the device was not
// used; a transaction or fio latency under 1 µs is below what is measured.
const (
	cpuFloorPct        = 1
	diskLatencyFloorMS = 0.01
	latencyFloorMS     = 0.001
)

// telemetryMetric compares runs by a telemetry mean.
func telemetryMetric(id, title, unit string, better results.Better, metric string) Metric {
	return Metric{ID: id, Title: title, Unit: unit, Better: better, Floor: cpuFloorPct, Diagnostic: true,
		Value: func(s results.Step) float64 { return s.Telemetry.Mean(metric) }}
}

// diskMetric compares runs by a metric of each step's busiest device.
func diskMetric(id, title, what string) Metric {
	return Metric{ID: id, Title: title, Unit: "ms, busiest device", Better: results.LowerBetter, Floor: diskLatencyFloorMS, Diagnostic: true, Value: func(s results.Step) float64 {
		return BusiestDiskP99(s, what)
	}}
}

// BusiestDiskP99 is the p99 of a metric of the step's busiest device
// ("w_await_ms"), NaN without one.
func BusiestDiskP99(s results.Step, what string) float64 {
	d := BusiestDevice(s.Telemetry)
	if d == "" {
		return math.NaN()
	}
	return s.Telemetry.P99(DiskMetric(d, what))
}

// WorkloadMetrics are what runs of a transaction workload are compared by:
// the throughput of the baseline's steps, the mean and p99 response time
// (and, for open-loop steps, the p99 from the intended start), the CPU's
// iowait and idle time, the busiest device's write and read latency, the
// I/O latency the database itself saw (where its engine timed it), the
// server's memory group (where the run capped it), and the database's
// account of its time by class (where its engine gave one).
func WorkloadMetrics(baseline []results.Step) []Metric {
	var out []Metric
	for _, f := range Throughput(baseline) {
		out = append(out, FigureMetric(f))
	}
	out = append(out, ResponseTime(results.StatMean), ResponseTime(results.StatP99))
	if Paced(baseline) {
		// Open loop: what a client on the schedule waited, beside the service time.
		m := FigureMetric(results.FigureLatencyP99Corrected.Def())
		m.ID, m.Floor = "latency-p99-corrected", latencyFloorMS
		out = append(out, m)
	}
	return append(append(out,
		// iowait is idle time that happened to have an I/O outstanding: it
		// falls when another process takes the CPU as surely as when the
		// storage gets faster, so it is shown, never called better or worse.
		telemetryMetric("cpu-iowait", "CPU iowait", "% of the machine", results.NeitherBetter, "cpu_iowait_pct"),
		telemetryMetric("cpu-idle", "CPU idle", "% of the machine", results.NeitherBetter, "cpu_idle_pct"),
		diskMetric("disk-write-p99", "disk write latency p99", "w_await_ms"),
		diskMetric("disk-read-p99", "disk read latency p99", "r_await_ms"),
	), diagnostics(append(append(dbWaitMetrics(), ServerMemoryMetrics()...), DBTimeMetrics()...))...)
}

// diagnostics marks metrics as Diagnostic.
func diagnostics(ms []Metric) []Metric {
	for i := range ms {
		ms[i].Diagnostic = true
	}
	return ms
}

// StepFigureMetrics read steps that record figures only (a backup's
// seconds, MB and MB/s; a noisy-neighbour phase's total TPM): one metric
// per figure, as the catalogue defines it (a figure it does not define,
// read back from an older dbio, is named and counted as recorded, neither
// better nor worse). The figures better higher (the rates) come first, in
// the order the steps first record them, since the first metric is a
// table's headline; then the rest.
func StepFigureMetrics(steps []results.Step) []Metric {
	var out []Metric
	seen := map[results.FigureName]bool{}
	for _, s := range steps {
		for _, f := range s.Figures {
			if seen[f.Name] {
				continue
			}
			seen[f.Name] = true
			def := f.Name.Def()
			if !f.Name.Defined() {
				def.Title = string(f.Name)
			}
			if def.Unit == "" {
				def.Unit = f.Unit
			}
			out = append(out, FigureMetric(def))
		}
	}
	slices.SortStableFunc(out, func(a, b Metric) int {
		return cmp.Compare(boolRank(a.Better != results.HigherBetter), boolRank(b.Better != results.HigherBetter))
	})
	return out
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FioMetrics are what fio points are compared by: IOPS, MB/s, and the
// mean and p99 completion latency in ms.
func FioMetrics() []Metric {
	iops, mbs := FigureMetric(results.FigureIOPS.Def()), FigureMetric(results.FigureMBPerSec.Def())
	mbs.ID = "mbs"
	return []Metric{iops, mbs, latencyMetric("lat-mean", results.FigureLatMeanUS), latencyMetric("lat-p99", results.FigureLatP99US)}
}

// engineTransactionsPerS is the sampler's per-second rate of the engines'
// neutral counter of transactions committed or rolled back
// (engine.TransactionsEnded).
const engineTransactionsPerS = "engine_transactions_ended_per_s"

// EngineTPM is a step's transactions as the server counted them, committed
// or rolled back, per minute: the figure HammerDB reports as TPM. It is
// the step's mean of the per-second rate, over the seconds the telemetry
// sampled; false when the engine has no such counter (SQLite) or nothing
// was sampled.
func EngineTPM(t *results.TelemetrySummary) (results.Figure, bool) {
	if t == nil {
		return results.Figure{}, false
	}
	perS := t.Mean(engineTransactionsPerS)
	if math.IsNaN(perS) {
		return results.Figure{}, false
	}
	return results.FigureEngineTPM.With(perS * 60), true
}
