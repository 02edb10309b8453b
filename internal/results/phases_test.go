package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A run's phase times are written in run.json under the names readers
// look them up by, and read back as the same records; a phase recorded
// twice (two servers stopping) counts its total.
func TestPhasesRoundTrip(t *testing.T) {
	start := time.Date(2026, 11, 28, 22, 0, 0, 0, time.UTC)
	d, err := Create(t.TempDir(), "phases", Run{Kind: "tpcc"}, start)
	if err != nil {
		t.Fatal(err)
	}
	phases := []Phase{
		PhaseSince(PhaseServerStart, start, start.Add(4*time.Second), ""),
		{Name: PhaseReset, Seconds: 2.5, Detail: "the pristine copy restored by copy"},
		{Name: PhaseLoad, Seconds: 0.1, Detail: "none: the data there kept, its identity checked"},
		{Name: PhaseRampUps, Seconds: 8}, {Name: PhaseMeasurements, Seconds: 30}, {Name: PhaseStepsOther, Seconds: 1.25},
		{Name: PhaseChecks, Seconds: 3}, {Name: PhaseServerStop, Seconds: 1}, {Name: PhaseServerStop, Seconds: 0.5},
	}
	if err := d.UpdateRun(func(r *Run) { r.Phases = phases }); err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(StatusCompleted, nil, start.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(d.Path, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"phases": [`, `"name": "server_start",`, `"seconds": 4`, `"name": "checks"`, `"detail": "the pristine copy restored by copy"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("run.json lacks %s:\n%s", want, b)
		}
	}
	l, err := Load(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Run.Phases, phases) {
		t.Errorf("phases read back as\n%+v\nwant\n%+v", l.Run.Phases, phases)
	}
	tests := []struct {
		name PhaseName
		s    float64
		ok   bool
	}{
		{PhaseServerStart, 4, true}, {PhaseServerStop, 1.5, true}, {PhaseChecks, 3, true}, {PhasePristineCopy, 0, false},
	}
	for _, tt := range tests {
		if s, ok := l.Run.PhaseSeconds(tt.name); s != tt.s || ok != tt.ok {
			t.Errorf("PhaseSeconds(%s) = %v, %v; want %v, %v", tt.name, s, ok, tt.s, tt.ok)
		}
	}
	// A run of older dbio has no phases, and says so.
	var old Run
	if err := json.Unmarshal([]byte(`{"schema_version":1,"id":"x","kind":"tpcc"}`), &old); err != nil {
		t.Fatal(err)
	}
	if _, ok := old.PhaseSeconds(PhaseLoad); ok || old.Phases != nil {
		t.Errorf("an older run.json read phases %+v", old.Phases)
	}
}
