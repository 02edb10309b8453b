package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyRun copies one of the report package's recorded runs into dir, since
// dbio report writes into the results directory it renders.
func copyRun(t *testing.T, name, dir string) string {
	t.Helper()
	src := filepath.Join("..", "..", "internal", "report", "testdata", name)
	dst := filepath.Join(dir, name)
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestReportAndCompareCommands(t *testing.T) {
	dir := t.TempDir()
	ext4, tmpfs, mix := copyRun(t, "quick-ext4", dir), copyRun(t, "quick-tmpfs", dir), copyRun(t, "disk-mix", dir)
	fleetA, fleetB, tenants := copyRun(t, "disk-fleet-a", dir), copyRun(t, "disk-fleet-b", dir), copyRun(t, "tenants-fleet", dir)
	tests := []struct {
		name  string
		args  []string
		code  int
		say   string   // in the output
		files []string // written
	}{
		{"report into the run", []string{"report", ext4}, exitOK, "report:  " + filepath.Join(ext4, "report.html"),
			[]string{filepath.Join(ext4, "report.html"), filepath.Join(ext4, "summary.md"), filepath.Join(ext4, "csv", "tpcc-steps.csv")}},
		{"report of two runs", []string{"report", ext4, mix, "-o", filepath.Join(dir, "both.html")}, exitOK, "both.md",
			[]string{filepath.Join(dir, "both.html"), filepath.Join(dir, "both.md"), filepath.Join(dir, "both-csv")}},
		{"compare", []string{"compare", ext4, tmpfs, "-o", filepath.Join(dir, "cmp.html")}, exitOK, "TPM +201 % (3.0x, better)",
			[]string{filepath.Join(dir, "cmp.html"), filepath.Join(dir, "cmp-csv", "cmp-tpcc-tpm.csv")}},
		{"compare refuses", []string{"compare", ext4, mix, "-o", filepath.Join(dir, "no.html")}, exitUsage, "--force", nil},
		{"compare forced", []string{"compare", ext4, mix, "--force", "-o", filepath.Join(dir, "forced.html")}, exitOK, "report: " + filepath.Join(dir, "forced.html"),
			[]string{filepath.Join(dir, "forced.html")}},
		{"report of a fleet", []string{"report", fleetA}, exitOK, "report:  " + filepath.Join(fleetA, "report.html"),
			[]string{filepath.Join(fleetA, "csv", "fleet-iops-timeline.csv"), filepath.Join(fleetA, "csv", "fleet-mb_s-timeline.csv")}},
		{"report of tenants", []string{"report", tenants}, exitOK, "report:  " + filepath.Join(tenants, "report.html"),
			[]string{filepath.Join(tenants, "csv", "fleet-nopm-timeline.csv")}},
		{"compare fleets", []string{"compare", fleetA, fleetB, "-o", filepath.Join(dir, "fleets.html")}, exitOK, "Each host: B (fleet-b) against A (fleet-a), averages over 18 host rows",
			[]string{filepath.Join(dir, "fleets.html"), filepath.Join(dir, "fleets-csv", "cmp-fleet-hosts-iops.csv")}},
		{"compare refuses a fleet against one machine", []string{"compare", fleetA, mix, "-o", filepath.Join(dir, "no.html")}, exitUsage,
			"compare a fleet run with another fleet run", nil},
		{"report needs a directory", []string{"report"}, exitUsage, "name at least one results directory", nil},
		{"compare needs two", []string{"compare", ext4}, exitUsage, "at least two results directories", nil},
		{"not a results directory", []string{"report", dir}, exitUsage, "not a dbio results directory (no run.json)", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), tt.args)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d; output:\n%s", code, tt.code, out.String())
			}
			if !strings.Contains(out.String(), tt.say) {
				t.Errorf("output %q does not say %q", out.String(), tt.say)
			}
			for _, f := range tt.files {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("not written: %v", err)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "no.html")); err == nil {
		t.Error("a refused comparison wrote its report")
	}
}

func TestReportNeverReplacesForeignFiles(t *testing.T) {
	dir := t.TempDir()
	ext4 := copyRun(t, "quick-ext4", dir)
	mine := filepath.Join(dir, "notes.html")
	if err := os.WriteFile(mine, []byte("<p>my notes</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"report", ext4, "-o", mine})
	if code != exitUsage || !strings.Contains(out.String(), "not written by dbio") {
		t.Fatalf("exit code %d, output %q", code, out.String())
	}
	if b, _ := os.ReadFile(mine); string(b) != "<p>my notes</p>" {
		t.Errorf("notes.html was changed to %q", b)
	}
}
