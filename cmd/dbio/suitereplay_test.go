package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/analysis"
	"dbio/internal/replay"
	"dbio/internal/report"
	"dbio/internal/results"
	"dbio/internal/smallfs"
	"dbio/internal/testenv"
)

// shippedCapture is the shipped capture of PostgreSQL's TPC-C, the
// smallest working file of the four.
func shippedCapture(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "captures", "pg-tpcc"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// replaySuiteText replays the shipped pg-tpcc capture four times as fast
// as recorded on two targets: %FAST%, uncapped, and %SLOW%, capped well
// under the capture's writes and syncs at that speed.
const replaySuiteText = `name = "replays"
[targets.fast]
path = "%FAST%"
[targets.slow]
path = "%SLOW%"
limit = "riops=5000,wiops=1000"
[workloads.pg]
kind = "replay"
capture = "%CAPTURE%"
speed = 4.0
[[runs]]
name = "pg"
workload = "pg"
data = ["fast", "slow"]
[[expect]]
finding = "the capture keeps up uncapped and falls behind capped"
figure = "kept_up"
a = "pg-fast"
b = "pg-slow"
relation = "lower"
[[expect]]
finding = "the capped class ends the replay behind the uncapped one"
figure = "behind_s"
a = "pg-fast"
b = "pg-slow"
relation = "higher"
`

// TestSuiteReplaysOnTwoClasses: a suite replays a shipped capture on an
// uncapped target (a tmpfs) and on one capped well under the capture's
// writes (a loop device's ext4 under a block-I/O cgroup); each run writes
// the results directory dbio replay writes, and the suite's findings on
// kept-up and time behind are checked from them.
func TestSuiteReplaysOnTwoClasses(t *testing.T) {
	t.Parallel()
	testenv.Require(t, os.Geteuid() == 0, "root", testenv.HowRoot)
	testenv.RequireProgram(t, "fio", testenv.InstallFio)
	capDir := shippedCapture(t)
	fast := smallfs.Mount(t, 320<<20)
	slow := smallfs.MountDisk(t, 384<<20)
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	file := filepath.Join(dir, "replays.toml")
	text := strings.NewReplacer("%FAST%", fast, "%SLOW%", slow, "%CAPTURE%", capDir).Replace(replaySuiteText)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"suite", file, "--results", res}); code != exitOK {
		t.Fatalf("exit code %d: %s", code, out.String())
	}
	suites, _ := filepath.Glob(filepath.Join(res, "*-suite-replays"))
	if len(suites) != 1 {
		t.Fatalf("suite directories %v\n%s", suites, out.String())
	}
	kept := map[string]bool{}
	for _, name := range []string{"pg-fast", "pg-slow"} {
		runs, _ := filepath.Glob(filepath.Join(suites[0], "*-"+name))
		if len(runs) != 1 {
			t.Fatalf("%s: results %v", name, runs)
		}
		rec, err := replay.Load(runs[0])
		if err != nil {
			t.Fatal(err)
		}
		l, err := results.Load(runs[0])
		if err != nil {
			t.Fatal(err)
		}
		if l.Run.Kind != results.KindReplay || len(l.Steps) != 1 || l.Steps[0].BlockIO == nil || l.Steps[0].BlockIO.Writes.Requests == 0 {
			t.Fatalf("%s: run.json's kind %q and %d steps, want the one step of a replay that wrote", name, l.Run.Kind, len(l.Steps))
		}
		if rec.Capture != capDir || rec.Pace != replay.Recorded || rec.Speed != 4 {
			t.Errorf("%s: replayed %s at %s pace, speed %g; want the suite's capture at the recorded pace, speed 4", name, rec.Capture, rec.Pace, rec.Speed)
		}
		if _, err := os.Stat(filepath.Join(l.Run.Environment.Targets[0].Path, "dbio", "replay")); !os.IsNotExist(err) {
			t.Errorf("%s: the working file's directory is left (%v)", name, err)
		}
		if name == "pg-slow" && (l.Run.Environment.Targets[0].Limit == nil || l.Run.Environment.Targets[0].Limit.WriteIOPS != 1000) {
			t.Errorf("%s: its target records no limit of 1000 write IOPS: %+v", name, l.Run.Environment.Targets[0])
		}
		kept[name] = rec.KeptUp
		t.Logf("%s: %.2f s behind, kept up %v, write p99 %.0f µs", name, rec.BehindSeconds, rec.KeptUp, rec.Writes.Latency.P99)
	}
	if kept["pg-slow"] {
		t.Errorf("the replay capped at 1000 write IOPS kept up with four times the capture's pace")
	}
	s, err := results.LoadSuite(suites[0])
	if err != nil {
		t.Fatal(err)
	}
	checks := report.CheckSuite(s).Checks
	if len(checks) != 2 {
		t.Fatalf("%d findings checked, want 2", len(checks))
	}
	if c := checks[1]; c.Verdict != analysis.Reproduced {
		t.Errorf("finding %q: %s (%s), want reproduced", c.Finding, c.Verdict, c.Reason)
	}
	// Whether the uncapped tmpfs keeps up is the machine's to say: on a
	// machine too busy for it, the first finding has nothing to tell apart.
	if c := checks[0]; kept["pg-fast"] && c.Verdict != analysis.Reproduced {
		t.Errorf("finding %q: %s (%s), want reproduced when the uncapped replay kept up", c.Finding, c.Verdict, c.Reason)
	}
	if !strings.Contains(out.String(), "comparison: ") {
		t.Errorf("the suite compares no runs:\n%s", out.String())
	}
}

// A suite's replay that cannot run is refused before anything is written,
// with exit 2 and the fix: a directory that is not a capture.
func TestSuiteReplayRefusesWhatIsNotACapture(t *testing.T) {
	dir := t.TempDir()
	notCapture := filepath.Join(dir, "notcapture")
	if err := os.Mkdir(notCapture, 0o755); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "results")
	file := filepath.Join(dir, "replays.toml")
	text := strings.NewReplacer("%FAST%", filepath.Join(dir, "fast"), "%SLOW%", filepath.Join(dir, "slow"), "%CAPTURE%", notCapture).Replace(replaySuiteText)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--dry-run"}, {}} {
		var out bytes.Buffer
		code := run(context.Background(), testApp(&out), append([]string{"suite", file, "--results", res, "--create-target"}, args...))
		if code != exitUsage || !strings.Contains(out.String(), "run pg-fast: capture: "+notCapture+" is not a capture") ||
			!strings.Contains(out.String(), "give the results directory dbio capture wrote") {
			t.Errorf("%v: exit code %d, output %q; want %d naming the capture and the fix", args, code, out.String(), exitUsage)
		}
	}
	for _, p := range []string{res, filepath.Join(dir, "fast"), filepath.Join(dir, "slow")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was written for bad input (%v)", p, err)
		}
	}
}
