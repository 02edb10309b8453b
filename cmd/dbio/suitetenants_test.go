package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/engine/engines"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/suite"
	"dbio/internal/testenv"
	"dbio/internal/testfleet"
	"dbio/internal/workload/tpcc"
)

// hostsSuite is TPC-C on two hosts at once, each host's dbio driving the
// PostgreSQL it starts on its path.
const hostsSuite = `name = "tenants"
results = "%RESULTS%"
%HOSTS%
[targets.fleet]
paths = [%PATHS%]

[engines.pg]
engine = "postgres"
buffer_pool = "32MB"

` + oneWarehouseTPCC + `
[[runs]]
name = "fleet"
workload = "tpcc"
engine = "pg"
data = "fleet"
`

// oneWarehouseTPCC is a suite's TPC-C of one warehouse and one user, for
// %RUNTIME% and no ramp-up.
const oneWarehouseTPCC = `[workloads.tpcc]
kind = "tpcc"
warehouses = 1
seed = 9
users = [1]
ramp_time = "0s"
runtime = "%RUNTIME%"
`

// hostsSuiteText is hostsSuite on the named hosts (name = destination),
// each on its path, with sshConfig for every host when given.
func hostsSuiteText(results, runtime, sshConfig string, hosts, paths []string) string {
	var tables, quoted []string
	for i, h := range hosts {
		table := fmt.Sprintf("[[host]]\nname = %q\ndestination = %q\n", h, h)
		if sshConfig != "" {
			table += fmt.Sprintf("ssh_config = %q\n", sshConfig)
		}
		tables = append(tables, table)
		quoted = append(quoted, fmt.Sprintf("%q", h+":"+paths[i]))
	}
	return strings.NewReplacer("%RESULTS%", results, "%RUNTIME%", runtime, "%HOSTS%", strings.Join(tables, "\n"),
		"%PATHS%", strings.Join(quoted, ", ")).Replace(hostsSuite)
}

// TestSuiteTenantsResolveToTheCommandsPlan: a suite's run on hosts and
// the command line that asks for the same run resolve to one plan of
// tenants: the same hosts and targets, the same steps and run.json
// config, and on each host a command line from which that host's dbio
// resolves the same run. A noisy-neighbour run is dbio noisy's, on each
// host with the same tenants, backups and users.
func TestSuiteTenantsResolveToTheCommandsPlan(t *testing.T) {
	var out bytes.Buffer
	app := testApp(&out)
	app.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
	tests := []struct {
		name      string
		command   string
		suiteRun  string
		flags     []string
		resolve   func(t *testing.T, app *App, args ...string) runner.Plan
		checkHost func(p runner.Plan) bool
	}{
		{name: "tpcc", command: "tpcc", resolve: commandPlan, checkHost: func(p runner.Plan) bool {
			_, steps := p.Body.(runner.Steps)
			return steps
		}},
		{name: "noisy neighbours", command: "noisy",
			suiteRun: "scenario = \"noisy-neighbour\"\n[runs.noisy]\ntenants = 3\nbackup_tenants = 1\ninterval = \"2s\"\ncycles = 2\n",
			flags:    []string{"--tenants", "3", "--backup-tenants", "1", "--interval", "2s", "--cycles", "2"}, resolve: noisyCommandPlan,
			checkHost: func(p runner.Plan) bool {
				n, ok := p.Body.(runner.Noisy)
				return ok && n.Tenants == 3 && n.BackupTenants == 1 && n.Users == 1 && n.Cycles == 2
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results := t.TempDir()
			// The hosts' paths exist here too, so that each host's command
			// line resolves on this machine as it would on its host.
			paths := []string{t.TempDir(), t.TempDir()}
			text := hostsSuiteText(results, "5s", "", []string{"db1", "db2"}, paths) + tt.suiteRun
			fromSuite := onlySuitePlan(t, app, text, true)
			fromFlags := tt.resolve(t, app, append([]string{"--engine", "postgres", "--host", "db1=db1", "--host", "db2=db2", "--target", "db1:" + paths[0], "--target", "db2:" + paths[1],
				"--users", "1", "--ramp-time", "0s", "--runtime", "5s", "--seed", "9", "--buffer-pool", "32MB",
				"--name", "fleet", "--results", results, "--create-target"}, tt.flags...)...)
			var tenants [2]runner.Tenants
			for i, p := range []runner.Plan{fromSuite, fromFlags} {
				var ok bool
				if tenants[i], ok = p.Body.(runner.Tenants); !ok {
					t.Fatalf("plan %s runs no tenants", p.Name)
				}
			}
			if !tenants[0].CreateTargets || tenants[0].Workload != "tpcc" || len(tenants[0].Hosts) != 2 {
				t.Fatalf("the suite's tenants: %+v", tenants[0])
			}
			same(t, "the fleet's run", planText(t, fromSuite), planText(t, fromFlags))
			for i, h := range tenants[0].Hosts {
				c := tenants[1].Hosts[i]
				if h.Host.Name != c.Host.Name || h.Host.Destination != c.Host.Destination || h.Target != c.Target {
					t.Errorf("host %d: %+v from the suite, %+v from the command line", i, h, c)
					continue
				}
				hostResults := t.TempDir()
				args := [2][]string{tenants[0].Args(h, hostResults, "n"), tenants[1].Args(c, hostResults, "n")}
				if args[0][0] != tt.command || !slices.Contains(args[0], "--"+startBarrierFlag) {
					t.Fatalf("host %s runs %v", h.Host.Name, args[0])
				}
				onHost := tt.resolve(t, app, args[0][1:]...)
				if !tt.checkHost(onHost) {
					t.Errorf("host %s's dbio runs %#v", h.Host.Name, onHost.Body)
				}
				same(t, "host "+h.Host.Name+"'s run", planText(t, onHost), planText(t, tt.resolve(t, app, args[1][1:]...)))
			}
		})
	}
}

