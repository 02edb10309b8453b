package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/iolimit"
	"dbio/internal/results"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// abStudy is ab.json as dbio ab writes it.
type abStudy struct {
	Result results.ABResult `json:"result"`
	RunsA  []string         `json:"runs_a"`
	RunsB  []string         `json:"runs_b"`
}

// fiveRepeatsAB runs dbio ab with 5 repeats a side of a short SQLite sysbench
// write load (small tables, one user, a 2-second step), the sides' own
// flags added, and returns its output and ab.json.
func fiveRepeatsAB(t *testing.T, sideA, sideB string) (string, abStudy) {
	t.Helper()
	res := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"ab", "--repeat", "5", "--a", sideA, "--b", sideB, "--results", res, "--",
		"sysbench", "--workload", "oltp_write_only", "--table-size", "1000", "--users", "1", "--ramp-time", "1s", "--runtime", "2s"})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	files, _ := filepath.Glob(filepath.Join(res, "*-ab", "ab.json"))
	if len(files) != 1 {
		t.Fatalf("ab.json: %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var study abStudy
	if err := json.Unmarshal(b, &study); err != nil {
		t.Fatal(err)
	}
	if study.Result.RunsA != 5 || study.Result.RunsB != 5 || len(study.Result.Average) == 0 {
		t.Fatalf("study of %d and %d runs, %d averages:\n%s", study.Result.RunsA, study.Result.RunsB, len(study.Result.Average), out.String())
	}
	md, err := os.ReadFile(filepath.Join(filepath.Dir(files[0]), "compare.md"))
	if err != nil || !strings.Contains(string(md), "dbio comparison of repeats") {
		t.Errorf("compare.md is not the comparison of the repeats (%v)", err)
	}
	return out.String(), study
}

// Two identical configurations, 5 repeats a side, differ only by the noise
// between runs: no figure is called different.
func TestABOfIdenticalConfigurationsFindsNoDifference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 10 real runs")
	}
	dir := t.TempDir()
	out, study := fiveRepeatsAB(t, "--target "+dir, "--target "+dir)
	for _, m := range append(study.Result.Average, study.Result.Steps[0].Metrics...) {
		t.Logf("%s: A %v, B %v: %s (p %.3f)", m.Name, m.A.Runs, m.B.Runs, m.Significance.Verdict, m.Significance.P)
		if v := m.Significance.Verdict; v != "no significant difference" {
			t.Errorf("%s of two identical configurations: %q (A %v, B %v)", m.Name, v, m.A.Runs, m.B.Runs)
		}
	}
	if !strings.Contains(out, "no significant difference") && !strings.Contains(out, "within the runs' own spread") {
		t.Errorf("the terminal table states no verdict:\n%s", out)
	}
}

// tmpfs against a disk throttled to 200 write IOPS, 5 repeats a side: a
// write load commits hundreds of times faster on tmpfs, and the study says
// so, with the interval of the ratio.
func TestABOfTmpfsAgainstAThrottledDiskFindsTheDifference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 10 real runs")
	}
	h := iolimit.SystemHost(target.HostFS().Sys)
	testenv.Require(t, os.Geteuid() == 0 && (h.V1Blkio != "" || h.V2 != ""), "root and cgroup block-I/O control", "run the tests as root on a host with the blkio controller (cgroup v1) or io.max (v2)")
	disk := t.TempDir()
	st, err := target.HostFS().Resolve(disk)
	testenv.Require(t, err == nil && st.Device != "", "a temporary directory on a block device", "set TMPDIR to a directory on a disk")
	tmpfs := smallfs.Mount(t, 256<<20)
	out, study := fiveRepeatsAB(t, "--target "+disk+" --limit wiops=200", "--target "+tmpfs)
	var tps *results.ABMetric
	for i, m := range study.Result.Average {
		if m.Name == "TPS" {
			tps = &study.Result.Average[i]
		}
	}
	if tps == nil {
		t.Fatalf("no TPS average in %+v", study.Result.Average)
	}
	s := tps.Significance
	t.Logf("TPS: A %v, B %v: %s, ratio %.0fx [%.0fx, %.0fx], p %.4f", tps.A.Runs, tps.B.Runs, s.Verdict, s.Ratio, s.RatioLo, s.RatioHi, s.P)
	if !s.Significant() || !s.RatioInterval || s.RatioLo <= 2 || s.RatioLo > s.Ratio || s.Ratio > s.RatioHi {
		t.Errorf("tmpfs against 200 write IOPS: %+v (A %v, B %v)", s, tps.A.Runs, tps.B.Runs)
	}
	if !strings.Contains(out, "significant: ") || !strings.Contains(out, "95 % CI ") {
		t.Errorf("the terminal table does not state the difference with its interval:\n%s", out)
	}
}

