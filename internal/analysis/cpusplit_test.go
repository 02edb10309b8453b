package analysis

import (
	"reflect"
	"testing"

	"dbio/internal/results"
)

// Conclude splits a step's CPU by whose it was, from the step means of the
// per-second shares, and says it in a sentence; a step recorded without
// other processes' CPU has no split.
func TestConcludeSplitsTheCPU(t *testing.T) {
	stat := func(mean float64) results.TelemetryStat {
		return results.TelemetryStat{Mean: mean, P99: mean, Max: mean, Samples: 10}
	}
	base := map[string]results.TelemetryStat{
		"cpu_idle_pct": stat(6), "cpu_iowait_pct": stat(1.5), "cpu_steal_pct": stat(0.5),
		"proc_dbio_cpu_pct": stat(4), "cpu_user_pct": stat(70), "cpu_system_pct": stat(22),
	}
	with := func(extra map[string]results.TelemetryStat) map[string]results.TelemetryStat {
		m := map[string]results.TelemetryStat{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, tt := range []struct {
		name      string
		sum       results.TelemetrySummary
		want      *results.CPUSplit
		neighbour bool
	}{
		{"a server beside a busy neighbour",
			results.TelemetrySummary{CPUs: 2, Metrics: with(map[string]results.TelemetryStat{"proc_server_cpu_pct": stat(18), results.MetricOtherCPU: stat(70)})},
			&results.CPUSplit{Server: 18, DBIO: 4, Other: 70, Idle: 6, IOWait: 1.5, Steal: 0.5,
				Text: "the CPUs: the server 18 %, dbio 4 %, other processes 70 %, idle 6 %, iowait 2 %, steal 0.5 %"}, true},
		{"SQLite inside dbio",
			results.TelemetrySummary{CPUs: 2, InProcessEngine: true, Metrics: with(map[string]results.TelemetryStat{results.MetricOtherCPU: stat(20)})},
			&results.CPUSplit{DBIO: 4, Other: 20, Idle: 6, IOWait: 1.5, Steal: 0.5,
				Text: "the CPUs: dbio with its in-process engine 4 %, other processes 20 %, idle 6 %, iowait 2 %, steal 0.5 %"}, false},
		{"recorded before other processes' CPU was", results.TelemetrySummary{CPUs: 2, Metrics: base}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Conclude(tt.sum).CPU
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
			if got != nil && got.Neighbours() != tt.neighbour {
				t.Errorf("Neighbours() = %v with other processes at %v %%", got.Neighbours(), got.Other)
			}
		})
	}
}
