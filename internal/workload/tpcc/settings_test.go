package tpcc

import (
	"strings"
	"testing"
	"time"
)

// Terminals and their pool are refused with the numbers when they cannot
// run as the specification has them, and the step is the terminals.
func TestTerminalSettings(t *testing.T) {
	pool := func(n int) *int { return &n }
	tests := []struct {
		name string
		cfg  Config
		// want are substrings of the problems; none for a valid setting.
		want      []string
		wantSteps []int
	}{
		{name: "ten terminals per warehouse by default", cfg: Config{Warehouses: 100, KeyingThinking: true, Pool: pool(32)}, wantSteps: []int{1000}},
		{name: "terminals within the specification", cfg: Config{Warehouses: 2, KeyingThinking: true, Terminals: 15}, wantSteps: []int{15}},
		{name: "a pool of no connection", cfg: Config{Warehouses: 2, KeyingThinking: true, Pool: pool(0)},
			want: []string{"--pool 0: the terminals need at least 1 connection"}},
		{name: "more terminals than ten per warehouse", cfg: Config{Warehouses: 2, KeyingThinking: true, Terminals: 50},
			want: []string{"--terminals 50", "2 warehouses x 10 = 20", "raise --warehouses to 5", "--terminals-over-spec"}},
		{name: "more terminals, acknowledged", cfg: Config{Warehouses: 2, KeyingThinking: true, Terminals: 200, Pool: pool(8), TerminalsOverSpec: true}, wantSteps: []int{200}},
		{name: "a pool without keying and thinking", cfg: Config{Warehouses: 2, Pool: pool(4)},
			want: []string{"--pool 4: only terminals that key and think share connections"}},
		{name: "terminals without keying and thinking", cfg: Config{Warehouses: 2, Terminals: 10},
			want: []string{"--terminals 10: terminals key and think"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var msgs []string
			for _, e := range tc.cfg.Validate() {
				msgs = append(msgs, e.Error())
			}
			got := strings.Join(msgs, "\n")
			if len(tc.want) == 0 && got != "" {
				t.Fatalf("refused: %s", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("problems %q lack %q", got, w)
				}
			}
			if tc.wantSteps != nil {
				s := &Settings{Config: tc.cfg}
				steps, _ := s.Steps([]int{1, 2, 3})
				if len(steps) != 1 || steps[0] != tc.wantSteps[0] {
					t.Errorf("steps %v, want %v", steps, tc.wantSteps)
				}
				if s.OwnSteps() == "" {
					t.Error("paced terminals must refuse --users beside them")
				}
			}
		})
	}
	// Back to back, the users asked for run, one step per count.
	s := &Settings{Config: Config{Warehouses: 1}}
	if steps, _ := s.Steps([]int{1, 2, 4}); len(steps) != 3 || s.OwnSteps() != "" {
		t.Errorf("back-to-back steps %v, own steps %q", steps, s.OwnSteps())
	}
}

// TPC-C's estimate counts its consistency checks by engine and
// warehouses, at the rates measured; an engine without a rate takes the
// slowest, so that the estimate errs long.
func TestEstimateCountsTheChecks(t *testing.T) {
	tests := []struct {
		engine     string
		warehouses int
		want       time.Duration
		says       string
	}{
		{"postgres", 17, 2 * time.Second, "on postgres"},
		{"mariadb", 23, 10 * time.Second, "on mariadb"},
		{"sqlite", 1, time.Second, "on sqlite"},
		{"oracle", 23, 10 * time.Second, "at the slowest engine's rate"},
	}
	for _, tt := range tests {
		s := Settings{Config: Config{Warehouses: tt.warehouses}}
		e := s.Estimate(tt.engine)
		if e.Check != tt.want || !strings.Contains(e.CheckHow, tt.says) || !strings.Contains(e.CheckHow, "checks timed") {
			t.Errorf("%s at %d warehouses: checks %s (%q), want %s %s", tt.engine, tt.warehouses, e.Check, e.CheckHow, tt.want, tt.says)
		}
	}
}
