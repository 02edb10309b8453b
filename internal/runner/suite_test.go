package runner

import (
	"reflect"
	"testing"
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
