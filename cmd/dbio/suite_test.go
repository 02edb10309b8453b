package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
	"dbio/internal/scenario"
	"dbio/internal/testenv"
)

// noisySuite is the smallest noisy-neighbour study: two tenants, one of
// which backs up once while the other runs TPC-C.
const noisySuite = `
name = "tiny-noisy"
[targets.shared]
path = "%TARGET%"
[engines.e]
engine = "%ENGINE%"
buffer_pool = "32MB"
[workloads.tpcc]
kind = "tpcc"
warehouses = 1
users = [1]
rampup = "1s"
step = "3s"
[[runs]]
name = "noisy"
workload = "tpcc"
engine = "e"
data = "shared"
scenario = "noisy-neighbour"
[runs.noisy]
tenants = 2
backup_tenants = 1
interval = "1s"
cycles = 1
`

func TestNoisyNeighbourSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engines")
	}
	for _, eng := range []string{"sqlite", "postgres"} {
		t.Run(eng, func(t *testing.T) {
			if eng == "postgres" {
				testenv.RequireProgram(t, "pg_basebackup", testenv.InstallPostgres, "/usr/lib/postgresql/*/bin")
			}
			dir := t.TempDir()
			// A server started as an unprivileged user must reach the target.
			os.Chmod(filepath.Dir(dir), 0o755)
			os.Chmod(dir, 0o755)
			file := filepath.Join(dir, "noisy.toml")
			text := strings.NewReplacer("%TARGET%", filepath.Join(dir, "shared"), "%ENGINE%", eng).Replace(noisySuite)
			os.WriteFile(file, []byte(text), 0o644)
			var out bytes.Buffer
			// The shared target does not exist yet: the suite makes it when asked.
			code := run(context.Background(), testApp(&out), []string{"suite", file, "--create-target", "--results", filepath.Join(dir, "results")})
			if code != exitOK {
				t.Fatalf("exit code %d:\n%s", code, out.String())
			}
			runs, _ := filepath.Glob(filepath.Join(dir, "results", "*-suite-tiny-noisy", "*-noisy"))
			if len(runs) != 1 {
				t.Fatalf("run directories %v\n%s", runs, out.String())
			}
			l, err := results.Load(runs[0])
			if err != nil {
				t.Fatal(err)
			}
			var inter *results.Step
			for i := range l.Steps {
				if l.Steps[i].Name == "interference" {
					inter = &l.Steps[i]
				}
			}
			if inter == nil {
				t.Fatalf("no interference step: %+v", l.Steps)
			}
			var d scenario.NoisyDetail
			json.Unmarshal(inter.Detail, &d)
			if len(d.Backups) != 1 || d.Backups[0].Error != "" || d.Backups[0].Bytes == 0 {
				t.Errorf("backups %+v", d.Backups)
			}
			if len(d.Tenants) != 1 || d.Tenants[0].TPM <= 0 {
				t.Errorf("tenants %+v", d.Tenants)
			}
			if len(l.Run.Checks) != 8 {
				t.Errorf("%d consistency checks, want 4 per tenant", len(l.Run.Checks))
			}
			if _, err := os.Stat(filepath.Join(runs[0], "report.html")); err != nil {
				t.Error("no report for the run")
			}
		})
	}
}

func TestSuiteRefusesInvalidFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(file, []byte("name = \"x\"\n[workloads.w]\nkind = \"tpcc\"\nwarehouses = 0\n"), 0o644)
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"suite", file, "--dry-run"})
	if code != exitUsage || !strings.Contains(out.String(), "line 4: workloads.w.warehouses") {
		t.Fatalf("code %d, output %q", code, out.String())
	}
}

func TestExampleSuitesAreValid(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.toml")
	if len(files) < 6 {
		t.Fatalf("examples: %v", files)
	}
	for _, f := range files {
		var out bytes.Buffer
		if code := run(context.Background(), testApp(&out), []string{"suite", f, "--dry-run"}); code != exitOK {
			t.Errorf("%s: exit %d\n%s", f, code, out.String())
		}
	}
}