// bodySteps are the users and timing of a body's steps: a run of tenants'
// hosts' bodies', a noisy-neighbour study's of each tenant.
func bodySteps(b runner.Body) ([]int, time.Duration, time.Duration) {
	switch b := b.(type) {
	case runner.Tenants:
		return bodySteps(b.Each)
	case runner.Steps:
		return b.Users, b.RampUp, b.Step
	case runner.Noisy:
		return []int{b.Users}, b.RampUp, b.Quiet
	}
	return nil, 0, 0
}

// onlySuitePlan is the plan of the one run of a suite's text, built
// without a problem.
func onlySuitePlan(t *testing.T, app *App, text string, createTargets bool) runner.Plan {
	t.Helper()
	registry := workloads()
	plan, err := suite.Parse("one.toml", []byte(text), suiteEnv(app, registry))
	if err != nil {
		t.Fatal(err)
	}
	runs, problems := suitePlans(app, plan, registry, createTargets)
	if len(runs) != 1 || runs[0].Plan == nil || runs[0].Err != nil || len(problems) > 0 {
		t.Fatalf("runs %+v, problems %v", runs, problems)
	}
	return *runs[0].Plan
}

// commandPlan is the plan dbio tpcc resolves args to.
func commandPlan(t *testing.T, app *App, args ...string) runner.Plan {
	t.Helper()
	var f workloadFlags
	def := tpcc.Definition()
	cmd := &cobra.Command{Use: def.Name}
	f.bindCommand(cmd, app.Engines, def)
	return parsedPlan(t, cmd, args, func() (runner.Plan, error) { return workloadPlan(app, f, def.Name, nil) })
}

// noisyCommandPlan is the plan dbio noisy resolves args to.
func noisyCommandPlan(t *testing.T, app *App, args ...string) runner.Plan {
	t.Helper()
	var nc noisyCommand
	cmd := &cobra.Command{Use: "noisy"}
	nc.bind(cmd, app)
	return parsedPlan(t, cmd, args, func() (runner.Plan, error) { return nc.plan(app) })
}

