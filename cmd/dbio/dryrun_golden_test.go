package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateGoldens = flag.Bool("update", false, "rewrite the golden files under testdata")

// dryRunGolden compares out, with what changes from one machine or
// moment to the next masked (the temporary directory, free space, the
// results directory's timestamp), with testdata/dryrun/name.golden.
func dryRunGolden(t *testing.T, name, dir string, out []byte) {
	t.Helper()
	text := strings.ReplaceAll(string(out), dir, "$TMP")
	text = regexp.MustCompile(`\([0-9.]+ [KMGT]?i?B free\)`).ReplaceAllString(text, "(… free)")
	text = regexp.MustCompile(`/\d{8}-\d{6}-`).ReplaceAllString(text, "/YYYYMMDD-HHMMSS-")
	path := filepath.Join("testdata", "dryrun", name+".golden")
	if *updateGoldens {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if text != string(want) {
		t.Errorf("dry run differs from %s (go test -update rewrites it; read the diff):\n%s", path, text)
	}
}

// The dry runs of the run commands say the time they expect, part by
// part, from the one estimator: the load at the engine's measured rate,
// the pristine copy and the resets of --data reset, the ramp-ups, the
// measurements at their ceilings and, until precise, at a typical length,
// a backup's cycles, a noisy study's phases, quick's device pass.
func TestDryRunTimeGoldens(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"tpcc-precision", []string{"tpcc", "--warehouses", "2", "--users", "1,2", "--precision", "10%"}},
		{"sysbench-reset-repeats", []string{"sysbench", "--engine", "postgres", "--data", "reset", "--repeat", "3", "--table-size", "1000000"}},
		{"as3ap", []string{"as3ap", "--engine", "mariadb", "--rows", "1000000", "--max-users", "21"}},
		{"quick", []string{"quick"}},
		{"backup", []string{"backup", "--warehouses", "4", "--cycles", "3", "--restore", "--interval", "1m"}},
		{"noisy", []string{"noisy", "--tenants", "3", "--backup-tenants", "1", "--cycles", "4", "--interval", "100s"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "data")
			if err := os.Mkdir(data, 0o755); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			args := append(tt.args, "--target", data, "--results", filepath.Join(dir, "results"), "--dry-run")
			if code := run(context.Background(), testApp(&out), args); code != exitOK {
				t.Fatalf("exit %d:\n%s", code, out.String())
			}
			dryRunGolden(t, tt.name, dir, out.Bytes())
		})
	}
}

// A suite's dry run gives each run's time, typical and at most, and the
// suite's parts summed with the same estimator: a --data reset workload
// loads once per target, and every later run there restores the copy.
func TestSuiteDryRunTimeGolden(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"fast", "slow"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "study.toml")
	if err := os.WriteFile(file, []byte(`name = "study"
results = "`+filepath.Join(dir, "results")+`"

[targets.fast]
path = "`+filepath.Join(dir, "fast")+`"

[targets.slow]
path = "`+filepath.Join(dir, "slow")+`"
limit = "riops=600,wiops=600"

[engines.lite]
engine = "sqlite"

[workloads.oltp]
kind = "tpcc"
warehouses = 2
data = "reset"
users = [1, 4]
ramp_time = "10s"
runtime = "2m"
precision = "nopm:10%,new_order:p99:20%"

[workloads.corners]
kind = "disk"
profile = "four-corners"
size = "64M"
runtime = "5s"

[[runs]]
name = "corners"
workload = "corners"
data = ["fast", "slow"]

[[runs]]
name = "tpcc"
workload = "oltp"
engine = "lite"
data = ["fast", "slow"]
repeat = 2
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"suite", file, "--dry-run"}); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	dryRunGolden(t, "suite", dir, out.Bytes())
}

// A suite's replay runs give their time with the same estimator: the
// working file's layout and the capture's span at the replay's pace, the
// same on each target whatever its class.
func TestSuiteReplayDryRunGolden(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "replays.toml")
	text := strings.NewReplacer("%FAST%", filepath.Join(dir, "fast"), "%SLOW%", filepath.Join(dir, "slow"), "%CAPTURE%", shippedCapture(t)).Replace(replaySuiteText)
	if err := os.WriteFile(file, []byte("results = \""+filepath.Join(dir, "results")+"\"\n"+text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"suite", file, "--dry-run", "--create-target"}); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	dryRunGolden(t, "suite-replay", dir, out.Bytes())
}
