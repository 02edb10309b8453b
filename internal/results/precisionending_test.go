package results

import "testing"

func TestPrecisionEnding(t *testing.T) {
	for _, c := range []struct {
		completed, steady bool
		want              string
	}{
		{false, true, PrecisionStopped},
		{false, false, PrecisionStopped},
		{true, true, PrecisionCeiling},
		{true, false, PrecisionNotSteady},
	} {
		if got := PrecisionEnding(c.completed, c.steady); got != c.want {
			t.Errorf("PrecisionEnding(completed %v, steady %v) = %q, want %q", c.completed, c.steady, got, c.want)
		}
	}
}

// A figure's terminal words keep plain digits however wide its interval.
func TestPrecisionFigureSaid(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	tests := []struct {
		f    PrecisionFigure
		want string
	}{
		{PrecisionFigure{Name: "nopm", AskedPct: 2, ReachedPct: pct(1.83)}, "nopm ±1.8 % (asked ±2 %)"},
		{PrecisionFigure{Name: "new_order:p99", AskedPct: 10, ReachedPct: pct(152.4)}, "new_order:p99 ±152 % (asked ±10 %)"},
		{PrecisionFigure{Name: "iops", AskedPct: 0.5, ReachedPct: pct(0.123)}, "iops ±0.12 % (asked ±0.5 %)"},
		{PrecisionFigure{Name: "iops", AskedPct: 2}, "iops no interval yet (asked ±2 %)"},
	}
	for _, tt := range tests {
		if got := tt.f.Said(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// A drift's terminal words carry its sign and the same plain digits.
func TestPrecisionDriftSaid(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		d    PrecisionDrift
		want string
	}{
		{PrecisionDrift{Series: "nopm", Pct: 3.14, HalfPct: pct(8.2)}, "nopm drifted +3.1 % ± 8.2 %"},
		{PrecisionDrift{Series: "tps", Pct: -42.4, HalfPct: pct(12.6)}, "tps drifted -42 % ± 13 %"},
		{PrecisionDrift{Series: "tps", Pct: -62}, "tps drifted -62 % (no interval: the seconds scatter about no line)"},
	} {
		if got := tt.d.Said(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}
