package analysis

import (
	"testing"

	"dbio/internal/results"
)

func TestEngineTPM(t *testing.T) {
	tests := []struct {
		name string
		tel  *results.TelemetrySummary
		want float64
		ok   bool
	}{
		{"no telemetry", nil, 0, false},
		{"an engine without the counter", &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{
			"engine_xact_commit_per_s": {Mean: 10, Samples: 60}}}, 0, false},
		{"a counter never sampled", &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{
			engineTransactionsPerS: {Samples: 0}}}, 0, false},
		{"per second to per minute", &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{
			engineTransactionsPerS: {Mean: 812.5, P99: 900, Max: 950, Samples: 120}}}, 48750, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := EngineTPM(tt.tel)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if f.Name != results.FigureEngineTPM || f.Value != tt.want || f.Unit != "tx/min" {
				t.Errorf("%+v, want %s = %v tx/min", f, results.FigureEngineTPM, tt.want)
			}
			if err := results.CheckFigures(results.InStep, f); err != nil {
				t.Error(err)
			}
		})
	}
}
