package replay

import (
	"testing"
	"time"

	"dbio/internal/blocktrace"
	"dbio/internal/results"
)

// TestStep: a replay's step holds its verdict's figures in the catalogue,
// and its seconds end when the replay ended.
func TestStep(t *testing.T) {
	end := time.Date(2026, 11, 28, 12, 0, 10, 0, time.UTC)
	for _, tc := range []struct {
		rec  Record
		want results.FigureName
	}{
		{Record{Pace: Recorded, Speed: 1, BehindSeconds: 1, RuntimeSeconds: 3, ExpectedSeconds: 2}, results.FigureBehindS},
		{Record{Pace: Max, Speed: 1, RuntimeSeconds: 0.5, ExpectedSeconds: 2}, results.FigurePaceOfSource},
	} {
		rec := tc.rec
		rec.Capture = "cap"
		rec.Writes = Figures{Requests: 10, PerSecond: 5, Latency: blocktrace.Latency{P50: 100, P99: 900}}
		rec.Seconds = []Second{{WriteIOPS: 5, WriteP99us: 900}, {WriteIOPS: 5, WriteP99us: 800}}
		step, rows := Step(rec, []string{"sdb"}, end)
		if err := results.CheckFigures(results.InStep, step.Figures...); err != nil {
			t.Error(err)
		}
		if _, ok := step.Figure(tc.want); !ok {
			t.Errorf("%s pace: no %s among %+v", rec.Pace, tc.want, step.Figures)
		}
		if _, ok := step.Figure(results.FigureReadP99US); ok {
			t.Errorf("%s pace: a read p99 without reads", rec.Pace)
		}
		if len(rows) != 2 || !rows[1].Time.Equal(end) {
			t.Errorf("seconds %+v, want two ending at %v", rows, end)
		}
		for _, r := range rows {
			for _, v := range r.Values {
				if err := results.CheckFigures(results.InSecond, results.Figure{Name: results.FigureName(v.Name)}); err != nil {
					t.Error(err)
				}
			}
		}
	}
}
