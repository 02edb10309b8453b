package analysis

import (
	"math"
	"testing"

	"dbio/internal/results"
)

func stepWith(metrics map[string]float64) results.Step {
	t := &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{}}
	for k, v := range metrics {
		t.Metrics[k] = results.TelemetryStat{Mean: v, Samples: 10}
	}
	return results.Step{Telemetry: t}
}

// A step's mean wait is its total wait over its operations, not the mean
// of its seconds' means: a second with one slow sync weighs one sync.
func TestDBWait(t *testing.T) {
	tests := []struct {
		name    string
		metrics map[string]float64
		want    float64
	}{
		{"from the counters", map[string]float64{"engine_db_sync_ops_per_s": 200, "engine_db_sync_wait_ms_per_s": 500, "db_sync_await_ms": 40}, 2.5},
		{"from the per-second means alone", map[string]float64{"db_sync_await_ms": 4}, 4},
		{"no operation", map[string]float64{"engine_db_sync_ops_per_s": 0, "engine_db_sync_wait_ms_per_s": 0}, math.NaN()},
		{"not timed", map[string]float64{"engine_checkpoints_per_s": 1}, math.NaN()},
	}
	for _, tt := range tests {
		got := DBWait(stepWith(tt.metrics), "sync")
		if got != tt.want && !(math.IsNaN(got) && math.IsNaN(tt.want)) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	steps := []results.Step{stepWith(map[string]float64{"db_read_await_ms": 1}), stepWith(map[string]float64{"db_data_sync_await_ms": 3})}
	var keys []string
	for _, k := range DBWaitRecorded(steps) {
		keys = append(keys, k.Key)
	}
	if len(keys) != 2 || keys[0] != "read" || keys[1] != "data_sync" {
		t.Errorf("recorded kinds %v, want [read data_sync]", keys)
	}
	if id := DBWaitMetricID("data_sync"); id != "db-data-sync-wait" {
		t.Errorf("metric id %s", id)
	}
}

// TestDBWaitKindsTitled: every kind the engines record has a title and a
// description, in results' order, so that a kind added there is shown.
func TestDBWaitKindsTitled(t *testing.T) {
	kinds := DBWaitKinds()
	if len(kinds) != len(results.DBWaitKinds()) {
		t.Fatalf("%d kinds shown, %d recorded", len(kinds), len(results.DBWaitKinds()))
	}
	for i, k := range kinds {
		if k.Key != string(results.DBWaitKinds()[i]) || k.Title == "" || k.What == "" {
			t.Errorf("kind %d: %+v", i, k)
		}
	}
}
