package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/metrics"
	"dbio/internal/results"
)

// synthStep is one step of a synthetic run: its user count (0 for a step
// without users), kind and name, TPM, CPU iowait and p99 latency in ms.
type synthStep struct {
	users        int
	kind, name   string
	tpm, iowait  float64
	p99, seconds float64
}

// suiteDir writes a suite directory as dbio suite leaves it: suite.json with
// the plan's runs (named base-rN when repeated) and expectations, and one
// results directory per run with its steps.
func suiteDir(t *testing.T, expect []results.Expectation, runs map[string][][]synthStep) string {
	t.Helper()
	dir := t.TempDir()
	type planRun struct {
		Name string `json:"name"`
		Base string `json:"base"`
		Rep  int    `json:"rep,omitempty"`
		Kind string `json:"kind"`
	}
	type outRun struct {
		Name   string         `json:"name"`
		Dir    string         `json:"dir"`
		Status results.Status `json:"status"`
	}
	var plan []planRun
	var outcome []outRun
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, base := range sortedNames(runs) {
		for rep, steps := range runs[base] {
			name := base
			if len(runs[base]) > 1 {
				name = base + "-r" + string(rune('1'+rep))
			}
			d, err := results.Create(dir, name, results.Run{Kind: "tpcc"}, now)
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(time.Minute)
			for i, p := range steps {
				s := results.Step{Index: i, Name: p.name, Kind: p.kind, Users: p.users, Status: results.StatusCompleted,
					Telemetry: &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{"cpu_iowait_pct": {Mean: p.iowait, Samples: 20}}}}
				if s.Kind == "" {
					s.Kind = "tpcc"
				}
				if s.Name == "" {
					s.Name = "users-" + string(rune('0'+p.users))
				}
				if p.tpm > 0 {
					s.Figures = append(s.Figures, results.Figure{Name: results.FigureTPM, Value: p.tpm, Unit: "tx/min"})
					s.Total = &metrics.TxSummary{Latency: metrics.Latency{Count: 100, P99US: int64(p.p99 * 1000)}}
				}
				if p.seconds > 0 {
					s.Figures = append(s.Figures, results.Figure{Name: "seconds", Value: p.seconds, Unit: "s"})
				}
				if err := d.WriteStep(s, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Finish(results.StatusCompleted, nil, now); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, planRun{Name: name, Base: base, Rep: map[bool]int{true: rep + 1}[len(runs[base]) > 1], Kind: "tpcc"})
			// The runner records a run's directory under the results base it was given.
			outcome = append(outcome, outRun{Name: name, Dir: filepath.Join("elsewhere", filepath.Base(d.Path)), Status: results.StatusCompleted})
		}
	}
	rec := map[string]any{"plan": map[string]any{"Name": "synthetic", "Runs": plan, "Expect": expect}, "outcome": map[string]any{"runs": outcome}}
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, results.SuiteFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func sortedNames(m map[string][][]synthStep) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// tpccRun is a run of TPC-C at 2 and 8 users with the given TPM, iowait and
// p99 at 8 users (2 users at half the TPM).
func tpccRun(tpm8, iowait8, p99 float64) []synthStep {
	return []synthStep{{users: 2, tpm: tpm8 / 2, iowait: 0.5, p99: p99 / 2}, {users: 8, tpm: tpm8, iowait: iowait8, p99: p99}}
}

func TestExpectationVerdicts(t *testing.T) {
	lower := func(figure string, ratio float64) results.Expectation {
		return results.Expectation{Finding: figure + " lower on sata", Figure: figure, A: "nvme", B: "sata", Relation: results.Lower, Ratio: ratio, StepA: "largest", StepB: "largest", Floor: 0.3}
	}
	higher := func(figure string) results.Expectation {
		return results.Expectation{Finding: figure + " higher on sata", Figure: figure, A: "nvme", B: "sata", Relation: results.Higher, StepA: "largest", StepB: "largest", Floor: 0.3}
	}
	tests := []struct {
		name   string
		expect results.Expectation
		runs   map[string][][]synthStep
		want   ExpectVerdict
		reason string
	}{
		{"two runs a side apart, as the finding says", lower("tpm", 0.8),
			map[string][][]synthStep{"nvme": {tpccRun(30000, 0.2, 80), tpccRun(24000, 0.1, 90)}, "sata": {tpccRun(12000, 6, 120), tpccRun(13000, 5, 130)}},
			Reproduced, "the ranges of 2 and 2 runs do not overlap"},
		{"lower, but not by the ratio", lower("tpm", 0.8),
			map[string][][]synthStep{"nvme": {tpccRun(30000, 0.2, 80), tpccRun(29000, 0.1, 90)}, "sata": {tpccRun(27000, 6, 120), tpccRun(27500, 5, 130)}},
			NotReproduced, "the ranges of 2 and 2 runs do not overlap"},
		{"the other way", lower("tpm", 0),
			map[string][][]synthStep{"nvme": {tpccRun(20000, 0.2, 80), tpccRun(21000, 0.1, 90)}, "sata": {tpccRun(27000, 6, 120), tpccRun(28000, 5, 130)}},
			NotReproduced, "the ranges of 2 and 2 runs do not overlap"},
		{"ranges overlap", lower("tpm", 0),
			map[string][][]synthStep{"nvme": {tpccRun(30000, 0.2, 80), tpccRun(18000, 0.1, 90)}, "sata": {tpccRun(20000, 6, 120), tpccRun(25000, 5, 130)}},
			WithinNoise, "the ranges of 2 and 2 runs overlap"},
		{"one run a side within the floor", lower("tpm", 0),
			map[string][][]synthStep{"nvme": {tpccRun(30000, 0.2, 80)}, "sata": {tpccRun(24000, 6, 120)}},
			WithinNoise, "one against one, within the 30 % floor: repeat the runs"},
		{"one run a side beyond the floor", lower("tpm", 0),
			map[string][][]synthStep{"nvme": {tpccRun(30000, 0.2, 80)}, "sata": {tpccRun(12000, 6, 120)}},
			Reproduced, "one against one, beyond the 30 % floor"},
		{"iowait higher", higher("cpu-iowait"),
			map[string][][]synthStep{"nvme": {tpccRun(30000, 0.2, 80), tpccRun(24000, 0.4, 90)}, "sata": {tpccRun(12000, 6, 120), tpccRun(13000, 5, 130)}},
			Reproduced, "the ranges of 2 and 2 runs do not overlap"},
		{"iowait apart but both under 1 % of the machine", higher("cpu-iowait"),
			map[string][][]synthStep{"nvme": {tpccRun(30000, 0.1, 80), tpccRun(24000, 0.1, 90)}, "sata": {tpccRun(12000, 0.6, 120), tpccRun(13000, 0.7, 130)}},
			WithinNoise, "the difference is under 1"},
		{"p99 higher, four runs a side: the U test", higher("latency-p99"),
			map[string][][]synthStep{
				"nvme": {tpccRun(30000, 0.2, 80), tpccRun(24000, 0.1, 90), tpccRun(26000, 0.1, 85), tpccRun(27000, 0.1, 82)},
				"sata": {tpccRun(12000, 6, 120), tpccRun(13000, 5, 130), tpccRun(12500, 5, 125), tpccRun(12600, 5, 128)}},
			Reproduced, "significant (p = 0.0286, 4 and 4 runs)"},
		{"a side without the figure", higher("latency-p99"),
			map[string][][]synthStep{"nvme": {tpccRun(30000, 0.2, 80)}, "sata": {{{users: 8, iowait: 3}}}},
			NotMeasured, "runs nvme and sata have no user count at which both have p99 latency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := suiteDir(t, []results.Expectation{tt.expect}, tt.runs)
			s, err := results.LoadSuite(dir)
			if err != nil {
				t.Fatal(err)
			}
			got := CheckExpectations(s.Expect, s.Repeats)
			if len(got) != 1 {
				t.Fatalf("%d checks", len(got))
			}
			c := got[0]
			if c.Verdict != tt.want || !strings.HasPrefix(c.Reason, tt.reason) {
				t.Errorf("verdict %s (%s), want %s (%s)\nA %v (%s)\nB %v (%s)", c.Verdict, c.Reason, tt.want, tt.reason, c.SamplesA, c.WhereA, c.SamplesB, c.WhereB)
			}
		})
	}
}

