package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
)

// Bad open-loop and goal flags are usage errors that name the flag and the
// fix, found before anything is written.
func TestBadPacingIsAUsageError(t *testing.T) {
	dir, res := t.TempDir(), t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"tpcc", "--rate", "0"}, "--rate 0: must be a number of transactions per second above zero"},
		{[]string{"sysbench", "--rate", "-5"}, "--rate -5: must be"},
		{[]string{"tpcc", "--rate", "10", "--rate-per-user", "2"}, "--rate and --rate-per-user: give the offered rate once"},
		{[]string{"tpcc", "--rate", "10", "--arrival", "burst"}, `--arrival: arrival process "burst": use fixed`},
		{[]string{"tpcc", "--arrival", "poisson"}, "--arrival: applies to open-loop runs"},
		{[]string{"as3ap", "--rate", "5", "--late-tolerance", "0s"}, "--late-tolerance 0s: must be a positive duration"},
		{[]string{"tpcc", "--goal", "p99 < 5ms"}, "--goal: malformed latency objective"},
		{[]string{"tpcc", "--goal", "p99<=5ms", "--users", "1,2"}, "--users 1,2: a goal search runs every probe with one user count: give one, e.g. --users 2"},
		{[]string{"tpcc", "--goal", "p99<=5ms", "--goal-max", "5"}, "--goal-max 5: must be at least the first rate probed (10 tx/s)"},
		{[]string{"tpcc", "--goal", "p99<=5ms", "--rate-per-user", "3", "--users", "2"}, "--rate-per-user: a goal search offers a total rate"},
		{[]string{"tpcc", "--goal", "p99<=5ms", "--goal-resolution", "fine"}, `--goal-resolution: resolution "fine"`},
		{[]string{"tpcc", "--goal", "p99<=5ms", "--goal-probes", "0"}, "--goal-probes 0: the search needs at least one probe"},
		{[]string{"tpcc", "--goal-probes", "3"}, "--goal-probes: applies to a latency goal search"},
		{[]string{"tpcc", "--goal", "delivery_x:p99<=5ms", "--users", "2"}, `the workload has no transaction type "delivery_x": name one of new_order, payment`},
		{[]string{"sysbench", "--goal", "new_order:p99<=5ms", "--users", "2"}, `no transaction type "new_order": name one of oltp_read_write`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			args := append(append([]string(nil), tt.args...), "--target", dir, "--results", res)
			code := run(context.Background(), testApp(&out), args)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d; output:\n%s", code, exitUsage, out.String())
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("output %q does not name the problem %q", out.String(), tt.want)
			}
			if entries, _ := os.ReadDir(res); len(entries) > 0 {
				t.Errorf("bad input wrote %s", entries[0].Name())
			}
		})
	}
}

// An open-loop run records the seed its Poisson schedule drew from, and it
// is the run's own --seed: given again, the same arrivals.
func TestPacedRunRecordsItsSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real step")
	}
	res := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"sysbench", "--target", t.TempDir(), "--results", res, "--name", "paced",
		"--workload", "oltp_read_only", "--table-size", "500", "--users", "1", "--ramp-time", "0s", "--runtime", "1s",
		"--rate", "50", "--arrival", "poisson", "--seed", "7"})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(res, "*-paced"))
	if len(dirs) != 1 {
		t.Fatalf("results directories %v", dirs)
	}
	l, err := results.Load(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if p := l.Run.Config.Pacing; p == nil || p.Arrival != "poisson" || p.Seed != 7 {
		t.Errorf("run.json records pacing %+v, want poisson drawn from seed 7", p)
	}
}
