package analysis

import (
	"testing"

	"dbio/internal/results"
)

// TestAgainstEarlier reads a single run's value against earlier runs':
// worse than every one of at least 19 and by more than their spread is a
// regression; at the edge of the noise, better, or against fewer runs it
// is not (and against fewer it is not read at all).
func TestAgainstEarlier(t *testing.T) {
	tps := Metric{ID: "tps", Title: "TPS", Unit: "tx/s", Better: results.HigherBetter}
	latency := Metric{ID: "latency", Title: "latency", Unit: "ms", Better: results.LowerBetter}
	earlier := func(n int) []float64 {
		var vs []float64
		for i := range n {
			vs = append(vs, 95+float64(i%11)) // 95 to 105, median 100
		}
		return vs
	}
	tests := []struct {
		name    string
		m       Metric
		before  []float64
		run     float64
		read    bool
		verdict Significance
	}{
		{"a fifth fewer transactions", tps, earlier(20), 80, true, Significant},
		{"a third more latency", latency, earlier(20), 130, true, Significant},
		{"below all but within their spread", tps, earlier(20), 93, true, NotSignificant},
		{"among them", tps, earlier(20), 99, true, NotSignificant},
		{"better than all", tps, earlier(20), 130, true, NotSignificant},
		{"lower latency than all", latency, earlier(20), 70, true, NotSignificant},
		{"too few earlier runs", tps, earlier(EarlierRunsNeeded - 1), 50, false, TooFewRepeats},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := CompareRepeated(tt.before, []float64{tt.run}, tt.m)
			if !ok || d.Verdict != TooFewRepeats {
				t.Fatalf("repeats against one run: %v %s", ok, d.Verdict)
			}
			got, read := AgainstEarlier(d)
			if read != tt.read || got.Verdict != tt.verdict {
				t.Fatalf("read %v, verdict %s; want %v, %s", read, got.Verdict, tt.read, tt.verdict)
			}
			if got.Verdict == Significant && (got.Judgement != Worsened || got.P > 0.05) {
				t.Errorf("a regression judged %s with p %g", got.Judgement.Word(), got.P)
			}
			if read && got.Verdict != Significant && got.Judgement == Worsened {
				t.Errorf("no regression, yet judged worse")
			}
		})
	}
}
