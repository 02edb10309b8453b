package workload

import (
	"strings"
	"testing"
	"time"
)

// A load's estimate is the amount at the engine's rate, by any of the
// engine's names; an engine the table lacks takes its slowest rate, so
// that the estimate errs long; the text says which rate it took.
func TestLoadRatesEstimate(t *testing.T) {
	r := LoadRates{Unit: "warehouses", Measured: "measured here", ByEngine: map[string]float64{"sqlite": 0.5, "postgres": 0.25}}
	for _, tt := range []struct {
		engine string
		amount float64
		want   time.Duration
		says   string
	}{
		{"sqlite", 4, 8 * time.Second, "4 warehouses at 0.5 warehouses/s on sqlite (measured here)"},
		{"postgresql", 4, 16 * time.Second, "on postgres"},
		{"oracle", 1, 4 * time.Second, "1 warehouse at 0.25 warehouses/s at the slowest engine's rate"},
		{"sqlite", 0.1, time.Second, ""}, // never under a second
	} {
		got, how := r.Estimate(tt.amount, tt.engine)
		if got != tt.want || !strings.Contains(how, tt.says) {
			t.Errorf("%v on %s: %s (%s), want %s (%s)", tt.amount, tt.engine, got, how, tt.want, tt.says)
		}
	}
}
