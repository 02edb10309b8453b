package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dbio/internal/results"
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

// TestNoisyNeighbourSuite runs noisySuite on PostgreSQL, whose backups are
// pg_basebackup's: the suite's way to a noisy run, on the engine whose
// backup is a program of its own. SQLite's noisy run is the runner's test
// (TestNoisyNeighbourOnSQLite) and the command line's (TestNoisyRepeated).
func TestNoisyNeighbourSuite(t *testing.T) {
	// It checks what is recorded and said, not how fast: it shares the
	// machine with the other parallel tests.
	t.Parallel()
	if testing.Short() {
		t.Skip("starts real engines")
	}
	for _, eng := range []string{"postgres"} {
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
			if inter.Noisy == nil {
				t.Fatalf("no noisy-neighbour record in %s", inter.Name)
			}
			d := *inter.Noisy
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
	// The fleet examples name hosts this machine does not have: a dry run
	// reaches none of them.
	fleets, _ := filepath.Glob("../../examples/fleet/*.toml")
	if len(fleets) == 0 {
		t.Fatal("no fleet example")
	}
	files = append(files, fleets...)
	// The fleet examples' dry runs say what runs on which host.
	says := map[string]string{
		"driver-placement.toml": "driver-remote: this dbio drives your postgres by its dsn",
		"noisy-hosts.toml":      "db4 (root@10.0.0.24): dbio noisy",
		"sysbench-hosts.toml":   "db1 (root@10.0.0.21): dbio sysbench",
	}
	// A dry run makes the run's checks: the examples' targets are made
	// when missing (--create-target), and the server an example drives by
	// its DSN is another machine's, which this one may not reach.
	reachesNoServer := map[string]string{"driver-placement.toml": "run driver-remote: dsn postgres://bench@10.0.0.21:5432/bench: "}
	for _, f := range files {
		var out bytes.Buffer
		code := run(context.Background(), testApp(&out), []string{"suite", f, "--dry-run", "--create-target"})
		if refusal, ok := reachesNoServer[filepath.Base(f)]; ok && code == exitUsage && strings.Contains(out.String(), refusal) {
			code = exitOK
		}
		if code != exitOK {
			t.Errorf("%s: exit %d\n%s", f, code, out.String())
		}
		if want, ok := says[filepath.Base(f)]; ok && !strings.Contains(out.String(), want) {
			t.Errorf("%s: the dry run does not say %q:\n%s", f, want, out.String())
		}
		// Their databases are capped below their data, so that they read
		// the hosts' storage rather than their page cache.
		if _, db := says[filepath.Base(f)]; db && strings.Contains(f, "/fleet/") && !strings.Contains(out.String(), "--server-memory=") && !strings.Contains(out.String(), "server memory") {
			t.Errorf("%s: the dry run caps no server's memory:\n%s", f, out.String())
		}
	}
}

// repeatSuite compares two data targets, each run twice, interleaved.
const repeatSuite = `
name = "tiny-repeats"
[targets.one]
path = "%ONE%"
[targets.two]
path = "%TWO%"
[engines.e]
engine = "sqlite"
[workloads.w]
kind = "sysbench"
workload = "oltp_write_only"
table_size = 1000
users = [1]
rampup = "1s"
step = "2s"
[[runs]]
name = "sb"
workload = "w"
engine = "e"
data = ["one", "two"]
repeat = 2
`

// A suite entry with repeat = N runs its variants interleaved (A B A B),
// puts each variant's repeats in a repeat set with its report, and compares
// the variants' repeats: with 2 a side, too few to tell any difference.
func TestSuiteRepeatsIntoRepeatSets(t *testing.T) {
	// It checks what is recorded and said, not how fast: it shares the
	// machine with the other parallel tests.
	t.Parallel()
	if testing.Short() {
		t.Skip("runs real steps")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "repeats.toml")
	text := strings.NewReplacer("%ONE%", filepath.Join(dir, "one"), "%TWO%", filepath.Join(dir, "two")).Replace(repeatSuite)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"suite", file, "--create-target", "--results", filepath.Join(dir, "results")})
	if code != exitOK {
		t.Fatalf("exit code %d:\n%s", code, out.String())
	}
	manifests, _ := filepath.Glob(filepath.Join(dir, "results", "*-suite-tiny-repeats", "*", results.RepeatSetFile))
	if len(manifests) != 2 {
		t.Fatalf("repeat sets %v\n%s", manifests, out.String())
	}
	var started []string // every run's start, "variant time"
	for _, m := range manifests {
		set, runs, err := results.LoadRepeatSet(filepath.Dir(m))
		if err != nil {
			t.Fatal(err)
		}
		if set.Repeats != 2 || len(runs) != 2 || set.Status != results.StatusCompleted || !strings.HasPrefix(set.Label, "data=") {
			t.Errorf("set %+v with %d runs", set, len(runs))
		}
		for _, r := range runs {
			started = append(started, r.Run.Started.Format("15:04:05.000000")+" "+set.Label)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(m), "report.html")); err != nil {
			t.Errorf("no report for the set %s", filepath.Dir(m))
		}
	}
	// Interleaved: sorted by start, the variants alternate.
	slices.Sort(started)
	for i := 1; i < len(started); i++ {
		if strings.Fields(started[i])[1] == strings.Fields(started[i-1])[1] {
			t.Errorf("runs not interleaved A B A B: %v", started)
		}
	}
	md, _ := filepath.Glob(filepath.Join(dir, "results", "*-suite-tiny-repeats", "compare-sysbench.md"))
	if len(md) != 1 {
		t.Fatalf("comparison %v\n%s", md, out.String())
	}
	b, _ := os.ReadFile(md[0])
	for _, want := range []string{"dbio comparison of repeats: A data=one (2 repeats) vs B data=two (2 repeats)", "too few repeats to tell (4 a side needed)"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the comparison lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), ", better") || strings.Contains(string(b), ", worse") {
		t.Errorf("2 repeats a side called a difference better or worse:\n%s", b)
	}
}

