package results

import (
	"slices"
	"testing"
)

// A job's last interval, flushed less than half a second after the one
// before it in its direction, is not a second; the other direction's
// samples at the same times are judged on their own.
func TestWholeFioIntervals(t *testing.T) {
	samples := []FioLogSample{{TimeMS: 1000, Dir: 0}, {TimeMS: 1000, Dir: 1}, {TimeMS: 2000, Dir: 0},
		{TimeMS: 2040, Dir: 0}, {TimeMS: 2400, Dir: 1}, {TimeMS: 3000, Dir: 0}}
	got := slices.Collect(WholeFioIntervals(samples))
	want := []FioLogSample{{TimeMS: 1000, Dir: 0}, {TimeMS: 1000, Dir: 1}, {TimeMS: 2000, Dir: 0}, {TimeMS: 2400, Dir: 1}, {TimeMS: 3000, Dir: 0}}
	if !slices.Equal(got, want) {
		t.Errorf("WholeFioIntervals = %v, want %v", got, want)
	}
	for _, c := range []struct{ timeMS, want int64 }{{1000, 0}, {1499, 0}, {1500, 1}, {2990, 2}, {400, -1}} {
		if got := FioSecond(1000, c.timeMS); got != c.want {
			t.Errorf("FioSecond(1000, %d) = %d, want %d", c.timeMS, got, c.want)
		}
	}
}
