package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dbio/internal/engine/engines"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/stats"
	"dbio/internal/suite"
)

// TestSuiteRunResolvesToTheCommandsPlan: a suite's run and the command
// line that asks for the same run resolve to one plan: the same users,
// timing, target, engine options and run.json config, so that compare
// reads a suite's run and a command's alike.
func TestSuiteRunResolvesToTheCommandsPlan(t *testing.T) {
	var out bytes.Buffer
	app := testApp(&out)
	app.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
	dir := t.TempDir()
	text := strings.ReplaceAll(`name = "one"
[targets.data]
path = "%DIR%"
[engines.e]
engine = "sqlite"
buffer_pool = "64MB"
[workloads.w]
kind = "tpcc"
warehouses = 2
seed = 7
users = [1, 3]
rampup = "2s"
step = "5s"
[[runs]]
workload = "w"
engine = "e"
data = "data"
`, "%DIR%", dir)
	fromSuite := onlySuitePlan(t, app, text, false)
	fromFlags := commandPlan(t, app, "--engine", "sqlite", "--target", dir, "--users", "1,3", "--ramp-time", "2s", "--runtime", "5s",
		"--warehouses", "2", "--seed", "7", "--buffer-pool", "64MB")

	configs := make([]string, 2)
	for i, p := range []any{fromSuite.Config, fromFlags.Config} {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		configs[i] = string(b)
	}
	if configs[0] != configs[1] {
		t.Errorf("run.json config differs:\nsuite: %s\nflags: %s", configs[0], configs[1])
	}
	ss, fs := fromSuite.Body.(runner.Steps), fromFlags.Body.(runner.Steps)
	if !slices.Equal(ss.Users, fs.Users) || ss.RampUp != fs.RampUp || ss.Step != fs.Step ||
		fromSuite.DataPath != fromFlags.DataPath || fromSuite.Kind != fromFlags.Kind || fromSuite.SpaceNeeded != fromFlags.SpaceNeeded {
		t.Errorf("plans differ:\nsuite: users %v, %s + %s, %s, %s, %d bytes\nflags: users %v, %s + %s, %s, %s, %d bytes",
			ss.Users, ss.RampUp, ss.Step, fromSuite.DataPath, fromSuite.Kind, fromSuite.SpaceNeeded,
			fs.Users, fs.RampUp, fs.Step, fromFlags.DataPath, fromFlags.Kind, fromFlags.SpaceNeeded)
	}
	so, fo := fromSuite.EngineOptions, fromFlags.EngineOptions
	if so.BufferPool != fo.BufferPool || so.Database != fo.Database || so.Transport != fo.Transport || so.Fresh != fo.Fresh || so.DSN != fo.DSN {
		t.Errorf("engine options differ:\nsuite: %+v\nflags: %+v", so, fo)
	}
	if fromSuite.Engine.Name() != fromFlags.Engine.Name() {
		t.Errorf("engines %s and %s", fromSuite.Engine.Name(), fromFlags.Engine.Name())
	}
}

// TestSuiteDiskRunRecordsWhatDiskRecords: a suite's disk run records in
// run.json the fio configuration dbio disk records for the same run (it
// recorded the suite's run, another shape, which compare and report then
// read as a run without profile, targets or latency bound), and describes
// the host as dbio disk does.
func TestSuiteDiskRunRecordsWhatDiskRecords(t *testing.T) {
	// It checks what is recorded and said, not how fast: it shares the
	// machine with the other parallel tests.
	t.Parallel()
	data := fioDir(t, "dbio-suite-disk-")
	dir := t.TempDir()
	file := filepath.Join(dir, "disk.toml")
	text := strings.ReplaceAll(`name = "disk-config"
[targets.data]
path = "%DIR%"
[workloads.corners]
kind = "disk"
profile = "four-corners"
runtime = "1s"
ramp_time = "0s"
size = "16MB"
[[runs]]
name = "corners"
workload = "corners"
data = "data"
`, "%DIR%", data)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"suite", file, "--results", filepath.Join(dir, "suite")}); code != exitOK {
		t.Fatalf("suite: exit %d:\n%s", code, out.String())
	}
	if code := run(context.Background(), testApp(&out), []string{"disk", "--target", data, "--profile", "four-corners", "--runtime", "1s",
		"--ramp-time", "0s", "--size", "16MB", "--results", filepath.Join(dir, "disk"), "--name", "corners"}); code != exitOK {
		t.Fatalf("disk: exit %d:\n%s", code, out.String())
	}
	configs := make([]results.RunConfig, 2)
	for i, pattern := range []string{filepath.Join(dir, "suite", "*", "*-corners"), filepath.Join(dir, "disk", "*-corners")} {
		dirs, _ := filepath.Glob(pattern)
		if len(dirs) != 1 {
			t.Fatalf("%s: results directories %v\n%s", pattern, dirs, out.String())
		}
		l, err := results.Load(dirs[0])
		if err != nil {
			t.Fatal(err)
		}
		configs[i] = l.Run.Config
		// Both describe the machine the run measured.
		if l.Run.Environment.CPUs == 0 || l.Run.Environment.MemoryBytes == 0 {
			t.Errorf("%s: run.json does not describe the host: %+v", dirs[0], l.Run.Environment)
		}
	}
	suiteCfg, _ := json.Marshal(configs[0])
	diskCfg, _ := json.Marshal(configs[1])
	if string(suiteCfg) != string(diskCfg) {
		t.Errorf("run.json config differs:\nsuite: %s\ndisk:  %s", suiteCfg, diskCfg)
	}
}

