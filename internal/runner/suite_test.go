package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"dbio/internal/arrival"
	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/results"
	"dbio/internal/stats"
	"dbio/internal/workload/sysbench"
)

// suite.json records every directory relative to the suite's own, and
// leaves a path outside it as it is rather than one with "..".
func TestSuiteOutcomeRecordedRelative(t *testing.T) {
	base := "/results/20261125-suite-x"
	o := SuiteOutcome{Dir: base,
		Runs:        []SuiteRun{{Name: "a", Dir: base + "/a"}, {Name: "b", Dir: base + "/set-b/b-r2"}, {Name: "c"}},
		RepeatSets:  []string{base + "/set-b"},
		Comparisons: []string{base + "/compare-tpcc.html", "/tmp/elsewhere.html"}}
	got := o.relativeTo(base)
	want := SuiteOutcome{Dir: ".",
		Runs:        []SuiteRun{{Name: "a", Dir: "a"}, {Name: "b", Dir: "set-b/b-r2"}, {Name: "c"}},
		RepeatSets:  []string{"set-b"},
		Comparisons: []string{"compare-tpcc.html", "/tmp/elsewhere.html"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
	if o.Runs[1].Dir != base+"/set-b/b-r2" {
		t.Error("relativeTo changed the outcome the suite goes on using")
	}
}

// A backup or noisy-neighbour run's plan line says what it runs, not the
// user steps it does not have.
func TestPlanLineOfScenarios(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{describeBackups(Backups{Cycles: 1, Interval: time.Minute}), "1 backup cycle of an idle database after the load"},
		{describeBackups(Backups{Cycles: 3, Restore: true, Users: 4, Interval: 30 * time.Second}),
			"3 backup and restore cycles of the workload running at 4 users after the load, 30s apart"},
		{describeNoisy(Noisy{Tenants: 3, BackupTenants: 1, Users: 2, Cycles: 2, Interval: 5 * time.Second}),
			"3 tenants at 2 users each, the 2 working ones measured quiet, then while 1 neighbour backs up 2 times, 5s apart"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// TestComparableGroups: the finished runs that share a configuration are
// compared, each group named by its runs' Group (numbered when two share
// a name), with one set per variant; a run alone or without a directory
// joins none.
func TestComparableGroups(t *testing.T) {
	plan := []PlannedRun{
		{Name: "w1-a", Config: "tpcc{w:1}", Group: "tpcc", Variant: "data=a"},
		{Name: "w1-b", Config: "tpcc{w:1}", Group: "tpcc", Variant: "data=b"},
		{Name: "w2-a", Config: "tpcc{w:2}", Group: "tpcc", Variant: "data=a"},
		{Name: "disk", Config: "disk{}", Group: "disk"},
		{Name: "w2-b", Config: "tpcc{w:2}", Group: "tpcc", Variant: "data=b"},
		{Name: "w1-c", Config: "tpcc{w:1}", Group: "tpcc", Variant: "data=c"},
		{Name: "w1-a-again", Config: "tpcc{w:1}", Group: "tpcc", Variant: "data=a"},
	}
	runs := []SuiteRun{{Dir: "d0"}, {Dir: "d1"}, {Dir: "d2"}, {Dir: "d3"}, {Dir: "d4"}, {Dir: ""}, {Dir: "d6"}}
	var got []string
	for _, g := range comparableGroups(plan, runs) {
		var sets []string
		for _, s := range g.sets() {
			sets = append(sets, s.Label+":"+strings.Join(s.Dirs, ","))
		}
		got = append(got, g.key+" "+strings.Join(sets, " "))
	}
	want := []string{"tpcc data=a:d0,d6 data=b:d1", "tpcc-2 data=a:d2 data=b:d4"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("groups\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A suite's comparison until decided stops adding rounds of repeats once
// the sequential test has decided, skips the configuration's later runs
// and records every look in suite.json: two variants of one steady SQLite
// run (sysbench paced at the same rate on two targets) are found not
// different before the fifth round. Each step lasts 30 ticks: with 10, a
// run on the loaded CI machine whose transactions were late at the step's
// end counted a few percent fewer, and the rounds stayed undecided.
func TestSuiteComparesUntilDecided(t *testing.T) {
	design, err := stats.NewSequential(stats.DefaultAlpha, 5)
	if err != nil {
		t.Fatal(err)
	}
	tick := 100 * time.Millisecond
	targets := map[string]string{"data=a": t.TempDir(), "data=b": t.TempDir()}
	var runs []PlannedRun
	for rep := 1; rep <= 5; rep++ {
		for _, variant := range []string{"data=a", "data=b"} {
			sb := sysbench.DefaultConfig()
			// One query a transaction, which a busy machine keeps up
			// with at this pace (see TestPrecisionBoundSteps).
			sb.TableSize, sb.Workload = 1000, sysbench.PointSelect
			name := fmt.Sprintf("sb-%s-r%d", strings.TrimPrefix(variant, "data="), rep)
			runs = append(runs, PlannedRun{Name: name, Kind: "sysbench", Variant: variant, Config: "sysbench{}", Group: "sysbench",
				Set: "sb-" + strings.TrimPrefix(variant, "data="), Rep: rep, Sequential: &design, Margin: 0.05,
				Plan: &Plan{Setup: Setup{Name: name, Kind: "sysbench", Engine: sqlite.Engine{}, EngineOptions: engine.Options{Database: "sb", Fresh: true},
					DataPath: targets[variant], Workload: sysbench.New(sb), Tick: tick, SkipChecks: true},
					Body: Steps{Users: []int{1}, Step: 30 * tick, Pacing: &Pacing{Process: arrival.Fixed, Rate: 100}}}})
		}
	}
	var said bytes.Buffer
	expected := make([]time.Duration, len(runs))
	for i := range expected {
		expected[i] = 2 * time.Second
	}
	out, err := RunSuite(context.Background(), Suite{Name: "until-decided", Results: t.TempDir(), Runs: runs, Expected: expected}, Env{Out: &said})
	if err != nil {
		t.Fatalf("%v\n%s", err, said.String())
	}
	if len(out.Sequential) != 1 {
		t.Fatalf("sequential comparisons %+v", out.Sequential)
	}
	seq := out.Sequential[0]
	if !seq.Decided || seq.Verdict != stats.NoDifference.String() || seq.RunsPerSide >= 5 || len(seq.Looks) != seq.RunsPerSide || seq.A != "data=a" || seq.B != "data=b" {
		t.Fatalf("decided %v %q after %d runs a side, %d looks: want no difference before the fifth round\n%s", seq.Decided, seq.Verdict, seq.RunsPerSide, len(seq.Looks), said.String())
	}
	skipped := 0
	for _, r := range out.Runs {
		if r.Status == results.StatusSkipped {
			skipped++
		}
	}
	if want := 2 * (5 - seq.RunsPerSide); skipped != want || len(out.Runs) != 10 {
		t.Errorf("%d of %d runs skipped, want %d", skipped, len(out.Runs), want)
	}
	var recorded struct {
		Outcome SuiteOutcome `json:"outcome"`
	}
	b, err := os.ReadFile(filepath.Join(out.Dir, results.SuiteFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &recorded); err != nil {
		t.Fatal(err)
	}
	if got := recorded.Outcome.Sequential; len(got) != 1 || len(got[0].Looks) != seq.RunsPerSide || got[0].Verdict != seq.Verdict || got[0].Figure == "" {
		t.Errorf("suite.json records %+v", got)
	}
	// Each side's repeat set says it ran fewer repeats than planned, and
	// that its comparison decided so, not that it broke.
	if len(out.RepeatSets) != 2 {
		t.Fatalf("repeat sets %v", out.RepeatSets)
	}
	for _, dir := range out.RepeatSets {
		set, err := results.ReadRepeatSet(dir)
		if err != nil {
			t.Fatal(err)
		}
		if set.Repeats != 5 || set.Ran != seq.RunsPerSide || !strings.Contains(set.CutShort, fmt.Sprintf("%d of 5 planned repeats ran: its comparison (until_decided) decided %q", seq.RunsPerSide, seq.Verdict)) {
			t.Errorf("%s: %d planned, %d ran, cut short %q", dir, set.Repeats, set.Ran, set.CutShort)
		}
	}
	if !strings.Contains(said.String(), "run 1 of 10: sb-a-r1 (about 20s left in the suite)") {
		t.Errorf("the first run's header does not say the suite's time left, 10 runs of 2 s:\n%s", said.String())
	}
	if !strings.Contains(said.String(), "sequential sysbench: ") {
		t.Errorf("the suite does not say its looks:\n%s", said.String())
	}
	t.Logf("%s after %d runs a side, looks %+v", seq.Verdict, seq.RunsPerSide, seq.Looks)
}

// The time left in a suite is what the runs not skipped are expected to
// take, scaled by what the runs so far took against their estimates.
func TestSuiteLeft(t *testing.T) {
	minutes := []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute}
	none := func(int) bool { return false }
	for _, tt := range []struct {
		name               string
		skipped            func(int) bool
		took, expectedTook time.Duration
		want               time.Duration
	}{
		{"nothing ran yet", none, 0, 0, 6 * time.Minute},
		{"the runs so far took twice their estimates", none, 4 * time.Minute, 2 * time.Minute, 12 * time.Minute},
		{"half", none, time.Minute, 2 * time.Minute, 3 * time.Minute},
		{"a decided comparison's run skipped", func(j int) bool { return j == 1 }, 0, 0, 4 * time.Minute},
	} {
		if got := suiteLeft(minutes, tt.skipped, tt.took, tt.expectedTook); got != tt.want {
			t.Errorf("%s: %s left, want %s", tt.name, got, tt.want)
		}
	}
}
