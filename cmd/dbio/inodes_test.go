package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"dbio/internal/smallfs"
)

// A target out of inodes is refused before anything is written, as full,
// however much space it has free: the refusal names the target, its free
// inodes and the fix.
func TestTargetOutOfInodesIsRefused(t *testing.T) {
	fs := smallfs.MountInodes(t, 1<<30, 4096)
	// One target made before the inodes ran out, one to be made.
	made, toMake, res := filepath.Join(fs, "made"), filepath.Join(fs, "to-make"), t.TempDir()
	if err := os.Mkdir(made, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := smallfs.FillInodes(fs, 0); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"tpcc", "--target", made, "--results", res},
		{"sysbench", "--target", toMake, "--create-target", "--results", res},
		{"disk", "--target", made, "--size", "16MB", "--runtime", "1s", "--results", res},
	} {
		t.Run(args[0], func(t *testing.T) {
			target := args[2]
			before, _ := os.ReadDir(target)
			var out bytes.Buffer
			if code := run(context.Background(), testApp(&out), args); code != exitUsage {
				t.Errorf("exit code %d, want %d:\n%s", code, exitUsage, out.String())
			}
			for _, want := range []string{"target " + target + " has 0 free inodes", "remove files there", "tmpfs -o nr_inodes"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output does not say %q:\n%s", want, out.String())
				}
			}
			if entries, _ := os.ReadDir(res); len(entries) != 0 {
				t.Errorf("a refused run wrote %v in the results", entries)
			}
			if after, _ := os.ReadDir(target); len(after) != len(before) {
				t.Errorf("a refused run wrote in its target: %v", after)
			}
			if _, err := os.Lstat(toMake); !os.IsNotExist(err) {
				t.Errorf("a refused run made its target: %v", err)
			}
		})
	}
}

// A target with few inodes left, but enough for the run, runs, and the
// run's summary and report show its free inodes beside its free space.
func TestLowInodesAreShown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real steps")
	}
	fs := smallfs.MountInodes(t, 1<<30, 16384)
	if err := smallfs.FillInodes(fs, 6000); err != nil {
		t.Fatal(err)
	}
	res := t.TempDir()
	var out bytes.Buffer
	args := []string{"sysbench", "--target", fs, "--users", "1", "--ramp-time", "1s", "--runtime", "1s", "--results", res}
	if code := run(context.Background(), testApp(&out), args); code != exitOK {
		t.Fatalf("exit code %d:\n%s", code, out.String())
	}
	// The run's own first files take a few of them before they are counted.
	if !regexp.MustCompile(`target:  .* MiB and 59\d\d inodes free`).MatchString(out.String()) {
		t.Errorf("the summary does not show the free inodes:\n%s", out.String())
	}
	reports, _ := filepath.Glob(filepath.Join(res, "*", "report.html"))
	if len(reports) != 1 {
		t.Fatalf("reports: %v", reports)
	}
	if b, err := os.ReadFile(reports[0]); err != nil || !regexp.MustCompile(`<td class="num">1024.0 MiB and 59\d\d inodes</td>`).Match(b) {
		t.Errorf("the report's targets do not show the free inodes (%v)", err)
	}
}
