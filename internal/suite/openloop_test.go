package suite

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"dbio/internal/arrival"
	"dbio/internal/goal"
)

// TestOpenLoopKeys: a database workload's table takes the open-loop and
// goal keys the commands take as flags, validated at their lines, and
// resolves them with the same defaults.
func TestOpenLoopKeys(t *testing.T) {
	const head = "name = \"x\"\n[targets.a]\npath = \"/x\"\n[engines.e]\nengine = \"sqlite\"\n[[runs]]\nworkload = \"w\"\nengine = \"e\"\ndata = \"a\"\n[workloads.w]\n"
	// The workload table's keys start on line 11.
	tests := []struct {
		name    string
		table   string
		problem string
		want    *OpenLoop // nil: closed loop
		users   []int
	}{
		{name: "closed loop", table: "kind = \"tpcc\"\n", users: []int{1, 2, 4, 8}},
		{name: "total rate", table: "kind = \"tpcc\"\nrate = 200\n", users: []int{1, 2, 4, 8},
			want: &OpenLoop{Process: arrival.Fixed, Rate: 200, LateTolerance: arrival.DefaultTolerance}},
		{name: "per user, poisson", table: "kind = \"sysbench\"\nrate_per_user = 50\narrival = \"poisson\"\nlate_tolerance = \"2ms\"\nusers = [4]\n", users: []int{4},
			want: &OpenLoop{Process: arrival.Poisson, Rate: 50, PerUser: true, LateTolerance: 2 * time.Millisecond}},
		{name: "goal with defaults uses the most users", table: "kind = \"tpcc\"\ngoal = \"new_order:p99<=50ms\"\n", users: []int{8},
			want: &OpenLoop{Rate: goal.DefaultStart, LateTolerance: arrival.DefaultTolerance, Users: 8,
				Search: &goal.Search{Objective: goal.Objective{Tx: "new_order", Percentile: 99, Limit: 50 * time.Millisecond},
					Start: goal.DefaultStart, Max: goal.DefaultMax, Resolution: goal.DefaultResolution(), MaxProbes: goal.DefaultMaxProbes}}},
		{name: "goal with its keys", table: "kind = \"tpcc\"\ngoal = \"mean<=5ms\"\nrate = 40\ngoal_max = 400\ngoal_resolution = \"5\"\ngoal_probes = 6\ngoal_confirm = true\nusers = [2]\n", users: []int{2},
			want: &OpenLoop{Rate: 40, LateTolerance: arrival.DefaultTolerance, Users: 2,
				Search: &goal.Search{Objective: goal.Objective{Mean: true, Limit: 5 * time.Millisecond},
					Start: 40, Max: 400, Resolution: goal.Resolution{Abs: 5}, MaxProbes: 6, Confirm: true}}},
		{name: "stepping workload probes with its first step", table: "kind = \"as3ap\"\nrows = 2000\nstart = 2\nadd = 3\nmax_users = 11\ngoal = \"p95<=20ms\"\n", users: []int{2},
			want: &OpenLoop{Rate: goal.DefaultStart, LateTolerance: arrival.DefaultTolerance, Users: 2,
				Search: &goal.Search{Objective: goal.Objective{Percentile: 95, Limit: 20 * time.Millisecond},
					Start: goal.DefaultStart, Max: goal.DefaultMax, Resolution: goal.DefaultResolution(), MaxProbes: goal.DefaultMaxProbes}}},
		{name: "both rates", table: "kind = \"tpcc\"\nrate = 10\nrate_per_user = 2\n", problem: "line 13: workloads.w.rate_per_user: give the offered rate once"},
		{name: "negative rate", table: "kind = \"tpcc\"\nrate = -3\n", problem: "line 12: workloads.w.rate: -3: use transactions per second above zero"},
		{name: "unknown arrival", table: "kind = \"tpcc\"\nrate = 10\narrival = \"burst\"\n", problem: `line 13: workloads.w.arrival: arrival process "burst": use fixed`},
		{name: "arrival without a rate", table: "kind = \"tpcc\"\narrival = \"poisson\"\n", problem: "line 12: workloads.w.arrival: applies to open-loop runs"},
		{name: "bad tolerance", table: "kind = \"tpcc\"\nrate = 10\nlate_tolerance = \"soon\"\n", problem: `line 13: workloads.w.late_tolerance: "soon" is not a positive duration`},
		{name: "bad objective", table: "kind = \"tpcc\"\ngoal = \"p99 < 50ms\"\n", problem: "line 12: workloads.w.goal: malformed latency objective"},
		{name: "goal key without a goal", table: "kind = \"tpcc\"\ngoal_probes = 3\n", problem: "line 12: workloads.w.goal_probes: applies to a latency goal search"},
		{name: "goal below its start", table: "kind = \"tpcc\"\ngoal = \"p99<=5ms\"\nrate = 100\ngoal_max = 50\n", problem: "line 14: workloads.w.goal_max: 50: must be at least the first rate probed (100 tx/s)"},
		{name: "goal with several users", table: "kind = \"tpcc\"\ngoal = \"p99<=5ms\"\nusers = [1, 4]\n", problem: "line 13: workloads.w.users: a goal search runs every probe with one user count"},
		{name: "goal per user", table: "kind = \"tpcc\"\ngoal = \"p99<=5ms\"\nrate_per_user = 3\n", problem: "line 13: workloads.w.rate_per_user: a goal search offers a total rate"},
		{name: "disk runs are not paced", table: "kind = \"disk\"\nprofile = \"four-corners\"\nrate = 10\n", problem: "line 13: workloads.w.rate: open-loop load and goal searches apply to database workloads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("s.toml", []byte(head+tt.table), testEnv(nil))
			if tt.problem != "" {
				var ps *Problems
				if !errors.As(err, &ps) || !strings.Contains(ps.Error(), tt.problem) {
					t.Fatalf("error %v, want %q", err, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := p.Runs[0]
			if !slices.Equal(r.Users, tt.users) {
				t.Errorf("users %v, want %v", r.Users, tt.users)
			}
			got := r.Workload.OpenLoop(r.Users)
			switch {
			case (got == nil) != (tt.want == nil):
				t.Fatalf("open loop %+v, want %+v", got, tt.want)
			case got == nil:
				return
			}
			gs, ws := got.Search, tt.want.Search
			got.Search, tt.want.Search = nil, nil
			if *got != *tt.want {
				t.Errorf("open loop %+v, want %+v", *got, *tt.want)
			}
			if (gs == nil) != (ws == nil) || gs != nil && *gs != *ws {
				t.Errorf("search %+v, want %+v", gs, ws)
			}
		})
	}
}