// A noisy-neighbour run is read against itself (quiet, then interference,
// one sample per working tenant), and a backup run by its cycles.
func TestExpectationsReadScenarioSteps(t *testing.T) {
	noisy := []synthStep{
		{kind: "tpcc", name: "quiet-t1", users: 2, tpm: 30000, p99: 20}, {kind: "tpcc", name: "quiet-t2", users: 2, tpm: 31000, p99: 22},
		{kind: "noisy-quiet", name: "quiet"},
		{kind: "tpcc", name: "interference-t1", users: 2, tpm: 21000, p99: 40}, {kind: "tpcc", name: "interference-t2", users: 2, tpm: 22000, p99: 45},
		{kind: "noisy-interference", name: "interference"},
	}
	backup := func(s ...float64) []synthStep {
		var out []synthStep
		for i, v := range s {
			out = append(out, synthStep{kind: "backup", name: "backup-" + string(rune('1'+i)), seconds: v}, synthStep{kind: "restore", name: "restore-" + string(rune('1'+i)), seconds: v / 2})
		}
		return out
	}
	expect := []results.Expectation{
		{Finding: "neighbours' backups lower the others' TPM", Figure: "tpm", A: "noisy", B: "noisy", StepA: "quiet", StepB: "interference", Relation: results.Lower, Floor: 0.3},
		{Finding: "backups take longer on sata", Figure: "seconds", A: "backup-nvme", B: "backup-sata", StepA: "backup", StepB: "backup", Relation: results.Higher, Ratio: 1.2, Floor: 0.3},
	}
	dir := suiteDir(t, expect, map[string][][]synthStep{"noisy": {noisy}, "backup-nvme": {backup(10, 11, 10.5)}, "backup-sata": {backup(15, 16, 15.5)}})
	s, err := results.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := CheckExpectations(s.Expect, s.Repeats)
	for i, want := range []struct {
		verdict        ExpectVerdict
		whereA, whereB string
		ratio          float64
	}{
		{Reproduced, "quiet, 2 steps", "interference, 2 steps", 21500.0 / 30500},
		{Reproduced, "backup, 3 steps", "backup, 3 steps", 15.5 / 10.5},
	} {
		c := got[i]
		if c.Verdict != want.verdict || c.WhereA != want.whereA || c.WhereB != want.whereB || c.Ratio != want.ratio {
			t.Errorf("%s: %s (%s), read at %q and %q, ratio %v; want %s at %q and %q, ratio %v", c.Finding, c.Verdict, c.Reason, c.WhereA, c.WhereB, c.Ratio,
				want.verdict, want.whereA, want.whereB, want.ratio)
		}
	}
}

// Every figure an expectation may name reads a step.
func TestExpectFiguresAreKnown(t *testing.T) {
	for _, id := range ExpectFigures() {
		if m, ok := ExpectMetric(id); !ok || m.Value == nil || m.Title == "" {
			t.Errorf("figure %s: %+v", id, m)
		}
	}
	if _, ok := ExpectMetric("nope"); ok {
		t.Error("an unknown figure was found")
	}
}
