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
	"dbio/internal/stats"
)

// dbio ab --until-decided stops after the pair of runs that decides: on
// recorded quick runs, identical sides (tmpfs against tmpfs) with no
// difference once the ratio's interval is within the margin, and tmpfs
// against an IOPS-capped target with a difference as soon as the design's
// boundary can be crossed; the study's record says what was decided after
// how many runs.
func TestABUntilDecided(t *testing.T) {
	tmpfs, capped := "../../internal/report/testdata/quick-tmpfs", "../../internal/report/testdata/quick-limited"
	for _, tt := range []struct {
		name    string
		a, b    string
		runs    int
		verdict string
	}{
		{"identical sides", tmpfs, tmpfs, 3, stats.NoDifference.String()},
		{"tmpfs against a capped target", tmpfs, capped, 5, stats.Different.String()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := stats.NewSequential(stats.DefaultAlpha, 10)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			app := testApp(&out)
			seq := &results.ABSequential{Alpha: d.Alpha, MaxPerSide: d.MaxPerSide, MarginPct: 5}
			dirs := map[string][]string{}
			decided := 0
			for i := 1; i <= 10; i++ {
				dirs["a"], dirs["b"] = append(dirs["a"], tt.a), append(dirs["b"], tt.b)
				if lookSequential(app, d, 0.05, seq, dirs) {
					decided = i
					break
				}
			}
			if decided != tt.runs || seq.RunsPerSide != tt.runs || !seq.Decided || seq.Verdict != tt.verdict || len(seq.Looks) != tt.runs {
				t.Fatalf("decided after %d runs: %+v, want %q after %d:\n%s", decided, seq, tt.verdict, tt.runs, out.String())
			}
			dir := t.TempDir()
			if err := writeSequential(dir, seq); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, results.ABSequentialFile))
			if err != nil {
				t.Fatal(err)
			}
			var back results.ABSequential
			if err := json.Unmarshal(b, &back); err != nil || back.Verdict != tt.verdict || back.RunsPerSide != tt.runs || !strings.HasPrefix(back.Figure, "TPM at its best step") {
				t.Errorf("recorded %+v (%v)", back, err)
			}
			if want := "sequential: TPM at its best step after " + plural(tt.runs, "run") + " a side"; !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		})
	}
}

// --until-decided's settings are refused with their fix before any run.
func TestABUntilDecidedFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"--until-decided", "--repeat", "3"}, "--repeat 3: with --until-decided --repeat is the most runs a side"},
		{[]string{"--until-decided", "--repeat", "10", "--margin", "five"}, `--margin "five": give a percentage`},
		{[]string{"--margin", "2%"}, "--margin: applies only with --until-decided"},
	} {
		var out bytes.Buffer
		args := append(append([]string{"ab", "--a", "--buffer-pool 64MB"}, tt.args...), "--", "tpcc", "--target", t.TempDir())
		if code := run(context.Background(), testApp(&out), args); code != exitUsage || !strings.Contains(out.String(), tt.says) {
			t.Errorf("%v: exit %d, want 2 saying %q:\n%s", tt.args, code, tt.says, out.String())
		}
	}
}
