package report

import (
	"strings"
	"testing"

	"dbio/internal/results"
)

// The report says how each measurement until precise ended: a sentence for
// the summary and a row per figure with its interval, the bound it reached
// against the one asked.
func TestPrecisionFindingAndTable(t *testing.T) {
	lo, hi, pct := 980.0, 1020.0, 2.0
	wide := 7.5
	step := func(users int, ended string, at float64, reached *float64) results.Step {
		return results.Step{Name: "users", Users: users, Precision: &results.StepPrecision{Asked: "nopm:2%", Steady: "nopm's drift across the measurement known within ±10 % at 95 % confidence, and not significant or within it",
			Confidence: 0.95, MinS: 30, CeilingS: 300, Ended: ended, AtS: at, SteadyAtEnd: ended != results.PrecisionNotSteady,
			Drift:   &results.PrecisionDrift{Series: "nopm", Pct: -3.14, HalfPct: &wide, Significant: false, BatchS: 2, Batches: int(at) / 2},
			Figures: []results.PrecisionFigure{{Name: "nopm", AskedPct: 2, Seconds: int(at), Mean: 1000, Lo: &lo, Hi: &hi, ReachedPct: reached, BatchS: 5, Batches: 12}}}}
	}
	steps := []results.Step{step(1, results.PrecisionReached, 61, &pct), step(4, results.PrecisionReached, 95, &pct),
		step(8, results.PrecisionCeiling, 300, &wide), step(16, results.PrecisionNotSteady, 300, &wide), {Name: "fixed", Users: 32}}
	got := precisionFinding("TPC-C", steps)
	for _, want := range []string{
		"TPC-C's measurements were to end once precise (nopm:2% at 95 %, at least 30 s, at most 300 s): 2 of 4 steps got there.",
		"At 8 users the measurement ran to its ceiling, steady but not precise",
		"At 16 users it ran to its ceiling and was not steady at the end",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("finding %q lacks %q", got, want)
		}
	}
	if f := precisionFinding("TPC-C", steps[:2]); !strings.HasSuffix(f, "every step got there, after 61 to 95 s.") {
		t.Errorf("finding %q", f)
	}
	if precisionFinding("TPC-C", steps[4:]) != "" || precisionTable(steps[4:], "x") != nil {
		t.Error("a run of fixed measurements has a precision finding or table")
	}
	tb := precisionTable(steps, "x")
	if tb == nil || len(tb.Rows) != 4 {
		t.Fatalf("table %+v", tb)
	}
	row := tb.Rows[2]
	if row[1].Text != "ceiling" || row[4].Text != "nopm" || row[6].Text != "980 to 1,020" || row[7].Text != "7.50" || row[7].Class != "worse" || row[9].Text != "12 of 5 s" ||
		row[10].Text != "nopm -3.1 % ± 7.5 %" || row[10].Class != "" || tb.Rows[3][10].Class != "worse" {
		var texts []string
		for _, c := range row {
			texts = append(texts, c.Text)
		}
		t.Errorf("row %q", texts)
	}
}
