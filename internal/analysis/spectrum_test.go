package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/metrics"
	"dbio/internal/results"
)

// uniform records one value of every microsecond from 1 to n.
func uniform(t *testing.T, n int64) *hdrhistogram.Histogram {
	t.Helper()
	h := metrics.NewHistogram()
	for v := int64(1); v <= n; v++ {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// withinHdr says v is within HdrHistogram's three significant figures of want.
func withinHdr(v, want float64) bool { return math.Abs(v-want) <= want*1e-3+1 }

func TestSpectrum(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int64
		points int // 10 per nine up to n values, then the maximum
	}{
		{"one value", 1, 2},
		{"ten values", 10, 12},
		{"thousand values", 1000, 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Spectrum(uniform(t, tc.n))
			if len(got) != tc.points {
				t.Fatalf("%d percentiles, want %d: %v", len(got), tc.points, got)
			}
			if got[0].P != 0 || got[0].US != 1 {
				t.Errorf("first percentile %+v, want the minimum at 0", got[0])
			}
			last := got[len(got)-1]
			if !withinHdr(last.US, float64(tc.n)) {
				t.Errorf("last percentile %+v, want the maximum %d", last, tc.n)
			}
			for i := 1; i < len(got); i++ {
				if got[i].P < got[i-1].P || got[i].US < got[i-1].US {
					t.Errorf("percentile %d (%+v) falls below %+v", i, got[i], got[i-1])
				}
			}
			// On the uniform distribution the value at p is p % of n.
			for _, p := range got[1 : len(got)-1] {
				if want := p.P / 100 * float64(tc.n); !withinHdr(p.US, math.Ceil(want)) {
					t.Errorf("p%g = %g µs, want %g", p.P, p.US, math.Ceil(want))
				}
			}
		})
	}
	if got := Spectrum(metrics.NewHistogram()); got != nil {
		t.Errorf("empty histogram: %v, want none", got)
	}
}

func TestNines(t *testing.T) {
	for p, want := range map[float64]float64{0: 1, 90: 10, 99: 100, 99.9: 1000} {
		if got := Nines(p); math.Abs(got-want) > want*1e-9 {
			t.Errorf("Nines(%g) = %g, want %g", p, got, want)
		}
	}
	if !math.IsInf(Nines(100), 1) {
		t.Errorf("Nines(100) = %g, want +Inf", Nines(100))
	}
}

func TestLadder(t *testing.T) {
	got := Ladder(uniform(t, 10000))
	if len(got) != len(DiskSpdLadder) {
		t.Fatalf("%d rungs, want %d", len(got), len(DiskSpdLadder))
	}
	want := map[string]float64{"min": 1, "25th": 2500, "50th": 5000, "75th": 7500, "90th": 9000, "95th": 9500,
		"99th": 9900, "3-nines": 9990, "4-nines": 9999, "5-nines": 10000, "8-nines": 10000, "max": 10000}
	for i, r := range DiskSpdLadder {
		if w, ok := want[r.Name]; ok && !withinHdr(got[i].US, w) {
			t.Errorf("%s = %g µs, want %g", r.Name, got[i].US, w)
		}
	}
	if Ladder(metrics.NewHistogram()) != nil || Ladder(nil) != nil {
		t.Error("an empty histogram has a ladder")
	}
}

// A step's histograms are read back from its directory by kind, the
// corrected ones of an open-loop step left out, and merged into all.
func TestReadStepLatency(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	d, err := results.Create(t.TempDir(), "spectrum", results.Run{Kind: "disk"}, now)
	if err != nil {
		t.Fatal(err)
	}
	step := results.Step{Index: 0, Name: "mix", Kind: results.KindFio, Status: results.StatusCompleted, Started: now, Ended: now.Add(time.Second)}
	hists := map[string]*hdrhistogram.Histogram{"read": uniform(t, 100), "write": uniform(t, 300),
		"write" + results.CorrectedSuffix: uniform(t, 5000), "empty": metrics.NewHistogram()}
	if err := d.WriteStep(step, hists); err != nil {
		t.Fatal(err)
	}
	bare := results.Step{Index: 1, Name: "bare", Kind: results.KindFio, Status: results.StatusCompleted, Started: now, Ended: now}
	if err := d.WriteStep(bare, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(results.StatusCompleted, nil, now); err != nil {
		t.Fatal(err)
	}
	l, err := results.Load(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	lat, err := ReadStepLatency(l, l.Steps[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(lat.Kinds) != 2 || lat.Kinds[0] != "read" || lat.Kinds[1] != "write" {
		t.Fatalf("kinds %v, want [read write]", lat.Kinds)
	}
	all := lat.All()
	if all.TotalCount() != 400 || all.Max() != 300 {
		t.Errorf("all: %d values up to %d, want 400 up to 300", all.TotalCount(), all.Max())
	}
	if lat.ByKind["read"].TotalCount() != 100 {
		t.Errorf("merging changed the read histogram: %d values", lat.ByKind["read"].TotalCount())
	}
	none, err := ReadStepLatency(l, l.Steps[1])
	if err != nil || len(none.Kinds) != 0 || none.All() != nil {
		t.Errorf("a step without histograms: %v, %v", none.Kinds, err)
	}
}
