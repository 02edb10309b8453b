package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
	"dbio/internal/runner"
)

func TestWorkloadFlagsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want []string // each in the message
	}{
		{[]string{"sysbench", "--target", dir, "--workload", "oltp_nope", "--tables", "0", "--rand-type", "zipfian"},
			[]string{`--workload "oltp_nope": use one of oltp_read_write`, "--tables 0", `--rand-type "zipfian"`}},
		{[]string{"sysbench", "--target", dir, "--table-size", "-5", "--users", "0"}, []string{"--table-size -5", "--users"}},
		{[]string{"as3ap", "--target", dir, "--users", "1,2"}, []string{"--users: as3ap steps its users: use --start, --add and --max-users"}},
		{[]string{"as3ap", "--target", dir, "--ceiling-stat", "p90", "--batch-rows", "10", "--add", "0", "--ceiling", "0s"},
			[]string{`--ceiling-stat "p90"`, "--batch-rows 10", "--add 0", "--ceiling 0s"}},
		{[]string{"as3ap", "--target", dir, "--rows", "10", "--start", "5", "--max-users", "2"}, []string{"--rows 10", "--max-users 2"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			if code := run(context.Background(), testApp(&out), tt.args); code != exitUsage {
				t.Errorf("exit code %d, want %d; output:\n%s", code, exitUsage, out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output does not name %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func loadOnly(t *testing.T, res string) *results.Loaded {
	t.Helper()
	runs, _ := filepath.Glob(filepath.Join(res, "*"))
	if len(runs) != 1 {
		t.Fatalf("results directories: %v", runs)
	}
	l, err := results.Load(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestSysbenchEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real steps")
	}
	dir, res := t.TempDir(), t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"sysbench", "--target", dir, "--results", res,
		"--tables", "2", "--table-size", "2000", "--workload", "oltp_read_write", "--users", "1,2", "--ramp-time", "0s", "--runtime", "1s"})
	if code != exitOK {
		t.Fatalf("exit code %d:\n%s", code, out.String())
	}
	for _, want := range []string{"COMPLETED", "QPS", "latency p95", "pass    every table holds ids 1..2000 once"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	l := loadOnly(t, res)
	if l.Run.Status != results.StatusCompleted || len(l.Steps) != 2 {
		t.Fatalf("status %s, %d steps", l.Run.Status, len(l.Steps))
	}
	for _, s := range l.Steps {
		tps, _ := s.Figure("tps")
		qps, _ := s.Figure("qps")
		if tps <= 0 || qps < 19*tps || qps > 21*tps {
			t.Errorf("step %s: TPS %.1f, QPS %.1f: want 20 queries per transaction", s.Name, tps, qps)
		}
	}
	for _, col := range []string{"qps", "latency_p95", "errors_per_s", "reconnects_per_s"} {
		if l.Series.Column(col) < 0 {
			t.Errorf("series.csv has no %s column: %v", col, l.Series.Columns)
		}
	}
}

func TestAS3APStopsAtTheCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real steps")
	}
	dir, res := t.TempDir(), t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"as3ap", "--target", dir, "--results", res,
		"--rows", "2000", "--batch-jobs", "1", "--start", "1", "--add", "2", "--max-users", "5",
		"--ceiling", "1us", "--ceiling-stat", "p95", "--ramp-time", "0s", "--runtime", "1s"})
	if code != exitOK {
		t.Fatalf("exit code %d:\n%s", code, out.String())
	}
	for _, want := range []string{"stopped after step users-1", "largest load under the 0.001 ms p95 ceiling: none", "interactive latency p95", "batch tps"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	l := loadOnly(t, res)
	if len(l.Steps) != 1 {
		t.Fatalf("%d steps, want 1: the first is over a 1 µs ceiling", len(l.Steps))
	}
	figs := map[results.FigureName]float64{}
	for _, f := range l.Run.Figures {
		figs[f.Name] = f.Value
	}
	if v, ok := figs[runner.FigureMaxUsersUnderCeiling]; !ok || v != 0 || figs[runner.FigureCeilingReached] != 1 {
		t.Errorf("run.json figures %v, want 0 users kept under the reached ceiling", l.Run.Figures)
	}
}
