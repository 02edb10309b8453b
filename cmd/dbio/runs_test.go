package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dbio runs lists the runs under a results directory with their headline
// figures, and report and compare find a run by the name it lists.
func TestRunsListsAndNamesFindRuns(t *testing.T) {
	base := t.TempDir()
	for _, n := range []string{"quick-ext4", "quick-tmpfs", "disk-mix", "disk-curve"} {
		copyRun(t, n, base)
	}
	// A suite keeps its runs one level down (here a second disk-curve).
	if err := os.MkdirAll(filepath.Join(base, "20261122-suite"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyRun(t, "disk-curve", filepath.Join(base, "20261122-suite"))

	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"runs", "--results", base}); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	for _, want := range []string{
		"quick-ext4", "tpcc 56,656 TPM / 25,328 NOPM at 1 user; fio 127,110 IOPS (4k-randwrite)",
		"quick-tmpfs", "disk-mix", filepath.Join("20261122-suite", "disk-curve"), "ext4 on vda (rotational)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dbio runs does not say %q:\n%s", want, out.String())
		}
	}

	cases := []struct {
		name string
		args []string
		code int
		say  string
	}{
		{"by name", []string{"compare", "quick-ext4", "quick-tmpfs", "--results", base, "-o", filepath.Join(t.TempDir(), "c.html")}, exitOK, "TPM +201 %"},
		{"by the end of a name", []string{"report", "mix", "--results", base, "-o", filepath.Join(t.TempDir(), "r.html")}, exitOK, "report:"},
		{"ambiguous", []string{"compare", "quick-ext4", "curve", "--results", base}, exitUsage, "names 2 runs"},
		{"unknown", []string{"report", "nvme", "--results", base}, exitUsage, "neither a results directory nor the name of a run"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), c.args)
			if code != c.code || !strings.Contains(out.String(), c.say) {
				t.Errorf("exit %d, want %d; output does not say %q:\n%s", code, c.code, c.say, out.String())
			}
		})
	}
}