// TestSuiteEngineFromDSN: an engine table with a dsn and no engine runs
// the engine the command line's --dsn without -e would, by the same
// registry.
func TestSuiteEngineFromDSN(t *testing.T) {
	app := testApp(&bytes.Buffer{})
	app.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
	for _, tt := range []struct{ dsn, want string }{
		{"postgres://bench@127.0.0.1:5432/postgres", "postgres"},
		{"host=127.0.0.1 user=bench dbname=postgres", "postgres"},
		{"mysql://bench@127.0.0.1:3306/", "mysql"},
		{"mariadb://bench@127.0.0.1:3306/", "mariadb"},
	} {
		t.Run(tt.dsn, func(t *testing.T) {
			text := "name = \"s\"\n[targets.t]\npath = \"/x\"\n[engines.mine]\ndsn = \"" + tt.dsn + "\"\n" +
				"[workloads.w]\nkind = \"tpcc\"\nwarehouses = 1\n[[runs]]\nworkload = \"w\"\nengine = \"mine\"\ndata = \"t\"\n"
			p, err := suite.Parse("s.toml", []byte(text), suiteEnv(app, workloads()))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Runs[0].Engine; got != tt.want {
				t.Errorf("engine %q, want %q (what --dsn %s without -e runs)", got, tt.want, tt.dsn)
			}
		})
	}
}

// A run compared until decided gives every one of its planned runs the
// sequential design dbio ab --until-decided would use for as many runs a
// side as the run repeats, and its margin; a run without it gets none.
func TestSuiteUntilDecidedPlansTheSequentialTest(t *testing.T) {
	var out bytes.Buffer
	app := testApp(&out)
	app.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
	dir := t.TempDir()
	text := strings.ReplaceAll(`name = "ab"
[targets.a]
path = "%DIR%/a"
[targets.b]
path = "%DIR%/b"
[engines.e]
engine = "sqlite"
[workloads.w]
kind = "sysbench"
users = [1]
[[runs]]
name = "decided"
workload = "w"
engine = "e"
data = ["a", "b"]
repeat = 7
until_decided = true
margin = "3%"
[[runs]]
name = "fixed"
workload = "w"
engine = "e"
data = ["a", "b"]
repeat = 2
`, "%DIR%", dir)
	registry := workloads()
	plan, err := suite.Parse("ab.toml", []byte(text), suiteEnv(app, registry))
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := suitePlans(app, plan, registry, true)
	if len(runs) != 18 {
		t.Fatalf("%d runs, want 14 and 4", len(runs))
	}
	for _, r := range runs {
		sequential := strings.HasPrefix(r.Name, "decided")
		switch {
		case sequential && (r.Sequential == nil || r.Sequential.MaxPerSide != 7 || r.Sequential.Alpha != stats.DefaultAlpha || r.Margin != 0.03):
			t.Errorf("run %s: design %+v, margin %v; want at most 7 a side at the default level, margin 0.03", r.Name, r.Sequential, r.Margin)
		case !sequential && r.Sequential != nil:
			t.Errorf("run %s compared until decided without asking", r.Name)
		}
	}
	if runs[0].Sequential != runs[13].Sequential {
		t.Error("the design is made again for every run instead of once")
	}
}
