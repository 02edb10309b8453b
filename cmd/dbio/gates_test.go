package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
)

// TestThresholdsMetExitZero: a run that meets every threshold exits 0,
// says so, and records them as passed.
func TestThresholdsMetExitZero(t *testing.T) {
	t.Parallel()
	res := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"sysbench", "--target", t.TempDir(), "--results", res,
		"--workload", "oltp_point_select", "--table-size", "1000", "--users", "1", "--ramp-time", "0s", "--runtime", "1s",
		"--threshold", "tps>=1", "--threshold", "latency_p99<=1h"})
	if code != exitOK {
		t.Fatalf("exit code %d, want %d:\n%s", code, exitOK, out.String())
	}
	for _, want := range []string{"PASS tps>=1: ", "PASS latency_p99<=1h: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "FAIL ") || strings.Contains(out.String(), "thresholds broken") {
		t.Errorf("a met threshold is said to be broken:\n%s", out.String())
	}
	l, err := results.Load(runDir(res))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Run.Thresholds; len(got) != 2 || !got[0].Passed || !got[1].Passed {
		t.Errorf("run.json's thresholds: %+v", got)
	}
}

// TestThresholdsGateARun runs a short TPC-C on SQLite with a threshold it
// meets and one it breaks: the command exits 99, the one naming a step is
// said as the step ends, and run.json, the summary and the JUnit file all
// say which broke.
func TestThresholdsGateARun(t *testing.T) {
	t.Parallel()
	dir, res := t.TempDir(), t.TempDir()
	junit := filepath.Join(t.TempDir(), "dbio.xml")
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"tpcc", "--target", dir, "--results", res, "--warehouses", "1",
		"--users", "1", "--ramp-time", "0s", "--runtime", "2s",
		"--threshold", "nopm>=1", "--threshold", "new_order:p99<=1h", "--threshold", "nopm[users-1]>=1e12", "--junit", junit})
	if code != exitThresholds {
		t.Fatalf("exit code %d, want %d:\n%s", code, exitThresholds, out.String())
	}
	for _, want := range []string{"PASS nopm>=1: ", "PASS new_order:p99<=1h: ", "FAIL nopm[users-1]>=1e12: ", "breaks it", "thresholds broken: 1 of 3"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// The threshold naming a step is said as that step ends, before the
	// run's end judges all three; the others wait for the run's end.
	early := strings.Index(out.String(), "FAIL nopm[users-1]>=1e12: ")
	if !strings.Contains(out.String()[early:], " (as step users-1 ended)\n") || early > strings.LastIndex(out.String(), "FAIL nopm[users-1]>=1e12: ") ||
		early > strings.Index(out.String(), "PASS nopm>=1: ") || strings.Count(out.String(), "(as step") != 1 {
		t.Errorf("the step's threshold is not said once as the step ends, before the run's verdicts:\n%s", out.String())
	}
	runs, _ := filepath.Glob(filepath.Join(res, "*"))
	if len(runs) != 1 {
		t.Fatalf("results directories: %v", runs)
	}
	l, err := results.Load(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Run.Thresholds; len(got) != 3 || !got[0].Passed || !got[1].Passed || got[2].Passed || got[2].Measured == nil || got[2].At != "users-1" {
		t.Errorf("run.json's thresholds: %+v", got)
	}
	for _, name := range []string{"summary.md", "report.html"} {
		b, err := os.ReadFile(filepath.Join(runs[0], name))
		if err != nil || !strings.Contains(string(b), "Thresholds") || !strings.Contains(string(b), "THRESHOLDS BROKEN: 1 of 3") {
			t.Errorf("%s does not show the thresholds (%v)", name, err)
		}
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites junitSuites
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("JUnit file: %v\n%s", err, b)
	}
	if suites.Tests != 3 || suites.Failures != 1 || len(suites.Suites) != 1 || suites.Suites[0].Cases[2].Failure == nil {
		t.Errorf("JUnit file: %d tests, %d failures:\n%s", suites.Tests, suites.Failures, b)
	}
}

// TestThresholdsBadInput refuses a malformed threshold, a figure that is
// not one, and a transaction type the workload lacks, before anything is written.
func TestThresholdsBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.xml")
	if err := os.WriteFile(foreign, []byte("<results/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"tpcc", "--threshold", "nopmm>=1"}, "did you mean nopm?"},
		{[]string{"tpcc", "--threshold", "nopm>=50ms"}, "is a duration"},
		{[]string{"tpcc", "--threshold", "neworder:p99<=5ms"}, `no transaction type "neworder" (did you mean new_order?)`},
		{[]string{"sysbench", "--threshold", "tps=5"}, "'=' alone is no comparison"},
		{[]string{"disk", "--threshold", "iops[4k-randread]>=1GB"}, "the figure is in I/O per s"},
		{[]string{"tpcc", "--junit", filepath.Join(dir, "j.xml")}, "give at least one --threshold"},
		{[]string{"tpcc", "--threshold", "nopm>=1", "--junit", foreign}, "not a JUnit file dbio wrote"},
		{[]string{"tpcc", "--history", "postgres://u:S3cret@db1:port/db"}, "--history: history store postgres://u:***@db1:port/db"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			res := t.TempDir()
			var out bytes.Buffer
			args := append(tt.args, "--target", dir, "--results", res)
			if code := run(context.Background(), testApp(&out), args); code != exitUsage {
				t.Fatalf("exit code %d, want %d:\n%s", code, exitUsage, out.String())
			}
			if !strings.Contains(out.String(), tt.want) || strings.Contains(out.String(), "S3cret") {
				t.Errorf("message lacks %q or shows the password:\n%s", tt.want, out.String())
			}
			if entries, _ := os.ReadDir(res); len(entries) > 0 {
				t.Errorf("results written: %v", entries)
			}
		})
	}
}
