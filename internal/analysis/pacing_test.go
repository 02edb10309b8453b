package analysis

import (
	"strings"
	"testing"

	"dbio/internal/results"
)

func TestGoalAnswer(t *testing.T) {
	m := func(v float64) *float64 { return &v }
	probes := []results.GoalProbe{
		{OfferedTPS: 20, MeasuredMS: m(12.345), Pass: true, Reason: "objective met"},
		{OfferedTPS: 40, MeasuredMS: m(80), Reason: "objective missed"},
		{OfferedTPS: 80, Reason: "offered rate not achieved"},
	}
	base := results.GoalSearch{Tx: "new_order", Stat: "p99", LimitMS: 50, Users: 4, Resolution: "10%", Probes: probes}
	cases := []struct {
		name string
		edit func(g *results.GoalSearch)
		want string
	}{
		{"found", func(g *results.GoalSearch) { g.Answer, g.RateTPS, g.FailRateTPS = results.GoalFound, 20, 40 },
			"Highest rate meeting p99 of new_order at most 50 ms: 20 tx/s with 4 users (p99 12.35 ms); 40 tx/s did not (p99 80 ms). Resolution: 10 % of the rate."},
		{"below the start, nothing measured", func(g *results.GoalSearch) { g.Answer, g.FailRateTPS, g.Tx = results.GoalBelowStart, 80, "" },
			"No rate probed met p99 of every transaction at most 50 ms with 4 users: even the first, 80 tx/s, did not (offered rate not achieved)."},
		{"at least, truncated, noisy", func(g *results.GoalSearch) {
			g.Answer, g.RateTPS, g.Truncated, g.Inconsistent, g.Resolution = results.GoalAtLeast, 20, true, true, "5"
		}, "at least 20 tx/s (p99 12.35 ms). The probe budget ended the search before the resolution of 5 tx/s. Some rate failed at or below one that passed"},
		{"cut short", func(g *results.GoalSearch) {}, "did not finish: 3 probes recorded."},
	}
	for _, c := range cases {
		g := base
		c.edit(&g)
		if got := GoalAnswer(&g); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestPacingFindings(t *testing.T) {
	step := func(name string, offered, achieved float64, late, n int64) results.Step {
		return results.Step{Name: name, Pacing: &results.Pacing{OfferedTPS: offered, AchievedTPS: achieved, Late: late, Transactions: n, LateToleranceMS: 10}}
	}
	steps := []results.Step{step("users-1", 100, 99, 0, 990), step("users-2", 100, 94.9, 10, 949), {Name: "closed"}}
	if RateShort(steps[0]) || !RateShort(steps[1]) || RateShort(steps[2]) {
		t.Errorf("short: %v %v %v; want only users-2 (5.1 %% short)", RateShort(steps[0]), RateShort(steps[1]), RateShort(steps[2]))
	}
	// 4 users at 20 tx/s for 10 s: up to 4 transactions (0.4 tx/s) are
	// still in hand when the window ends, so 18.7 tx/s is not short, and
	// 18.5 is (18.5 + 0.4 < 19).
	for _, c := range []struct {
		achieved float64
		short    bool
	}{{18.7, false}, {18.5, true}} {
		s := step("rate-20", 20, c.achieved, 0, 187)
		s.Users, s.MeasureS = 4, 10
		if RateShort(s) != c.short {
			t.Errorf("4 users, 20 tx/s offered for 10 s, %v achieved: short %v, want %v", c.achieved, RateShort(s), c.short)
		}
	}
	got := strings.Join(PacingFindings(steps), "\n")
	for _, want := range []string{
		"users-2: the offered rate was not achieved: 100 tx/s offered, 94.9 tx/s achieved (94.9 %)",
		"Transactions that started more than 10 ms after their intended start: 10 of 949 (1.1 %) at users-2.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("findings %q lack %q", got, want)
		}
	}
	if strings.Contains(got, "users-1") || len(PacingFindings(steps[2:])) != 0 {
		t.Errorf("findings for steps that kept their rate on time: %q", got)
	}
}

// A step of terminals is short only beyond what chance makes of its count:
// ten terminals for a minute expect about 29 transactions, and 26 is not
// short; ten thousand expected and 9,400 achieved is.
func TestTerminalsRateShortBeyondNoise(t *testing.T) {
	step := func(offered, achieved, measure float64) results.Step {
		return results.Step{Name: "users-x", MeasureS: measure,
			Pacing: &results.Pacing{Arrival: results.ArrivalTerminals, OfferedTPS: offered, AchievedTPS: achieved, Connections: 2}}
	}
	tests := []struct {
		name string
		s    results.Step
		want bool
	}{
		{"a few dozen, 9 % short: chance", step(0.476, 0.433, 60), false},
		{"ten thousand, 6 % short: beyond chance", step(100, 94, 100), true},
		{"ten thousand, 3 % short: within the tolerance", step(100, 97, 100), false},
	}
	for _, tc := range tests {
		if got := RateShort(tc.s); got != tc.want {
			t.Errorf("%s: short %v, want %v", tc.name, got, tc.want)
		}
	}
	if f := PacingFindings([]results.Step{step(100, 94, 100)}); len(f) == 0 || !strings.Contains(f[0], "the monitor's 2 connections") {
		t.Errorf("findings %q: a short step of terminals names the monitor's pool", f)
	}
}
