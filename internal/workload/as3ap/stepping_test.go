package as3ap

import (
	"dbio/internal/analysis"
	"slices"
	"strings"
	"testing"
	"time"

	"dbio/internal/results"
	"dbio/internal/workload"
)

func TestStepping(t *testing.T) {
	tests := []struct {
		name     string
		s        Stepping
		users    []int
		label    string
		problems []string // the flags named by Validate
	}{
		{"defaults", DefaultStepping(), nil, "1+5..500", nil},
		{"to the last step under max", Stepping{Start: 1, Add: 5, MaxUsers: 12, Ceiling: workload.Duration(time.Second), CeilingStat: "p99"}, []int{1, 6, 11}, "1+5..12", nil},
		{"one step", Stepping{Start: 3, Add: 1, MaxUsers: 3, Ceiling: 1, CeilingStat: "p95"}, []int{3}, "3+1..3", nil},
		{"every setting bad", Stepping{Start: 0, Add: 0, MaxUsers: -1, Ceiling: 0, CeilingStat: "p50"}, nil, "0+0..-1",
			[]string{"start", "add", "max-users", "ceiling", "ceiling-stat"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.users != nil && !slices.Equal(tt.s.Users(), tt.users) {
				t.Errorf("users %v, want %v", tt.s.Users(), tt.users)
			}
			if got := tt.s.Label(); got != tt.label {
				t.Errorf("label %q, want %q", got, tt.label)
			}
			var flags []string
			for _, err := range tt.s.Validate() {
				flags = append(flags, err.(*workload.SettingError).Flag)
			}
			if !slices.Equal(flags, tt.problems) {
				t.Errorf("problems with %v, want %v", flags, tt.problems)
			}
		})
	}
}

// TestBuildStopsAtTheCeiling: the command and a suite build the same
// stepping run, stopped once the interactive figure passes the ceiling.
func TestBuildStopsAtTheCeiling(t *testing.T) {
	s := Definition().New().(*Settings)
	s.MaxUsers = 11
	b, err := s.Build(workload.BuildOptions{Users: []int{99}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Users, []int{1, 6, 11}) {
		t.Errorf("users %v, want the stepping's, not those asked for", b.Users)
	}
	step := func(ms float64) results.Step {
		return results.Step{Figures: []results.Figure{{Name: results.FigureInteractiveLatencyMean, Value: ms}}}
	}
	if b.Ceiling == nil {
		t.Fatal("no ceiling")
	}
	c := analysis.Ceiling(*b.Ceiling)
	if stop, _ := c.Stop(step(99)); stop {
		t.Error("stopped under the 100 ms ceiling")
	}
	if stop, _ := c.Stop(step(101)); !stop {
		t.Error("went on over the 100 ms ceiling")
	}
	figs := c.Conclude([]results.Step{{Users: 1, Figures: step(50).Figures}, {Users: 6, Figures: step(150).Figures}}, true)
	if v := c.Verdict(figs); !strings.Contains(v, "100 ms mean ceiling: 1 interactive users") {
		t.Errorf("verdict %q", v)
	}
}
