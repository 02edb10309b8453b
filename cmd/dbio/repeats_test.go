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
	code := run(context.Background(), testApp(&out), []string{"ab", "--runs", "5", "--a", sideA, "--b", sideB, "--results", res, "--",
		"sysbench", "--workload", "oltp_write_only", "--table-size", "1000", "--users", "1", "--rampup", "1s", "--step", "2s"})
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
