package suite

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// tenantsSuite puts TPC-C on two hosts (driver = host, the default) and
// on one host driven from here by a DSN (driver = coordinator).
const tenantsSuite = `name = "tenants"

[[host]]
name = "db1"
destination = "admin@10.0.0.21"

[[host]]
name = "db2"
destination = "admin@10.0.0.22"

[targets.fleet]
paths = ["db1:/srv/db", "db2:/srv/db"]

[targets.db1]
path = "db1:/srv/db"

[targets.here]
path = "/srv/here"

[engines.pg]
engine = "postgres"

[engines.yours]
engine = "postgres"
dsn = "postgres://bench:secret@10.0.0.21/bench"

[workloads.tpcc]
kind = "tpcc"
users = [1, 2]

[[runs]]
name = "fleet"
workload = "tpcc"
engine = "pg"
data = "fleet"

[[runs]]
name = "remote"
workload = "tpcc"
engine = "yours"
data = "db1"
driver = "coordinator"
`

func TestDatabaseRunsOnHosts(t *testing.T) {
	p, err := Parse("s.toml", []byte(tenantsSuite), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(p.Runs))
	}
	// The driver labels each run's configuration, so that the suite
	// compares the two placements of the same workload.
	if r := p.Runs[0]; r.Driver != DriverHost || !r.Data.OnHosts() || r.VariantLabel() != "driver=host" || r.Name != "fleet" {
		t.Errorf("run fleet: driver %q, label %q, name %q, data %+v", r.Driver, r.VariantLabel(), r.Name, r.Data)
	}
	if r := p.Runs[1]; r.Driver != DriverCoordinator || r.DSN == "" || r.VariantLabel() != "driver=coordinator" {
		t.Errorf("run remote: driver %q, label %q, dsn %q", r.Driver, r.VariantLabel(), r.DSN)
	}
	// The dry run says what runs on which host, the DSN's password masked.
	var out bytes.Buffer
	if err := p.DryRun(&out, func(Run) Estimated { return Estimated{Typical: time.Minute, Ceiling: time.Minute} }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"fleet: dbio on db1 (/srv/db), db2 (/srv/db), each starting postgres on its path and driving it there",
		"remote: this dbio drives your postgres by its dsn postgres://bench:***@10.0.0.21/bench over the network; its data is on db1:/srv/db",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the dry run does not say %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "secret") {
		t.Errorf("the dry run shows the DSN's password:\n%s", out.String())
	}
}

// TestRunsOnHostsProblems: what a database run on hosts cannot take is
// refused at its key, with the fix.
func TestRunsOnHostsProblems(t *testing.T) {
	fleetRun := "name = \"fleet\"\nworkload = \"tpcc\"\nengine = \"pg\"\ndata = \"fleet\"\n"
	remoteRun := "driver = \"coordinator\"\n"
	tests := []struct {
		name, from, to string
		want           string
	}{
		{"unknown driver", remoteRun, "driver = \"remote\"\n", `runs[1].driver: "remote": use "host"`},
		{"coordinator without a dsn", "engine = \"yours\"", "engine = \"pg\"",
			`runs[1].driver: "coordinator" drives your server on the host by its dsn, and engine pg has none: give engines.pg a dsn`},
		{"coordinator on several hosts", "data = \"db1\"", "data = \"fleet\"", "runs[1].data: target fleet spreads over 2 hosts"},
		{"coordinator here", "data = \"db1\"", "data = \"here\"", "runs[1].driver: target here is on this machine"},
		{"a dsn on the hosts' servers", fleetRun, strings.Replace(fleetRun, `"pg"`, `"yours"`, 1),
			`runs[0].driver: engine yours reaches your server by its dsn, and driver = "host" starts a server on each host's target: set driver = "coordinator"`},
		{"a scenario", fleetRun, fleetRun + "scenario = \"backup\"\n[runs.backups]\ncycles = 1\n", "runs[0].scenario: the backup scenario runs on this machine only so far"},
		{"a noisy run's backup target", fleetRun, fleetRun + "scenario = \"noisy-neighbour\"\nbackup = \"db1\"\n[runs.noisy]\ntenants = 2\nbackup_tenants = 1\n",
			"runs[0].backup: on hosts each host's tenants back up into their own directories on its target"},
		{"a local log", fleetRun, fleetRun + "log = \"here\"\n", "runs[0].log: target here is on this machine, and each host's server keeps its log with its data"},
		{"a log on a host", fleetRun, fleetRun + "log = \"db1\"\n", "runs[0].log: target db1 is on other hosts"},
		{"ramp until", "users = [1, 2]", "users = [1, 2]\nramp_until = \"tps_slope:1%\"", "workloads.tpcc.ramp_until: each host would end its ramp-up at its own moment"},
		{"goal", "users = [1, 2]", "users = [1, 2]\ngoal = \"p99<=50ms\"", "workloads.tpcc.goal: each host would search on its own"},
		{"two paths on a host", `paths = ["db1:/srv/db", "db2:/srv/db"]`, `paths = ["db1:/srv/db", "db1:/srv/db2"]`, "runs[0].data: target fleet has two paths on host db1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(tenantsSuite, tc.from, tc.to, 1)
			if text == tenantsSuite {
				t.Fatalf("%q is not in the suite", tc.from)
			}
			_, err := Parse("s.toml", []byte(text), testEnv(nil))
			if err == nil {
				t.Fatal("the suite was accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("problems\n%v\nlack %q", err, tc.want)
			}
		})
	}
}
