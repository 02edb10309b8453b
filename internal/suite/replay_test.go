package suite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replayEnv is testEnv with a replay's figure an expectation may name.
func replayEnv() Env {
	env := testEnv(nil)
	env.Figures = append(env.Figures, "kept_up")
	return env
}

// replaySuite is a suite whose workload r replays a capture; %WORKLOAD%
// adds to r's table, %RUN% to its run and %EXPECT% to its expectation.
const replaySuite = `name = "x"
[targets.a]
path = "/x"
limit = "riops=100,wiops=100"
[targets.b]
path = "/y"
[targets.far]
path = "h1:/srv/data"
[[host]]
name = "h1"
destination = "root@10.0.0.1"
[engines.e]
engine = "sqlite"
[workloads.r]
kind = "replay"
%WORKLOAD%
[[runs]]
name = "rp"
workload = "r"
%RUN%
[[expect]]
finding = "keeps up on b, not on a"
figure = "kept_up"
a = "rp-b"
b = "rp-a"
relation = "lower"
%EXPECT%
`

// A replay workload's capture is found from the suite file's directory;
// its runs cross targets, start no engine and record one step, which
// every expectation on them reads.
func TestReplayWorkload(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "captures", "pg"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "s.toml")
	text := strings.NewReplacer("%WORKLOAD%", `capture = "captures/pg"`, "%RUN%", `data = ["a", "b"]`, "%EXPECT%", "").Replace(replaySuite)
	p, err := Parse(file, []byte(text), replayEnv())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Runs) != 2 || p.Runs[0].Name != "rp-a" || p.Runs[1].Name != "rp-b" {
		t.Fatalf("runs %+v, want rp-a and rp-b", p.Runs)
	}
	w := p.Runs[0].Workload
	if w.CaptureDir != filepath.Join(dir, "captures", "pg") || w.Pace != PaceRecorded || w.Speed != 1 || p.Runs[0].Kind != KindReplay {
		t.Errorf("workload %+v, want the capture under the suite's directory at the recorded pace, speed 1", w)
	}
	if p.Runs[0].Data.Limits.WriteIOPS != 100 {
		t.Errorf("run rp-a's limits %+v, want its target's", p.Runs[0].Data.Limits)
	}
	if e := p.Expect[0]; e.StepA != KindReplay || e.StepB != KindReplay {
		t.Errorf("expectation reads steps %q and %q, want the replay's step on both sides", e.StepA, e.StepB)
	}
}

// What a replay cannot take is refused with the file's line and key and
// the fix, before anything runs.
func TestReplayWorkloadProblems(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"captures/pg", "outside"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	suiteDir := filepath.Join(dir, "suite")
	if err := os.MkdirAll(suiteDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "captures"), filepath.Join(suiteDir, "captures")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(suiteDir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(suiteDir, "real", "pg"), 0o755); err != nil {
		t.Fatal(err)
	}
	good := `capture = "real/pg"`
	for _, tt := range []struct {
		name, workload, run, expect, says string
	}{
		{"no capture", ``, `data = "a"`, "", "workloads.r.capture: a replay needs the capture to play"},
		{"missing capture", `capture = "nothere"`, `data = "a"`, "", "suite/nothere does not exist (relative to the suite file's directory"},
		{"capture not a directory", `capture = "file"`, `data = "a"`, "", "is not a directory: give the results directory dbio capture wrote"},
		{"capture through a link", `capture = "captures/pg"`, `data = "a"`, "", "captures is a symbolic link: a relative capture path is read inside the suite file's directory without following a link"},
		{"capture leaves the directory", `capture = "../outside"`, `data = "a"`, "", `"../outside" leaves the suite file's directory`},
		{"unknown pace", good + "\npace = \"fast\"", `data = "a"`, "", `workloads.r.pace: "fast": use "recorded"`},
		{"speed at max pace", good + "\npace = \"max\"\nspeed = 2.0", `data = "a"`, "", "workloads.r.speed: scales the recorded pace"},
		{"negative speed", good + "\nspeed = -1.0", `data = "a"`, "", "workloads.r.speed: -1: give a number above 0"},
		{"users", good + "\nusers = [1]", `data = "a"`, "", "workloads.r.users: a replay issues its capture's requests as they were recorded"},
		{"runtime", good + "\nruntime = \"10s\"", `data = "a"`, "", "workloads.r.runtime: a replay issues"},
		{"a database key", good + "\nwarehouses = 1", `data = "a"`, "", "workloads.r.warehouses: unknown key"},
		{"engine", good, "data = \"a\"\nengine = \"e\"", "", "runs[0].engine: a replay starts no database"},
		{"log target", good, "data = \"a\"\nlog = \"b\"", "", "runs[0].log: a replay starts no database"},
		{"scenario", good, "data = \"a\"\nscenario = \"backup\"", "", "runs[0].scenario: a replay starts no database"},
		{"capture of the run", good, "data = \"a\"\ncapture = true", "", "runs[0].capture: a replay starts no database"},
		{"target on a host", good, `data = ["a", "far"]`, "", "runs[0].data: target far is on other hosts, and a replay plays its capture on this machine"},
		{"a user count in an expectation", good, `data = ["a", "b"]`, "\nstep = 8", `expect[0].step: "8": run rp-b is a replay, which records one step`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.NewReplacer("%WORKLOAD%", tt.workload, "%RUN%", tt.run, "%EXPECT%", tt.expect).Replace(replaySuite)
			if !strings.Contains(tt.run, `"b"`) {
				// The expectation names rp-a and rp-b: a run on one target
				// is both.
				text = strings.Replace(text, `a = "rp-b"`+"\n"+`b = "rp-a"`, `a = "rp"`+"\n"+`b = "rp"`+"\n"+`a_step = "replay"`, 1)
			}
			_, err := Parse(filepath.Join(suiteDir, "s.toml"), []byte(text), replayEnv())
			var ps *Problems
			if !errors.As(err, &ps) || !strings.Contains(ps.Error(), tt.says) {
				t.Errorf("%v, want a problem saying %q", err, tt.says)
			}
		})
	}
}
