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