// parsedPlan is the plan a command's flags, parsed from args, resolve to.
func parsedPlan(t *testing.T, cmd *cobra.Command, args []string, plan func() (runner.Plan, error)) runner.Plan {
	t.Helper()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	p, err := plan()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return p
}

// planText is what a plan runs, as text to compare: its steps, engine
// options and run.json config.
func planText(t *testing.T, p runner.Plan) string {
	t.Helper()
	users, rampUp, step := bodySteps(p.Body)
	text, err := jsonText(map[string]any{"name": p.Name, "users": users, "rampup": rampUp, "step": step, "engine": p.Engine.Name(),
		"buffer_pool": p.EngineOptions.BufferPool, "settings": p.EngineOptions.Settings, "transport": p.EngineOptions.Transport,
		"database": p.EngineOptions.Database, "fresh": p.EngineOptions.Fresh, "config": p.Config, "data": p.DataPath, "create": p.CreateTargets})
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func same(t *testing.T, what, fromSuite, fromFlags string) {
	t.Helper()
	if fromSuite != fromFlags {
		t.Errorf("%s differs:\nsuite   %s\ncommand %s", what, fromSuite, fromFlags)
	}
}

// TestCoordinatorDriver: --driver coordinator drives the server --dsn
// reaches on the target's host from here, with no tenants; what it cannot
// do is refused, before anything is written, naming the fix.
func TestCoordinatorDriver(t *testing.T) {
	base := t.TempDir()
	host := []string{"tpcc", "--engine", "postgres", "--host", "db1=admin@10.0.0.21", "--results", base, "--driver", "coordinator"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no dsn", []string{"--target", "db1:/srv/db"}, "--driver coordinator drives your server on the host over the network: give its --dsn"},
		{"two hosts", []string{"--host", "db2=admin@10.0.0.22", "--target", "db1:/srv/db", "--target", "db2:/srv/db", "--dsn", "postgres://u@10.0.0.21/x"}, "--driver coordinator drives one server"},
		{"a local target", []string{"--target", "/srv/db", "--dsn", "postgres://u@10.0.0.21/x"}, "--driver coordinator: chooses where the users run for a --target on a host"},
		{"unknown driver", []string{"--target", "db1:/srv/db", "--driver", "elsewhere"}, `--driver "elsewhere": use host`},
		{"a malformed exporter", []string{"--target", "db1:/srv/db", "--dsn", "postgres://u@10.0.0.21/x", "--node-exporter", "db1:port"}, `--node-exporter: host db1: node_exporter "db1:port": port "port" is not a port`},
		{"an exporter for this machine", []string{"--target", t.TempDir(), "--driver", "host", "--node-exporter", ":9200"}, "--node-exporter: reads the server's host with --driver coordinator"},
		{"an exporter for the host's own dbio", []string{"--target", "db1:/srv/db", "--driver", "host", "--node-exporter", ":9200"}, "--node-exporter: each host's dbio samples its own host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := run(t.Context(), testApp(&out), append(append([]string(nil), host...), tt.args...)); code != exitUsage {
				t.Errorf("exit %d, want %d:\n%s", code, exitUsage, out.String())
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("output does not name the problem %q:\n%s", tt.want, out.String())
			}
			if entries, _ := os.ReadDir(base); len(entries) > 0 {
				t.Errorf("bad input wrote %v", entries)
			}
		})
	}
	// With its DSN, the run is this dbio's own on that server, its target
	// recorded as where the server's data is.
	var out bytes.Buffer
	app := testApp(&out)
	app.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
	var f workloadFlags
	def := tpcc.Definition()
	cmd := &cobra.Command{Use: def.Name}
	f.bindCommand(cmd, app.Engines, def)
	if err := cmd.ParseFlags(append(host[1:], "--target", "db1:/srv/db", "--dsn", "postgres://u@10.0.0.21/x", "--node-exporter", ":9200")); err != nil {
		t.Fatal(err)
	}
	p, err := workloadPlan(app, f, def.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, steps := p.Body.(runner.Steps); !steps || p.EngineOptions.DSN == "" || p.DataPath != "" {
		t.Errorf("plan: body %#v, dsn %q, data path %q", p.Body, p.EngineOptions.DSN, p.DataPath)
	}
	// The server's host is read through its node exporter, where
	// --node-exporter says, the disks behind the target watched.
	if sh := p.ServerHost; sh == nil || sh.Host.Name != "db1" || sh.Host.Destination != "admin@10.0.0.21" || sh.Target != "/srv/db" ||
		sh.Host.NodeExporterURL("10.0.0.21") != "http://10.0.0.21:9200/metrics" {
		t.Errorf("the server's host: %+v", p.ServerHost)
	}
	if cfg, _ := jsonText(p.Config); !strings.Contains(cfg, `"target":"db1:/srv/db"`) {
		t.Errorf("run.json's config does not say where the server's data is: %s", cfg)
	}
}

