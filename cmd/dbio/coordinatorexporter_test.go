package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
	"dbio/internal/telemetry"
	"dbio/internal/testenv"
	"dbio/internal/testfleet"
)

// coordinatorSuite is sysbench's one small table driven from here
// (driverRun: driver = "coordinator", the server's DSN in $DBIO_TEST_DSN)
// with its data said to be on h1, whose node exporter is read at the port
// node_exporter gives. What is read does not depend on the workload, and
// this one loads in a second.
const coordinatorSuite = `name = "exporter"
results = "%RESULTS%"

[[host]]
name = "h1"
destination = "h1"
ssh_config = "%SSHCONFIG%"
node_exporter = "%EXPORTER%"

[workloads.tiny]
kind = "sysbench"
tables = 1
table_size = 1000
users = [1]
ramp_time = "0s"
runtime = "%RUNTIME%"
` + driverRun

// TestCoordinatorReadsTheServerHostsExporter drives a PostgreSQL by its
// DSN from here, its data said to be on a test host that runs no dbio:
// the host's node exporter, found at the host's address as a fio fleet
// host's is, is read once a second into the run's rows and each step's
// summary, with the disks behind the target (found over ssh), and the
// report shows them. An exporter that does not answer (a suite's host
// whose node_exporter names a port nothing listens on) leaves the run
// going, without the host's figures, and a note says so with the fix.
func TestCoordinatorReadsTheServerHostsExporter(t *testing.T) {
	// A fleet run mostly waits (ssh, the hosts' fio and servers for their
	// fixed durations): it shares the machine with the other fleet tests.
	t.Parallel()
	testenv.RequireEngine(t, "postgres")
	f := testfleet.Start(t, 1)
	h := f.Hosts[0]
	tests := []struct {
		name string
		// suite runs the suite with this node_exporter, else the command line.
		suite, exporter string
		read            bool
	}{
		{name: "the command line, the exporter at the host's address", read: true},
		{name: "a suite, no exporter at the port given", suite: "exporter.toml", exporter: ":19"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := startPasswordServer(t, "postgres")
			dsn := server.dsn(server.pw, false)
			base := t.TempDir()
			var out bytes.Buffer
			app := testApp(&out)
			args := []string{"sysbench", "--engine", "postgres", "--tables", "1", "--table-size", "1000", "--users", "1", "--ramp-time", "0s", "--runtime", "4s",
				"--host", h.Name + "=" + h.Name, "--ssh-config", f.SSHConfig, "--target", h.Name + ":" + h.Storage,
				"--driver", "coordinator", "--dsn", dsn, "--results", base}
			if tt.suite != "" {
				app.Getenv = func(key string) string {
					if key == "DBIO_TEST_DSN" {
						return dsn
					}
					return os.Getenv(key)
				}
				file := filepath.Join(t.TempDir(), tt.suite)
				text := strings.NewReplacer("%RESULTS%", base, "%SSHCONFIG%", f.SSHConfig, "%EXPORTER%", tt.exporter, "%RUNTIME%", "4s", "%PATH%", h.Name+":"+h.Storage, "%WORKLOAD%", "tiny").Replace(coordinatorSuite)
				if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				args = []string{"suite", file}
			}
			if code := run(t.Context(), app, args); code != exitOK {
				t.Fatalf("exit %d:\n%s", code, out.String())
			}
			runs, _ := filepath.Glob(filepath.Join(base, "*", "run.json"))
			if tt.suite != "" {
				runs, _ = filepath.Glob(filepath.Join(base, "*", "*-remote", "run.json"))
			}
			if len(runs) != 1 {
				t.Fatalf("runs %v:\n%s", runs, out.String())
			}
			dir := filepath.Dir(runs[0])
			l, err := results.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if l.Run.Status != results.StatusCompleted || len(l.Steps) != 1 || l.Steps[0].Telemetry == nil {
				t.Fatalf("run %s with steps %+v", l.Run.Status, l.Steps)
			}
			if len(l.Run.Hosts) != 1 || l.Run.Hosts[0].Name != h.Name {
				t.Fatalf("run.json's hosts: %+v", l.Run.Hosts)
			}
			rec, step := l.Run.Hosts[0], l.Steps[0]
			if !tt.read {
				checkExporterUnread(t, out.String(), l, rec, step)
				return
			}
			if rec.NodeExporter != h.NodeExporterURL || rec.Telemetry != "" {
				t.Errorf("run.json's host reads %q (%q), want %s", rec.NodeExporter, rec.Telemetry, h.NodeExporterURL)
			}
			if !strings.Contains(out.String(), "server host h1: node exporter "+h.NodeExporterURL+" read once a second") {
				t.Errorf("the run does not say it reads the host's exporter:\n%s", out.String())
			}
			if len(step.Telemetry.Hosts) != 1 || step.Telemetry.Hosts[0].System == nil {
				t.Fatalf("the step's hosts: %+v", step.Telemetry.Hosts)
			}
			sys := step.Telemetry.Hosts[0].System
			if share := sys.CPUUserPct + sys.CPUSystemPct + sys.CPUIowaitPct + sys.CPUStealPct + sys.CPUIdlePct; math.Abs(share-100) > 1e-3 || sys.Seconds < 2 || sys.MemUsedMB <= 0 {
				t.Errorf("the host's CPU shares add up to %v over %d s, memory %v MB", share, sys.Seconds, sys.MemUsedMB)
			}
			// The test host shares this machine's disk: PostgreSQL's writes
			// are on it.
			if len(rec.Devices) > 0 && sys.DiskIOPS <= 0 {
				t.Errorf("no I/O on the host's disks %v during the workload: %+v", rec.Devices, sys)
			}
			t.Logf("host h1 over %d s: CPU user %.1f %%, system %.1f %%, iowait %.1f %%; disks %v: %.0f IOPS, await %.2f ms",
				sys.Seconds, sys.CPUUserPct, sys.CPUSystemPct, sys.CPUIowaitPct, rec.Devices, sys.DiskIOPS, sys.DiskAwaitMS)
			series, err := results.ReadSeries(filepath.Join(dir, "series.csv"))
			if err != nil {
				t.Fatal(err)
			}
			col := -1
			for i, c := range series.Columns {
				if c == telemetry.HostMetric(h.Name, "cpu_iowait_pct") {
					col = i
				}
			}
			seconds := 0
			for _, r := range series.Rows {
				if col >= 0 && !math.IsNaN(r.Values[col]) {
					seconds++
				}
			}
			if seconds < sys.Seconds {
				t.Errorf("series.csv has %d seconds of the host's iowait, the step %d: columns %v", seconds, sys.Seconds, series.Columns)
			}
			md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(md), "CPU and disks per host") {
				t.Errorf("summary.md has no table of the host's CPU and disks")
			}
			// This machine has no disk of the database's: the report says
			// where its disks are instead of that none could be found.
			if !strings.Contains(string(md), "the database's data is on other hosts") {
				t.Errorf("summary.md does not say the database's disks are the host's:\n%s", md)
			}
		})
	}
}

// checkExporterUnread checks a run whose server host's exporter could not
// be read: it went on, and said so with the fix.
func checkExporterUnread(t *testing.T, out string, l *results.Loaded, rec results.FleetHost, step results.Step) {
	t.Helper()
	const fix = "install prometheus-node-exporter there, or give its address (--node-exporter, or node_exporter in the host's [[host]] table)"
	if !strings.Contains(out, "host h1: its node exporter cannot be read") || !strings.Contains(out, fix) {
		t.Errorf("the run does not say the exporter cannot be read, with the fix:\n%s", out)
	}
	noted := false
	for _, n := range l.Run.Notes {
		noted = noted || strings.Contains(n, fix)
	}
	if !noted {
		t.Errorf("run.json's notes do not say so: %q", l.Run.Notes)
	}
	if !strings.HasPrefix(rec.Telemetry, "node exporter unreachable") || !strings.HasSuffix(rec.NodeExporter, ":19/metrics") {
		t.Errorf("run.json's host: %+v", rec)
	}
	if len(step.Telemetry.Hosts) != 0 {
		t.Errorf("the step has figures of a host that was not read: %+v", step.Telemetry.Hosts)
	}
}