// --repeat N runs the same run N times into one repeat set: a manifest
// naming each repeat's results directory, each with its own report, and the
// set's report and terminal summary giving every figure over the repeats.
func TestRepeatWritesARepeatSet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real steps")
	}
	res := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"sysbench", "--target", t.TempDir(), "--results", res, "--name", "sb",
		"--workload", "oltp_write_only", "--table-size", "1000", "--users", "1", "--ramp-time", "0s", "--runtime", "1s", "--repeat", "2"})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	sets, _ := filepath.Glob(filepath.Join(res, "*-sb", results.RepeatSetFile))
	if len(sets) != 1 {
		t.Fatalf("repeat sets %v", sets)
	}
	dir := filepath.Dir(sets[0])
	set, runs, err := results.LoadRepeatSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	if set.Repeats != 2 || len(runs) != 2 || set.Status != results.StatusCompleted || set.Kind != "sysbench" ||
		!strings.HasSuffix(set.Runs[0], "-sb-r1") || !strings.HasSuffix(set.Runs[1], "-sb-r2") {
		t.Fatalf("manifest %+v", set)
	}
	for _, f := range []string{filepath.Join(dir, "report.html"), filepath.Join(dir, "summary.md"), filepath.Join(runs[1].Path, "report.html")} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	for _, want := range []string{"=== repeat 2 of 2: sb ===\nabout ", " left in the repeat set: 1 repeat(s) of about ", "== dbio sysbench: 2 of 2 repeats completed, COMPLETED ==", "TPS (tx/s)", "[needs 6]", "repeat set: " + dir} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// dbio runs lists the set above its repeats, and the set is found by name.
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"runs", "--results", res}); code != exitOK || !strings.Contains(out.String(), "sysbench ×2") {
		t.Errorf("dbio runs: exit %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"report", "sb", "--results", res, "-o", filepath.Join(t.TempDir(), "set.html")}); code != exitOK {
		t.Errorf("dbio report of the set: exit %d:\n%s", code, out.String())
	}
	// Two repeats of one configuration compare as one run against one run,
	// with the caveat that says so.
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"compare", runs[0].Path, runs[1].Path, "-o", filepath.Join(t.TempDir(), "c.html")}); code != exitOK ||
		!strings.Contains(out.String(), "one run against one run") {
		t.Errorf("compare of one set's repeats: exit %d:\n%s", code, out.String())
	}
}

func TestRepeatMustRunAtLeastOnce(t *testing.T) {
	res := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"tpcc", "--target", t.TempDir(), "--results", res, "--repeat", "0"})
	if code != exitUsage || !strings.Contains(out.String(), "--repeat 0") {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
	if entries, _ := os.ReadDir(res); len(entries) != 0 {
		t.Errorf("something was written: %v", entries)
	}
}

// verdictLines are the rows of a comparison's Markdown that state a
// verdict, with the paths and times that name where and when it was
// written left out.
func verdictLines(t *testing.T, md string) []string {
	t.Helper()
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "significant") || strings.Contains(l, "within the noise") || strings.Contains(l, "too few repeats") {
			if !strings.Contains(l, "How to read") {
				out = append(out, l)
			}
		}
	}
	return out
}