// driverRun is a suite run of the workload %WORKLOAD% driven from here
// (driver = "coordinator") on the server whose DSN is in $DBIO_TEST_DSN,
// its data said to be on h1.
const driverRun = `
[engines.yours]
engine = "postgres"
dsn_env = "DBIO_TEST_DSN"

[[runs]]
name = "remote"
workload = "%WORKLOAD%"
engine = "yours"
data = "h1"
driver = "coordinator"

[targets.h1]
path = "%PATH%"
`

// TestSuiteTenantsOnFleet runs a suite whose TPC-C run is on a host,
// twice (repeat = 2), for real: the host's dbio loads, starts at the
// barrier's instant and comes back into each repetition's run directory,
// whose step is the fleet's, and the two repetitions form a repeat set.
// Nothing is left on the host. The suite's other run drives a server by
// its DSN from here (driver = "coordinator"), and the suite compares the
// two placements: a fleet of one host is one machine's figures. On this
// one machine that server is not on h1, whose path the run only records:
// what the test shows is the suite's path for that placement. (Two hosts
// in one suite run resolve to the command line's plan, which
// TestTenantsOnFleet runs on two hosts.)
func TestSuiteTenantsOnFleet(t *testing.T) {
	// A fleet run mostly waits (ssh, the hosts' fio and servers for their
	// fixed durations): it shares the machine with the other fleet tests.
	t.Parallel()
	testenv.RequireEngine(t, "postgres")
	server := startPasswordServer(t, "postgres")
	f := testfleet.Start(t, 1)
	bin := buildDBIO(t)
	// The test's temporary directories are root's alone; the server runs
	// as an unprivileged user and must reach its directory.
	for _, d := range []string{filepath.Dir(f.Dir), f.Dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var names, paths []string
	for _, h := range f.Hosts {
		names = append(names, h.Name)
		// Made by the hosts' dbio: the suite's --create-target reaches them.
		paths = append(paths, filepath.Join(h.Storage, "suite-db"))
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "tenants.toml")
	text := strings.Replace(hostsSuiteText(filepath.Join(dir, "results"), "4s", f.SSHConfig, names, paths), `data = "fleet"`, "data = \"fleet\"\nrepeat = 2", 1) +
		strings.NewReplacer("%PATH%", names[0]+":"+paths[0], "%WORKLOAD%", "tpcc").Replace(driverRun)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startProgramEnv(t, []string{"DBIO_TEST_DSN=" + server.dsn(server.pw, false)}, bin, "suite", file, "--create-target")
	if code := p.exit(); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out)
	}
	for _, want := range []string{"run 1 of 3: fleet-r1", "run 2 of 3: fleet-r2", "run 3 of 3: remote", "start barrier: every host started", "fleet over the", "comparison: "} {
		if !strings.Contains(p.out.String(), want) {
			t.Errorf("the suite does not say %q:\n%s", want, p.out)
		}
	}
	f.WaitNoStrays(t)
	sets, _ := filepath.Glob(filepath.Join(dir, "results", "*-suite-tenants", "*", results.RepeatSetFile))
	if len(sets) != 1 {
		t.Fatalf("repeat sets %v\n%s", sets, p.out)
	}
	set, runs, err := results.LoadRepeatSet(filepath.Dir(sets[0]))
	if err != nil {
		t.Fatal(err)
	}
	if set.Status != results.StatusCompleted || len(runs) != 2 {
		t.Fatalf("repeat set %+v with %d runs", set, len(runs))
	}
	for _, l := range runs {
		checkSuiteTenants(t, l, names, paths)
	}
	remote, _ := filepath.Glob(filepath.Join(dir, "results", "*-suite-tenants", "*-remote"))
	if len(remote) != 1 {
		t.Fatalf("run directories %v", remote)
	}
	l, err := results.Load(remote[0])
	if err != nil {
		t.Fatal(err)
	}
	if cfg := l.Run.Config; l.Run.Status != results.StatusCompleted || l.Run.Tenants != nil ||
		cfg.Target != names[0]+":"+paths[0] || !cfg.EngineOptions.External || len(l.Steps) != 1 {
		t.Errorf("the run driven from here: status %s, tenants %v, %d steps, config %+v", l.Run.Status, l.Run.Tenants, len(l.Steps), cfg)
	}
	record, _ := os.ReadFile(filepath.Join(filepath.Dir(remote[0]), results.SuiteFile))
	if strings.Contains(string(record), server.pw) || strings.Contains(p.out.String(), server.pw) {
		t.Error("the server's password is in suite.json or on the screen")
	}
	for _, h := range f.Hosts {
		if left, _ := filepath.Glob(filepath.Join(h.Home, ".dbio", "runs", "*")); len(left) > 0 {
			t.Errorf("host %s keeps %v", h.Name, left)
		}
	}
	var out bytes.Buffer
	// A dry run of the same suite shows each host's command line.
	app := testApp(&out)
	dsn := server.dsn(server.pw, false)
	app.Getenv = func(key string) string {
		if key == "DBIO_TEST_DSN" {
			return dsn
		}
		return os.Getenv(key)
	}
	if code := run(context.Background(), app, []string{"suite", file, "--dry-run"}); code != exitOK ||
		!strings.Contains(out.String(), "h1 (h1): dbio tpcc") {
		t.Errorf("dry run: exit %d\n%s", code, out.String())
	}
}

