package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"dbio/internal/results"
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
		{[]string{"tpcc", "--target", dir, "--ramp-until", "lat:5ms", "--steady-window", "2s", "--steady-ramp", "1500ms"},
			[]string{`--ramp-until: malformed steady-state criterion "lat:5ms": unknown metric "lat"`, "--steady-window 2s: use whole seconds, at least 3s", "--steady-ramp 1.5s"}},
		{[]string{"tpcc", "--target", dir, "--ramp-until", "iops_slope:1%"}, []string{"iops and bw are fio's series"}},
		{[]string{"tpcc", "--target", dir, "--steady-window", "30s"}, []string{"--steady-window: applies only with --ramp-until"}},
		{[]string{"tpcc", "--target", dir, "--warehouses", "2", "--keying-thinking", "--terminals", "50", "--pool", "0", "--users", "3"},
			[]string{"--pool 0: the terminals need at least 1 connection", "--terminals 50: more than the specification's 10 per warehouse (2 warehouses x 10 = 20)", "--users: with --keying-thinking TPC-C runs one step of terminals"}},
		{[]string{"tpcc", "--target", dir, "--pool", "8"}, []string{"--pool 8: only terminals that key and think share connections"}},
		{[]string{"tpcc", "--target", dir, "--engine", "postgres", "--warehouses", "40", "--keying-thinking", "--pool", "400", "--setting", "max_connections=300"},
			[]string{"--pool 400: the 400 terminals' pool of 400 connections", "max_connections 300, as the max_connections setting gives it", "--setting max_connections=402"}},
		// Found by the preflight, which knows the workload and the ramp-up.
		{[]string{"sysbench", "--target", dir, "--ramp-until", "nopm:10%", "--ramp-time", "10s", "--steady-window", "20s"},
			[]string{"sysbench records no per-second nopm; use one of qps, tps", "steady state (nopm:10% over 20s) could never be judged within the 10s ramp-up"}},
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
	for _, want := range []string{"COMPLETED", "QPS", "p95 latency", "pass    every table holds ids 1..2000 once"} {
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

// A ramp-up until steady state ends with the first steady window of
// per-second TPS, says so on the terminal, in each step's record and in the
// report, which marks the moment on its per-second charts.
func TestRampUpUntilSteadyEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real steps")
	}
	dir, res := t.TempDir(), t.TempDir()
	var out bytes.Buffer
	// Any throughput above zero has a slope under 1000 % of its mean over
	// three seconds: each ramp-up ends with its first full window.
	code := run(context.Background(), testApp(&out), []string{"sysbench", "--target", dir, "--results", res,
		"--tables", "1", "--table-size", "1000", "--users", "1", "--ramp-time", "1m", "--runtime", "1s",
		"--ramp-until", "tps_slope:1000%", "--steady-window", "3s"})
	if code != exitOK {
		t.Fatalf("exit code %d:\n%s", code, out.String())
	}
	// After three rows each: how many seconds that took is the machine's business.
	for _, want := range []string{"a ramp-up until steady (tps_slope:1000% over 3s) or for 1m0s at most", "users-1: steady after ",
		"warm-up: sysbench OLTP's ramp-up was to end once throughput was steady (tps_slope:1000% over 3 s): it did, after "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("terminal lacks %q:\n%s", want, out.String())
		}
	}
	l := loadOnly(t, res)
	for _, s := range l.Steps {
		if w := s.Warmup; w == nil || !w.Reached || w.AtS != s.RampUpS || w.Windows != 1 {
			t.Errorf("step %s: warm-up %+v, ramp-up %v s", s.Name, s.Warmup, s.RampUpS)
		}
	}
	if c := l.Run.Config.Steady; c == nil || c.Until != "tps_slope:1000%" {
		t.Errorf("run.json records the ramp-up until steady as %+v", c)
	}
	page, err := os.ReadFile(filepath.Join(l.Path, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<line class="mark" data-mark="steady"`, "Ramp-up until steady state", "it did, after"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
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
	for _, want := range []string{"stopped after step users-1", "largest load under the 0.001 ms p95 ceiling: none", "interactive p95 latency", "batch TPS"} {
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
	if v, ok := figs[results.FigureMaxUsersUnderCeiling]; !ok || v != 0 || figs[results.FigureCeilingReached] != 1 {
		t.Errorf("run.json figures %v, want 0 users kept under the reached ceiling", l.Run.Figures)
	}
}

// TestReuseRefusesOtherData: --reuse keeps data loaded with the run's
// identity, recorded in run.json, and refuses data loaded with another
// seed or scale with exit code 2, naming what differs, both values and the
// fix, before the load or any step, keeping no results directory; the
// data stays as it was.
func TestReuseRefusesOtherData(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real steps")
	}
	dir := t.TempDir()
	dbio := func(t *testing.T, want int, extra ...string) (string, *results.Loaded) {
		t.Helper()
		res := t.TempDir()
		refused := want == exitUsage
		args := append([]string{"sysbench", "--target", dir, "--results", res, "--tables", "1", "--table-size", "1000",
			"--users", "1", "--ramp-time", "0s", "--runtime", "1s", "--skip-checks"}, extra...)
		var out bytes.Buffer
		if code := run(context.Background(), testApp(&out), args); code != want {
			t.Fatalf("dbio %s: exit code %d, want %d:\n%s", strings.Join(args, " "), code, want, out.String())
		}
		if refused {
			// A refused run keeps nothing: its results directory goes.
			if ents, err := os.ReadDir(res); err != nil || len(ents) > 0 {
				t.Fatalf("the refused run left %v in its results base (%v)", ents, err)
			}
			return out.String(), nil
		}
		return out.String(), loadOnly(t, res)
	}
	identity := func(t *testing.T, l *results.Loaded, seed uint64, reused bool) {
		t.Helper()
		ld := l.Run.Load
		if ld == nil || ld.Dataset == nil || ld.Reused != reused {
			t.Fatalf("run.json's load: %+v", ld)
		}
		d := *ld.Dataset
		want := []results.DatasetSetting{{Flag: "tables", Value: "1"}, {Flag: "table-size", Value: "1000"}, {Flag: "rand-type", Value: "uniform"}}
		if d.Workload != "sysbench" || d.LoaderVersion < 1 || d.Seed != seed || !reflect.DeepEqual(d.Settings, want) {
			t.Errorf("run.json's dataset %+v, want sysbench from seed %d with %v", d, seed, want)
		}
	}
	_, l := dbio(t, exitOK, "--seed", "5")
	identity(t, l, 5, false)
	for _, tc := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"another seed", []string{"--seed", "6"}, "(seed 5 there, 6 for this run): load afresh without --reuse, or run with --seed 5"},
		{"another scale", []string{"--seed", "5", "--table-size", "2000"}, "(table-size 1000 there, 2000 for this run): load afresh without --reuse, or run with --table-size 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := dbio(t, exitUsage, append([]string{"--reuse"}, tc.extra...)...)
			if !strings.Contains(out, "--reuse: the sysbench data in this database is not what this run would load "+tc.want) {
				t.Errorf("output does not say %q:\n%s", tc.want, out)
			}
			if !strings.Contains(out, "removed: the run was refused before it ran") {
				t.Errorf("output does not say the refused run's directory was removed:\n%s", out)
			}
		})
	}
	// The data the refused runs found is still there, and still kept.
	_, l = dbio(t, exitOK, "--reuse", "--seed", "5")
	identity(t, l, 5, true)
}