// TestSuiteDryRunRunsThePreflight: a dry run refuses, with the same exit
// code and the same words, the targets a real run refuses (a device node,
// /proc, a directory that is not there), and writes nothing.
func TestSuiteDryRunRunsThePreflight(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct{ name, target, want string }{
		{"device node", "/dev/null", "target /dev/null is a device node"},
		{"proc", "/proc", "/proc"},
		{"missing", filepath.Join(root, "typo"), "typo does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "s.toml")
			text := strings.NewReplacer("%DATA%", tc.target, "%ENGINE%", "sqlite", "%ENGINE_EXTRA%", "", "%USERS%", "").Replace(preflightSuite)
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			results := filepath.Join(root, "results-"+tc.name)
			refusal := func(args ...string) string {
				t.Helper()
				var out bytes.Buffer
				code := run(context.Background(), testApp(&out), append([]string{"suite", file, "--results", results}, args...))
				if code != exitUsage {
					t.Errorf("suite %v: exit %d, want %d:\n%s", args, code, exitUsage, out.String())
				}
				_, after, found := strings.Cut(out.String(), "dbio: the suite cannot start:")
				if !found || !strings.Contains(after, tc.want) {
					t.Errorf("suite %v does not refuse with %q:\n%s", args, tc.want, out.String())
				}
				return after
			}
			if real, dry := refusal(), refusal("--dry-run"); real != dry {
				t.Errorf("the dry run refuses otherwise:\n%s\nthe run:\n%s", dry, real)
			}
			if _, err := os.Stat(results); err == nil {
				t.Errorf("a refused suite made %s", results)
			}
		})
	}
}

// TestSuiteDiskPrecisionRefused: a disk workload's precision naming a
// figure fio's points do not record, or a minimum beyond the points'
// runtime, stops the suite (and its dry run) with exit 2 before anything is
// written, as `dbio disk --precision` does.
func TestSuiteDiskPrecisionRefused(t *testing.T) {
	for _, tc := range []struct{ keys, want string }{
		{`precision = "nopm:2%"`, "a fio point records no per-second nopm"},
		{"precision = \"2%\"\nprecision_min = \"2m\"", "longer than each point's runtime (1m0s)"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			root := t.TempDir()
			file, target, results := filepath.Join(root, "s.toml"), filepath.Join(root, "t"), filepath.Join(root, "results")
			if err := os.Mkdir(target, 0o755); err != nil {
				t.Fatal(err)
			}
			text := "name = \"x\"\n[targets.a]\npath = \"" + target + "\"\n[workloads.d]\nkind = \"disk\"\nprofile = \"job\"\nruntime = \"1m\"\n" +
				tc.keys + "\n[[runs]]\nworkload = \"d\"\ndata = \"a\"\n"
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{nil, {"--dry-run"}} {
				var out bytes.Buffer
				if code := run(context.Background(), testApp(&out), append([]string{"suite", file, "--results", results}, args...)); code != exitUsage {
					t.Errorf("suite %v: exit %d, want %d:\n%s", args, code, exitUsage, out.String())
				}
				if !strings.Contains(out.String(), tc.want) {
					t.Errorf("suite %v does not say %q:\n%s", args, tc.want, out.String())
				}
			}
			if _, err := os.Stat(results); err == nil {
				t.Errorf("a refused suite made %s", results)
			}
			if entries, _ := os.ReadDir(target); len(entries) > 0 {
				t.Errorf("a refused suite wrote into its target: %v", entries)
			}
		})
	}
}
