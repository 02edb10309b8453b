package analysis

import (
	"strings"
	"testing"

	"dbio/internal/metrics"
	"dbio/internal/results"
)

func TestJudgeThresholds(t *testing.T) {
	newOrder := func(p99US int64) []metrics.TxSummary {
		return []metrics.TxSummary{{Name: "new_order", Latency: metrics.Latency{Count: 10, P99US: p99US}}}
	}
	l := &results.Loaded{
		Run: results.Run{Figures: []results.Figure{results.FigureMaxUsersUnderCeiling.With(8)}},
		Steps: []results.Step{
			{Name: "users-1", Figures: []results.Figure{results.FigureNOPM.With(900)}, Transactions: newOrder(20000),
				Total: &metrics.TxSummary{Latency: metrics.Latency{Count: 10, P99US: 30000}}},
			{Name: "users-8", Figures: []results.Figure{results.FigureNOPM.With(5000)}, Transactions: newOrder(60000)},
		},
	}
	tests := []struct {
		expr     string
		passed   bool
		measured float64
		at       string
		detail   string
	}{
		{"nopm>=800", true, 900, "users-1", "the worst of 2"},
		{"nopm>=1000", false, 900, "users-1", "breaks it"},
		{"nopm[users-8]>=1000", true, 5000, "users-8", "meets it"},
		{"new_order:p99<=50ms", false, 60, "users-8", "breaks it"},
		{"new_order:p99[users-1]<=50ms", true, 20, "users-1", "meets it"},
		{"p99<=50ms", true, 30, "users-1", "meets it"},
		{"max_users_under_ceiling>=8", true, 8, "run", "at run"},
		{"tps>=1", false, -1, "", "no step recorded TPS"},
		{"nopm[users-4]>=1", false, -1, "", `no step "users-4" (its steps: users-1, users-8)`},
		{"payment:p99<=50ms", false, -1, "", "no step recorded p99 latency of payment"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			th, err := results.ParseThreshold(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			r := JudgeThresholds(l, []results.Threshold{th})[0]
			if r.Passed != tt.passed || r.At != tt.at || !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("passed %v at %q (%s), want %v at %q saying %q", r.Passed, r.At, r.Detail, tt.passed, tt.at, tt.detail)
			}
			switch {
			case tt.measured < 0 && r.Measured != nil:
				t.Errorf("measured %v, want none", *r.Measured)
			case tt.measured >= 0 && (r.Measured == nil || *r.Measured != tt.measured):
				t.Errorf("measured %v, want %v", r.Measured, tt.measured)
			}
		})
	}
}
