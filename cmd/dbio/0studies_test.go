package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/analysis"
	"dbio/internal/iolimit"
	"dbio/internal/report"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// The studies scaled down to a few minutes: each suite is a real run of
// real servers on storage classes that bind (block-I/O cgroups on a
// temporary directory), and the test fails when a finding's direction is
// not reproduced. Only the direction is asserted, never a speed: a busy
// machine slows both sides.
var ciStudies = []struct {
	name, engine, text string
	// must are the findings that have to come out reproduced.
	must []string
}{
	{"nvme-vs-sata", "postgres", `
name = "ci-nvme-vs-sata"
# Smaller than the example's classes: on a machine whose CPUs other work
# keeps busy, PostgreSQL commits less, and the SATA class (92 write IOPS)
# must still sit well below what it asks.
[classes]
nvme = "riops=3600,wiops=600,rbps=160MB,wbps=60MB"
[targets.nvme]
path = "%DIR%/nvme"
class = "nvme"
[targets.sata]
path = "%DIR%/sata"
class = "sata"
[engines.pg]
engine = "postgres"
buffer_pool = "64MB"
[workloads.tpcc]
kind = "tpcc"
warehouses = 1
# One load on each target: every later run there resets to its copy.
data = "reset"
users = [4]
ramp_time = "2s"
runtime = "8s"
[[runs]]
name = "tpcc"
workload = "tpcc"
engine = "pg"
data = ["nvme", "sata"]
repeat = 2
[[expect]]
finding = "SATA-class TPM at most 0.8x NVMe-class"
figure = "tpm"
a = "tpcc-nvme"
b = "tpcc-sata"
relation = "lower"
ratio = 0.8
[[expect]]
finding = "p99 response time higher on SATA"
figure = "latency-p99"
a = "tpcc-nvme"
b = "tpcc-sata"
relation = "higher"
`, []string{"SATA-class TPM at most 0.8x NVMe-class"}},
	{"memory", "mariadb", `
name = "ci-memory"
[targets.data]
path = "%DIR%/data"
limit = "riops=1000,wiops=1000"
[engines.db]
engine = "mariadb"
[workloads.tpcc]
kind = "tpcc"
warehouses = 1
# One load on each target: every later run there resets to its copy.
data = "reset"
users = [4]
ramp_time = "2s"
runtime = "8s"
[[runs]]
name = "tpcc"
workload = "tpcc"
engine = "db"
data = "data"
buffer_pool = ["512MB", "16MB"]
repeat = 2
[[expect]]
finding = "A 16 MB pool below 0.5x the 512 MB pool's TPM"
figure = "tpm"
a = "tpcc-512MB"
b = "tpcc-16MB"
relation = "lower"
ratio = 0.5
`, []string{"A 16 MB pool below 0.5x the 512 MB pool's TPM"}},
}

func TestStudiesReproduceTheirDirection(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs real servers for a few minutes")
	}
	host := iolimit.SystemHost(target.HostFS().Sys)
	testenv.Require(t, os.Geteuid() == 0 && (host.V1Blkio != "" || host.V2 != ""), "root and cgroup block-I/O control", testenv.HowRootAndBlkio)
	// The studies run beside the other tests and beside each other, as
	// their directions hold on a busy machine, but not beside a CPU hog
	// started on purpose: one that starves the NVMe class's server as
	// much as its cap starves the SATA class's leaves no ratio to read.
	testenv.QuietMachine(t)
	for _, st := range ciStudies {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			testenv.RequireEngine(t, st.engine)
			dir := t.TempDir()
			// The server runs unprivileged and must reach its targets.
			os.Chmod(filepath.Dir(dir), 0o755)
			os.Chmod(dir, 0o755)
			file := filepath.Join(dir, "study.toml")
			if err := os.WriteFile(file, []byte(strings.ReplaceAll(st.text, "%DIR%", dir)), 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), []string{"suite", file, "--create-target", "--results", filepath.Join(dir, "results")})
			if code != exitOK {
				t.Fatalf("exit code %d:\n%s", code, out.String())
			}
			suites, _ := filepath.Glob(filepath.Join(dir, "results", "*-suite-*"))
			if len(suites) != 1 {
				t.Fatalf("suite directories %v", suites)
			}
			s, err := results.LoadSuite(suites[0])
			if err != nil {
				t.Fatal(err)
			}
			checks := report.CheckSuite(s).Checks
			var text bytes.Buffer
			report.ExpectText(&text, checks)
			t.Log(text.String())
			for _, c := range checks {
				for _, m := range st.must {
					if c.Finding == m && c.Verdict != analysis.Reproduced {
						t.Errorf("%s: %s, %s (%s)", c.Finding, c.Verdict, report.ExpectFigure(c), c.Reason)
					}
				}
			}
			// The suite's summary printed the verdicts, and its report holds them.
			if !strings.Contains(out.String(), "expectations (the seed study's findings") {
				t.Errorf("the suite's summary printed no expectations:\n%s", out.String())
			}
			if md, err := os.ReadFile(filepath.Join(suites[0], "summary.md")); err != nil || !strings.Contains(string(md), "Expected findings") {
				t.Errorf("suite report: %v", err)
			}
		})
	}
}

// dbio studies reads suite directories (a real nvme-vs-sata run, as the
// report's tests keep it) into one table, and refuses a directory that is
// not a suite's; dbio report on a suite's directory writes the suite's
// report into it.
func TestStudiesAndSuiteReport(t *testing.T) {
	src := filepath.Join("..", "..", "internal", "report", "testdata", "suite-nvme-vs-sata")
	dir := filepath.Join(t.TempDir(), "suite")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"studies", dir}); code != exitOK ||
		!strings.Contains(out.String(), "| nvme-vs-sata | SATA-class TPM at most 0.8x NVMe-class at the largest step |") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"studies", t.TempDir()}); code != exitUsage || !strings.Contains(out.String(), "is not a suite directory") {
		t.Errorf("a directory without suite.json: exit %d:\n%s", code, out.String())
	}
	page := filepath.Join(t.TempDir(), "studies.md")
	os.WriteFile(page, []byte("# my notes\n"), 0o644)
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"studies", dir, "-o", page}); code == exitOK {
		t.Errorf("replaced a file dbio did not write:\n%s", out.String())
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"report", dir}); code != exitOK || !strings.Contains(out.String(), "3 of 5 findings reproduced") {
		t.Fatalf("report of a suite: exit %d:\n%s", code, out.String())
	}
	if md, err := os.ReadFile(filepath.Join(dir, "summary.md")); err != nil || !strings.Contains(string(md), "| reproduced |") {
		t.Errorf("the suite's summary.md: %v", err)
	}
}
