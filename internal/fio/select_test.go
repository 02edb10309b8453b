package fio

import (
	"strings"
	"testing"
	"time"

	"dbio/internal/results"
)

// measured builds a completed point with fio-like figures.
func measured(label, series, name string, iops, mbs, meanUS, p99US float64) results.FioPoint {
	return results.FioPoint{
		FioPlan: results.FioPlan{Name: name, Series: series, Label: label},
		Status:  results.StatusCompleted,
		FioDirections: results.FioDirections{Total: &results.FioDirection{IOPS: iops, BytesPerSec: mbs * 1e6, Completion: results.FioLatency{MeanUS: meanUS,
			Percentiles: []results.FioPercentile{{P: 50, US: meanUS}, {P: 99, US: p99US}}}}},
	}
}

// TestLatencyBounded: a plan asks for its latency-bounded best points when
// its profile's question is that table (sqlio) or a bound is given.
func TestLatencyBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want bool
	}{
		{"sqlio", Config{Profile: "sqlio"}, true},
		{"four-corners", Config{Profile: "four-corners"}, false},
		{"four-corners with --latency-max", Config{Profile: "four-corners", LatencyMax: 5 * time.Millisecond}, true},
		{"four-corners with --latency-stat", Config{Profile: "four-corners", LatencyStat: results.StatP99}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Targets = []string{t.TempDir()}
			p, err := NewPlan(tc.c, BuiltinProfiles())
			if err != nil {
				t.Fatal(err)
			}
			if got := p.LatencyBounded(); got != tc.want {
				t.Errorf("LatencyBounded() = %v, want %v", got, tc.want)
			}
		})
	}
	if most, stat := (Config{}).LatencyBound(); most != DefaultLatencyMax || stat != results.StatMean {
		t.Errorf("default bound %s on %s, want %s on the mean", most, stat, DefaultLatencyMax)
	}
}

func TestRateFor(t *testing.T) {
	for _, tc := range []struct {
		max, pct float64
		want     int64
	}{
		{145118.4, 10, 14512},
		{145118.4, 100, 145118},
		{145118.4, 120, 174142},
		{3, 10, 1}, // never below one I/O per second
	} {
		if got := RateFor(tc.max, tc.pct); got != tc.want {
			t.Errorf("RateFor(%v, %v) = %d, want %d", tc.max, tc.pct, got, tc.want)
		}
	}
}

func TestResolveRate(t *testing.T) {
	max := measured("nvme", "randread-4k", "max", 100000, 400, 300, 900)
	p := results.FioPlan{Name: "rate-30pct", RateOf: "max", RatePct: 30}
	if got, err := resolveRate(p, []results.FioPoint{max}); err != nil || got != 30000 {
		t.Errorf("got %d %v, want 30000", got, err)
	}
	if _, err := resolveRate(p, nil); err == nil || !strings.Contains(err.Error(), "has not run before it") {
		t.Errorf("missing maximum: %v", err)
	}
	max.Status = results.StatusFailed
	if _, err := resolveRate(p, []results.FioPoint{max}); err == nil || !strings.Contains(err.Error(), "did not complete") {
		t.Errorf("failed maximum: %v", err)
	}
}

func TestFormatting(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{groupThousands(1234567.4), "1,234,567"},
		{groupThousands(999), "999"},
		{groupThousands(-1234), "-1,234"},
		{formatUS(87.4), "87 µs"},
		{formatUS(1234), "1.23 ms"},
		{formatUS(2.5e6), "2.50 s"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
