package analysis

import (
	"math"
	"testing"

	"dbio/internal/results"
)

func TestStepServerMemory(t *testing.T) {
	step := func(m map[string]results.TelemetryStat) results.Step {
		return results.Step{Telemetry: &results.TelemetrySummary{Metrics: m}}
	}
	stat := func(mean, max float64) results.TelemetryStat {
		return results.TelemetryStat{Mean: mean, Max: max, P99: max, Samples: 10}
	}
	levels := func(peak float64, extra map[string]results.TelemetryStat) map[string]results.TelemetryStat {
		m := map[string]results.TelemetryStat{
			results.MetricMemcgLimit: stat(200, 200), results.MetricMemcgUsage: stat(150, peak),
			results.MetricMemcgCache: stat(100, 120), results.MetricMemcgAnon: stat(40, 45),
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, tt := range []struct {
		name      string
		metrics   map[string]results.TelemetryStat
		ok, bound bool
		oom       float64
	}{
		{"no group", map[string]results.TelemetryStat{"cpu_user_pct": stat(10, 20)}, false, false, 0},
		{"at the cap, evicting what it reads again", levels(199, map[string]results.TelemetryStat{results.MetricMemcgRefaults: stat(500, 900)}), true, true, 0},
		{"at the cap without evictions", levels(199, map[string]results.TelemetryStat{results.MetricMemcgRefaults: stat(0, 0)}), true, false, 0},
		{"refaults far below the cap", levels(120, map[string]results.TelemetryStat{results.MetricMemcgRefaults: stat(5, 9)}), true, false, 0},
		{"hits counted by the kernel", levels(195, map[string]results.TelemetryStat{results.MetricMemcgLimitHits: stat(3, 9)}), true, true, 0},
		{"an OOM kill", levels(200, map[string]results.TelemetryStat{results.MetricMemcgOOMKills: stat(0.1, 1)}), true, false, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := StepServerMemory(step(tt.metrics))
			if ok != tt.ok || m.Bound != tt.bound || m.OOMKills != tt.oom {
				t.Fatalf("got %+v, %v; want ok %v, bound %v, %v OOM kills", m, ok, tt.ok, tt.bound, tt.oom)
			}
			if ok && (m.PeakPct != 100*m.PeakMB/200 || m.CacheMB != 100) {
				t.Errorf("figures %+v", m)
			}
			if ok && tt.name == "at the cap without evictions" && !math.IsNaN(m.PressurePct) {
				t.Errorf("pressure %v where none was sampled, want NaN", m.PressurePct)
			}
		})
	}
	if ServerMemoryRecorded([]results.Step{step(nil)}) {
		t.Error("a step without telemetry recorded a memory group")
	}
}
