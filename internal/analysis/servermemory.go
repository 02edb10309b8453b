package analysis

import (
	"math"

	"dbio/internal/results"
)

// ServerMemory is how a step used the memory cap of its server
// (--server-memory): the cgroup's levels over the step, in MB (10^6
// bytes), and the rates that show the cap binding.
type ServerMemory struct {
	// CapMB is the cap; PeakMB the most the group held in any second,
	// MeanMB its mean; CacheMB and AnonMB the mean page cache and the
	// processes' own memory among it.
	CapMB, PeakMB, MeanMB, CacheMB, AnonMB float64
	// PeakPct is PeakMB as a share of the cap.
	PeakPct float64
	// RefaultsPerS are the pages per second the group evicted and read
	// back soon after; LimitHitsPerS the times it hit its cap;
	// MajorFaultsPerS the faults its processes waited on the disk for;
	// PressurePct its own memory stall (cgroup v2). NaN where the kernel
	// keeps no such figure.
	RefaultsPerS, LimitHitsPerS, MajorFaultsPerS, PressurePct float64
	// OOMKills counts processes killed for want of memory in the step.
	OOMKills float64
	// Bound says the cap bound: the group came within 5 % of it and had
	// to evict pages it then needed again (or the kernel counted it
	// hitting the cap, or stalling on memory).
	Bound bool
}

// capNear is how close to its cap a group must come for the cap to be
// called binding: the kernel reclaims in batches, a little under the cap.
const capNear = 0.95

// StepServerMemory is a step's use of its server's memory cap; false when
// the step sampled no memory group.
func StepServerMemory(s results.Step) (ServerMemory, bool) { return serverMemoryOf(s.Telemetry) }

// serverMemoryOf is StepServerMemory of a step's telemetry.
func serverMemoryOf(t *results.TelemetrySummary) (ServerMemory, bool) {
	capMB := t.Max(results.MetricMemcgLimit)
	if math.IsNaN(capMB) || capMB <= 0 {
		return ServerMemory{}, false
	}
	m := ServerMemory{
		CapMB: capMB, PeakMB: t.Max(results.MetricMemcgUsage), MeanMB: t.Mean(results.MetricMemcgUsage),
		CacheMB: t.Mean(results.MetricMemcgCache), AnonMB: t.Mean(results.MetricMemcgAnon),
		RefaultsPerS: t.Mean(results.MetricMemcgRefaults), LimitHitsPerS: t.Mean(results.MetricMemcgLimitHits),
		MajorFaultsPerS: t.Mean(results.MetricMemcgMajorFaults), PressurePct: t.Mean(results.MetricMemcgPressure),
	}
	m.PeakPct = 100 * m.PeakMB / m.CapMB
	if st, ok := t.Metrics[results.MetricMemcgOOMKills]; ok {
		m.OOMKills = math.Round(st.Mean * float64(st.Samples))
	}
	positive := func(v float64) bool { return v > 0 }
	m.Bound = m.PeakMB >= capNear*m.CapMB && (positive(m.RefaultsPerS) || positive(m.LimitHitsPerS) || positive(m.PressurePct))
	return m, true
}

// ServerMemoryRecorded says whether any of the steps sampled a memory group.
func ServerMemoryRecorded(steps []results.Step) bool {
	for _, s := range steps {
		if _, ok := StepServerMemory(s); ok {
			return true
		}
	}
	return false
}

// Floors of the server memory metrics: a level under 1 MB is no group
// worth a ratio, and under one page refaulted a second the group did not
// evict what it needed, whatever the ratio of two such rates says.
const (
	memoryFloorMB       = 1
	refaultsFloorPerSec = 1
)

// ServerMemoryMetrics compare runs by their server's memory group, for
// the steps that sampled one (--server-memory): the most it held and its
// page cache, which are neither better higher nor lower (a larger cap
// lets the server hold more), and the pages it evicted and read back,
// which are better lower: they are the reads the cap costs.
func ServerMemoryMetrics() []Metric {
	of := func(f func(ServerMemory) float64) func(results.Step) float64 {
		return func(s results.Step) float64 {
			m, ok := StepServerMemory(s)
			if !ok {
				return math.NaN()
			}
			return f(m)
		}
	}
	return []Metric{
		{ID: "memory-peak", Title: "server memory peak", Unit: "MB", Better: results.NeitherBetter, Floor: memoryFloorMB,
			Value: of(func(m ServerMemory) float64 { return m.PeakMB })},
		{ID: "memory-page-cache", Title: "server page cache", Unit: "MB, mean", Better: results.NeitherBetter, Floor: memoryFloorMB,
			Value: of(func(m ServerMemory) float64 { return m.CacheMB })},
		{ID: "memory-refaults", Title: "server memory refaults", Unit: "pages per s", Better: results.LowerBetter, Floor: refaultsFloorPerSec,
			Value: of(func(m ServerMemory) float64 { return m.RefaultsPerS })},
	}
}