// dbio compare given an A/B study's directory compares its two sides as
// two sets of repeats, with the verdicts the study itself wrote, even once
// the study has been moved away from where it ran.
func TestCompareReadsAnABStudy(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs 8 real runs")
	}
	res := t.TempDir()
	data := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"ab", "--repeat", "4", "--a", "--target " + data, "--b", "--target " + data,
		"--label-a", "first", "--label-b", "second", "--results", res, "--",
		"sysbench", "--workload", "oltp_write_only", "--table-size", "500", "--users", "1", "--ramp-time", "0s", "--runtime", "1s"})
	if code != exitOK {
		t.Fatalf("ab: exit %d:\n%s", code, out.String())
	}
	studies, _ := filepath.Glob(filepath.Join(res, "*-ab"))
	if len(studies) != 1 {
		t.Fatalf("A/B directories %v", studies)
	}
	want := verdictLines(t, filepath.Join(studies[0], "compare.md"))
	if len(want) == 0 {
		t.Fatal("the study's compare.md states no verdict")
	}
	// Moved: the runs are found inside the study, not where ab.json says they were.
	moved := filepath.Join(t.TempDir(), "study")
	if err := os.Rename(studies[0], moved); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	html := filepath.Join(t.TempDir(), "c.html")
	if code := run(context.Background(), testApp(&out), []string{"compare", moved, "-o", html}); code != exitOK {
		t.Fatalf("compare: exit %d:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "against A (first, 4 repeats)") || !strings.Contains(out.String(), "B (second, 4 repeats)") {
		t.Errorf("compare does not read the study as its two sides:\n%s", out.String())
	}
	got := verdictLines(t, strings.TrimSuffix(html, ".html")+".md")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("compare's verdicts differ from the study's:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// dbio report on the moved study renders its compare.html again, with
	// the same verdicts.
	md := filepath.Join(moved, "compare.md")
	if err := os.Remove(md); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"report", moved}); code != exitOK {
		t.Fatalf("report: exit %d:\n%s", code, out.String())
	}
	if again := verdictLines(t, md); strings.Join(again, "\n") != strings.Join(want, "\n") {
		t.Errorf("dbio report's verdicts differ from the study's:\n%s\nwant:\n%s", strings.Join(again, "\n"), strings.Join(want, "\n"))
	}
}

// dbio backup --repeat N repeats the whole study (load, then the cycles)
// into one repeat set whose summary gives each cycle over the repeats, and
// two such sets compare cycle by cycle, each with its verdict.
func TestBackupRepeated(t *testing.T) {
	// It checks what is recorded and said, not how fast: it shares the
	// machine with the other parallel tests.
	t.Parallel()
	if testing.Short() {
		t.Skip("runs 4 real backup studies")
	}
	res := t.TempDir()
	backup := func(name string) string {
		t.Helper()
		var out bytes.Buffer
		code := run(context.Background(), testApp(&out), []string{"backup", "--target", t.TempDir(), "--results", res, "--name", name,
			"--cycles", "2", "--repeat", "2", "--data", "reset"})
		if code != exitOK {
			t.Fatalf("exit %d:\n%s", code, out.String())
		}
		for _, want := range []string{"=== repeat 2 of 2: " + name + " ===", "== dbio backup: 2 of 2 repeats completed", "backup-2  MB/s"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
		sets, _ := filepath.Glob(filepath.Join(res, "*-"+name, results.RepeatSetFile))
		if len(sets) != 1 {
			t.Fatalf("repeat sets %v", sets)
		}
		return filepath.Dir(sets[0])
	}
	a, b := backup("bk-a"), backup("bk-b")
	set, runs, err := results.LoadRepeatSet(a)
	if err != nil || set.Kind != "backup" || len(runs) != 2 {
		t.Fatalf("manifest %+v, %d runs (%v)", set, len(runs), err)
	}
	var out bytes.Buffer
	html := filepath.Join(t.TempDir(), "c.html")
	if code := run(context.Background(), testApp(&out), []string{"compare", a, b, "-o", html}); code != exitOK {
		t.Fatalf("compare: exit %d:\n%s", code, out.String())
	}
	md, err := os.ReadFile(strings.TrimSuffix(html, ".html") + ".md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| backup-1 |", "| backup-2 |"} {
		found := false
		for _, line := range strings.Split(string(md), "\n") {
			if strings.HasPrefix(line, row) && strings.Contains(line, "too few repeats to tell") {
				found = true
			}
		}
		if !found {
			t.Errorf("no row %s with its verdict in the comparison:\n%s", row, md)
		}
	}
}

// dbio noisy --repeat N: each tenant of each phase is matched across the
// repeats by name (every tenant runs at one user count).
func TestNoisyRepeated(t *testing.T) {
	// It checks what is recorded and said, not how fast: it shares the
	// machine with the other parallel tests.
	t.Parallel()
	if testing.Short() {
		t.Skip("runs 2 real noisy-neighbour studies")
	}
	res := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"noisy", "--target", t.TempDir(), "--results", res, "--name", "nz",
		"--tenants", "2", "--users", "1", "--ramp-time", "0s", "--runtime", "2s", "--repeat", "2"})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	for _, want := range []string{"== dbio noisy: 2 of 2 repeats completed", "quiet-t1  TPM (tx/min)", "quiet-t2  TPM (tx/min)", "quiet  total TPM (tx/min)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
