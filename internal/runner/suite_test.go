package runner

import (
	"reflect"
	"strings"
	"testing"
	"time"
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
