package results

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A repeat set's manifest names its repeats' results directories, and
// loading the set loads them in the order they ran.
func TestRepeatSetRoundTrip(t *testing.T) {
	base := t.TempDir()
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	set, err := CreateRepeatSet(base, RepeatSet{Name: "tpcc sqlite", Kind: "tpcc", Repeats: 2, Command: []string{"dbio", "tpcc", "--repeat", "2"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(set.Path) != "20261125-150000-tpcc-sqlite" || !IsRepeatSet(set.Path) {
		t.Fatalf("set directory %s", set.Path)
	}
	if _, _, err := LoadRepeatSet(set.Path); err == nil || !strings.Contains(err.Error(), "no run yet") {
		t.Errorf("an empty set loaded: %v", err)
	}
	for i := range 2 {
		d, err := Create(set.Path, "tpcc-sqlite-r"+string(rune('1'+i)), Run{Kind: "tpcc"}, now.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Finish(StatusCompleted, nil, now); err != nil {
			t.Fatal(err)
		}
		if err := set.Add(d.Path); err != nil {
			t.Fatal(err)
		}
	}
	if err := set.Add(filepath.Join(base, "elsewhere")); err == nil {
		t.Error("a run outside the set was added")
	}
	if err := set.Finish(StatusFailed, errors.New("repeat 3 failed"), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, runs, err := LoadRepeatSet(set.Path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"20261125-150000-tpcc-sqlite-r1", "20261125-150100-tpcc-sqlite-r2"}
	if !reflect.DeepEqual(got.Runs, want) || got.Status != StatusFailed || got.Error != "repeat 3 failed" || got.Repeats != 2 || got.Kind != "tpcc" {
		t.Errorf("manifest %+v", got)
	}
	if len(runs) != 2 || filepath.Base(runs[1].Path) != want[1] {
		t.Errorf("loaded %d runs", len(runs))
	}
	if _, err := OpenRepeatSet(set.Path, RepeatSet{Name: "again"}, now); err == nil {
		t.Error("a second manifest replaced the first")
	}
}

// A set cut short says in its manifest how many repeats were planned, how
// many ran, and why it stopped: interrupted, failed, or decided on purpose.
func TestRepeatSetCutShort(t *testing.T) {
	now := time.Date(2026, 11, 28, 18, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name     string
		ran      int
		status   Status
		decided  string
		cutShort string
	}{
		{"every repeat ran", 3, StatusCompleted, "", ""},
		{"interrupted", 1, StatusInterrupted, "", "1 of 3 planned repeats ran: interrupted"},
		{"a repeat failed", 2, StatusFailed, "", "2 of 3 planned repeats ran: a repeat failed"},
		{"decided", 2, StatusCompleted, "its comparison decided", "2 of 3 planned repeats ran: its comparison decided"},
		{"decided, then interrupted", 1, StatusInterrupted, "its comparison decided", "1 of 3 planned repeats ran: interrupted"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set, err := CreateRepeatSet(t.TempDir(), RepeatSet{Name: "sb", Kind: "sysbench", Repeats: 3}, now)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.ran {
				d, err := Create(set.Path, fmt.Sprintf("sb-r%d", i+1), Run{Kind: "sysbench"}, now.Add(time.Duration(i)*time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				if err := set.Add(d.Path); err != nil {
					t.Fatal(err)
				}
			}
			if tt.decided != "" {
				set.Decided(tt.decided)
			}
			if err := set.Finish(tt.status, nil, now.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			got, err := ReadRepeatSet(set.Path)
			if err != nil {
				t.Fatal(err)
			}
			if got.Repeats != 3 || got.Ran != tt.ran || len(got.Runs) != tt.ran || got.CutShort != tt.cutShort {
				t.Errorf("manifest: %d planned, %d ran (%d runs), cut short %q; want 3, %d, %q", got.Repeats, got.Ran, len(got.Runs), got.CutShort, tt.ran, tt.cutShort)
			}
		})
	}
}
