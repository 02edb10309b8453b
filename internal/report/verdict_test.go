package report

import (
	"bytes"
	"strings"
	"testing"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// The terminal summary states every step's verdict with its figures, for
// quick and tpcc alike (both print it through Text).
func TestTextPrintsEveryStepsVerdict(t *testing.T) {
	for _, run := range []string{"quick-tmpfs", "tpcc-postgres"} {
		t.Run(run, func(t *testing.T) {
			l := load(t, run)[0]
			var b bytes.Buffer
			if err := Text(&b, l, testOptions()); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "\nbottleneck:\n") {
				t.Errorf("no bottleneck heading:\n%s", b.String())
			}
			for _, s := range l.Steps {
				if s.Total == nil || s.Telemetry == nil {
					continue
				}
				if want := "  " + s.Name + ": " + s.Telemetry.Verdict.Text + "\n"; !strings.Contains(b.String(), want) {
					t.Errorf("no verdict line %q in:\n%s", want, b.String())
				}
			}
		})
	}
}

// A comparison opens with the change of bottleneck, each run's verdict by
// its head, at the heaviest step where they part.
func TestBottleneckFindingNamesEachRunsVerdict(t *testing.T) {
	step := func(kind results.VerdictKind, text string) *results.Step {
		return &results.Step{Telemetry: &results.TelemetrySummary{Verdict: results.Verdict{Kind: kind, Text: text}}}
	}
	cpu := func() *results.Step {
		return step(results.VerdictCPUServer, "CPU-bound (the server's): 85 % of database time on CPU, idle 3 %")
	}
	sync := func() *results.Step {
		return step(results.VerdictStorageSync, "storage-bound on log syncs: 61 % of database time waited on log syncs")
	}
	runs := []*runView{{Letter: "A"}, {Letter: "B"}}
	for _, tt := range []struct {
		name string
		rows []analysis.Row
		want string
	}{
		{"parted at every step", []analysis.Row{{Label: "1", Steps: []*results.Step{cpu(), sync()}}, {Label: "2", Steps: []*results.Step{cpu(), sync()}},
			{Label: "4", Steps: []*results.Step{cpu(), sync()}}},
			"The bottleneck changed at 4 users: A: CPU-bound (the server's); B: storage-bound on log syncs (it changed at 1 and 2 users too)."},
		{"parted at the lighter step only", []analysis.Row{{Label: "1", Steps: []*results.Step{cpu(), sync()}}, {Label: "4", Steps: []*results.Step{sync(), sync()}}},
			"The bottleneck changed at 1 users: A: CPU-bound (the server's); B: storage-bound on log syncs."},
		{"the same bottleneck, other figures", []analysis.Row{{Label: "4", Steps: []*results.Step{cpu(),
			step(results.VerdictCPUServer, "CPU-bound (the server's): 70 % of database time on CPU, idle 1 %")}}}, ""},
		{"B lacks the step", []analysis.Row{{Label: "4", Steps: []*results.Step{cpu(), nil}}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := bottleneckFinding(runs, tt.rows); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// A/B reads a share of database time as higher or lower, never better or
// worse.
func TestABChangeOfAFigureNeitherBetter(t *testing.T) {
	m := results.ABMetric{Name: "database time on syncs (% of database time)", NeitherBetter: true, Differential: 57,
		A: results.ABSide{Median: 5, Runs: []float64{5, 5, 5, 5}}, B: results.ABSide{Median: 62, Runs: []float64{62, 62, 62, 62}},
		Significance: results.ABSignificance{Verdict: "significant difference"}}
	if got := abChange(m); !strings.HasSuffix(got, ", higher") {
		t.Errorf("change %q, want it called higher", got)
	}
}
