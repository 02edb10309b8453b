package analysis

import (
	"testing"

	"dbio/internal/results"
)

// A replay's one step answers findings on whether it kept the recorded
// pace, how far behind it ended and its latencies, read from the figures
// the replay records.
func TestExpectationsReadReplays(t *testing.T) {
	replayed := func(kept bool, behind, writeP99 float64) []*results.Loaded {
		b := &results.BlockIO{Pace: "recorded", Speed: 1, SourceS: 6, RuntimeS: 6 + behind, BehindS: behind, KeptUp: kept,
			Writes: results.BlockIOOp{Requests: 3000, PerSecond: 500, Latency: results.BlockIOLatency{P50: 100, P99: writeP99}}}
		step := results.Step{Index: 1, Name: "replay", Kind: results.KindReplay, Status: results.StatusCompleted,
			Figures: results.BlockIOFigures(results.KindReplay, b), BlockIO: b}
		return []*results.Loaded{{Run: results.Run{Kind: results.KindReplay}, Steps: []results.Step{step}}}
	}
	fast, slow, alsoFast := replayed(true, 0.02, 900), replayed(false, 40, 200000), replayed(true, 0.05, 950)
	for _, tt := range []struct {
		figure   string
		relation results.Relation
		a, b     []*results.Loaded
		want     ExpectVerdict
	}{
		{"kept_up", results.Lower, fast, slow, Reproduced},
		{"kept_up", results.Lower, fast, alsoFast, WithinNoise},
		{"kept_up", results.Lower, slow, fast, NotReproduced},
		{"behind_s", results.Higher, fast, slow, Reproduced},
		{"write_p99_us", results.Lower, slow, fast, Reproduced},
		{"write_p99_us", results.Lower, fast, alsoFast, WithinNoise},
	} {
		e := results.Expectation{Finding: tt.figure, Figure: tt.figure, A: "a", B: "b", StepA: "replay", StepB: "replay", Relation: tt.relation, Floor: 0.3}
		if c := CheckExpectation(e, tt.a, tt.b); c.Verdict != tt.want {
			t.Errorf("%s %s: %s (%s; %v against %v), want %s", tt.figure, tt.relation, c.Verdict, c.Reason, c.SamplesB, c.SamplesA, tt.want)
		}
	}
}
