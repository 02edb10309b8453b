package fio

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// measured builds a completed point with fio-like figures.
func measured(label, series, name string, iops, mbs, meanUS, p99US float64) PointResult {
	return PointResult{
		FioPlan: results.FioPlan{Name: name, Series: series, Label: label},
		Status:  results.StatusCompleted,
		Total: &Direction{IOPS: iops, BytesPerSec: mbs * 1e6, Completion: Latency{MeanUS: meanUS,
			Percentiles: []Percentile{{P: 50, US: meanUS}, {P: 99, US: p99US}}}},
	}
}

func TestBestWithin(t *testing.T) {
	failed := measured("nvme", "randread", "randread-8k-qd128", 900000, 7000, 100, 200)
	failed.Status = results.StatusFailed
	points := []PointResult{
		measured("nvme", "randread", "randread-8k-qd1", 10000, 80, 100, 300),
		measured("nvme", "randread", "randread-8k-qd32", 200000, 1600, 4000, 25000),
		measured("nvme", "randread", "randread-64k-qd32", 50000, 3200, 19000, 40000),
		measured("nvme", "randread", "randread-64k-qd64", 52000, 3300, 21000, 60000),
		failed,
		measured("nvme", "randwrite", "randwrite-8k-qd1", 5000, 40, 25000, 30000),
		measured("sata", "randread", "randread-8k-qd1", 8000, 64, 125, 400),
		measured("sata", "randread", "randread-8k-qd32", 8000, 64, 4000, 9000),
	}
	for _, tc := range []struct {
		name  string
		bound LatencyBound
		want  []string
	}{
		{"mean under 20ms", LatencyBound{Max: 20 * time.Millisecond, Stat: StatMean}, []string{
			"nvme randread 3/4 iops=randread-8k-qd32 mb=randread-64k-qd32",
			"nvme randwrite 0/1 iops=- mb=-",
			// A tie on IOPS goes to the earlier, lighter point.
			"sata randread 2/2 iops=randread-8k-qd1 mb=randread-8k-qd1",
		}},
		{"p99 under 20ms", LatencyBound{Max: 20 * time.Millisecond, Stat: StatP99}, []string{
			"nvme randread 1/4 iops=randread-8k-qd1 mb=randread-8k-qd1",
			"nvme randwrite 0/1 iops=- mb=-",
			"sata randread 2/2 iops=randread-8k-qd1 mb=randread-8k-qd1",
		}},
		{"the bound itself is within", LatencyBound{Max: 21 * time.Millisecond, Stat: StatMean}, []string{
			"nvme randread 4/4 iops=randread-8k-qd32 mb=randread-64k-qd64",
			"nvme randwrite 0/1 iops=- mb=-",
			"sata randread 2/2 iops=randread-8k-qd1 mb=randread-8k-qd1",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := BestWithin(points, tc.bound)
			var got []string
			for _, r := range rows {
				pick := func(p *analysis.Pick) string {
					if p == nil {
						return "-"
					}
					return p.Name
				}
				got = append(got, fmt.Sprintf("%s %s %d/%d iops=%s mb=%s", r.Label, r.Series, r.Within, r.Points, pick(r.BestIOPS), pick(r.BestMBPerSec)))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestLatencyBoundedTable(t *testing.T) {
	rows := BestWithin([]PointResult{
		measured("nvme", "randread", "randread-8k-qd32", 200000, 1638.4, 4000, 25000),
		measured("nvme", "randwrite", "randwrite-8k-qd1", 5000, 40, 25000, 30000),
	}, LatencyBound{Max: 20 * time.Millisecond, Stat: StatMean})
	got := strings.Join(LatencyBoundedTable(rows, LatencyBound{Max: 20 * time.Millisecond, Stat: StatMean}), "\n") + "\n"
	want := `best within mean latency ≤ 20ms:
target  pattern    within  best IOPS          at                     best MB/s         at
nvme    randread   1/1     200,000 (4.00 ms)  randread-8k-qd32       1638.4 (4.00 ms)  randread-8k-qd32
nvme    randwrite  0/1     -                  none within the bound  -
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
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
	p := Point{Name: "rate-30pct", RateOf: "max", RatePct: 30}
	if got, err := resolveRate(p, []PointResult{max}); err != nil || got != 30000 {
		t.Errorf("got %d %v, want 30000", got, err)
	}
	if _, err := resolveRate(p, nil); err == nil || !strings.Contains(err.Error(), "has not run before it") {
		t.Errorf("missing maximum: %v", err)
	}
	max.Status = results.StatusFailed
	if _, err := resolveRate(p, []PointResult{max}); err == nil || !strings.Contains(err.Error(), "did not complete") {
		t.Errorf("failed maximum: %v", err)
	}
}

func ratePoint(name string, pct float64, iops, meanUS float64) PointResult {
	r := measured("nvme", "randread-4k", name, iops, iops*4096/1e6, meanUS, meanUS*3)
	r.RateOf, r.RatePct, r.RateIOPS = "randread-4k-max", pct, int64(pct*1000)
	return r
}

func TestCurvesAndKnee(t *testing.T) {
	points := []PointResult{
		measured("nvme", "randread-4k", "randread-4k-max", 100000, 409.6, 1200, 3000),
		ratePoint("r10", 10, 10000, 200),
		ratePoint("r50", 50, 50000, 250),
		ratePoint("r90", 90, 89000, 380),
		ratePoint("r100", 100, 99000, 900),
		ratePoint("r120", 120, 100500, 1300),
	}
	curves := Curves(points)
	if len(curves) != 1 || curves[0].Max == nil || len(curves[0].Points) != 5 {
		t.Fatalf("curves %+v", curves)
	}
	if k := curves[0].Knee(); k != 3 {
		t.Errorf("knee at %d, want 3 (100 %%: 900 µs ≥ twice 200 µs)", k)
	}
	if _, ok := curves[0].Overshoot(); ok {
		t.Error("a saturated curve reported an overshoot")
	}
	noisy := analysis.Curve{Max: &analysis.CurvePoint{IOPS: 50000}, Points: []analysis.CurvePoint{{Pct: 100, TargetIOPS: 50000, IOPS: 49990}, {Pct: 120, TargetIOPS: 60000, IOPS: 59900}}}
	if p, ok := noisy.Overshoot(); !ok || p.Pct != 120 {
		t.Errorf("a maximum beaten by the 120 %% point went unnoticed: %v %v", p, ok)
	}
	flat := analysis.Curve{Points: []analysis.CurvePoint{{Pct: 10, MeanUS: 100}, {Pct: 100, MeanUS: 150}}}
	if k := flat.Knee(); k != -1 {
		t.Errorf("flat curve knee %d", k)
	}
	lines := CurveTable(points)
	if !strings.HasPrefix(lines[0], "I/O-rate curve nvme randread-4k (maximum 100,000 IOPS, mean 1.20 ms, p99 3.00 ms)") ||
		!strings.Contains(lines[len(lines)-1], "latency bends at 100% of the maximum (99,000 IOPS)") {
		t.Errorf("table:\n%s", strings.Join(lines, "\n"))
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