// checkSuiteTenants checks one run of tenants of the suite: every host
// completed on its path with the suite's workload, its results came back,
// and the run's one step is the fleet's.
func checkSuiteTenants(t *testing.T, l *results.Loaded, names, paths []string) {
	t.Helper()
	ten := l.Run.Tenants
	if l.Run.Status != results.StatusCompleted || ten == nil || len(ten.Hosts) != len(names) || ten.Driver != "host" {
		t.Fatalf("%s: status %s, tenants %+v", l.Path, l.Run.Status, ten)
	}
	for i, h := range ten.Hosts {
		if h.Host != names[i] || h.Target != paths[i] || h.Status != results.StatusCompleted || h.Dir == "" {
			t.Errorf("host %d: %+v", i, h)
			continue
		}
		hl, err := results.Load(filepath.Join(l.Path, h.Dir))
		if err != nil {
			t.Fatalf("host %s's results: %v", h.Host, err)
		}
		// Each host ran the suite's workload as the suite gives it.
		cfg := hl.Run.Config
		warehouses, _ := cfg.Settings.Int("warehouses")
		seed, _ := cfg.Settings.Int("seed")
		if cfg.Workload != "tpcc" || warehouses != 1 || seed != 9 {
			t.Errorf("host %s ran %s %+v", h.Host, cfg.Workload, cfg.Settings)
		}
	}
	if len(l.Steps) != 1 {
		t.Fatalf("%s: %d steps, want the fleet's one", l.Path, len(l.Steps))
	}
	if l.Steps[0].Fleet == nil {
		t.Errorf("step %s has no fleet detail", l.Steps[0].Name)
	}
	if nopm, _ := l.Steps[0].Figure(results.FigureNOPM); nopm <= 0 {
		t.Errorf("fleet NOPM %v", nopm)
	}
}

// jsonText is v as run.json records it.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
