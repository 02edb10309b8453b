package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"dbio/internal/testenv"
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

// dbio runs fits the terminal it lists on: on a pseudo-terminal 80
// columns wide no line is wider, the run names stay whole (report and
// compare take them) and the engine has a column while there is room.
func TestRunsFitsAnEightyColumnTerminal(t *testing.T) {
	script := testenv.RequireProgram(t, "script", "apt-get install -y bsdutils")
	base := t.TempDir()
	names := []string{"quick-ext4", "tpcc-postgres", "disk-mix"}
	for _, n := range names {
		copyRun(t, n, base)
	}
	cmdline := "stty cols 80 && env -u COLUMNS " + os.Args[0] + " runs --results " + base
	p := startProgram(t, script, "-qefc", cmdline, "/dev/null")
	if code := p.exit(); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out)
	}
	shown := screen(p.out.String())
	if len(shown) != len(names)+1 {
		t.Fatalf("%d lines, want a header and %d runs:\n%s", len(shown), len(names), strings.Join(shown, "\n"))
	}
	for _, line := range shown {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("a line of %d columns on an 80-column terminal: %q", n, line)
		}
	}
	text := strings.Join(shown, "\n")
	for _, want := range append(names, "engine", "postgres 15.20", "sqlite 3.54.1") {
		if !strings.Contains(text, want) {
			t.Errorf("dbio runs at 80 columns does not say %q:\n%s", want, text)
		}
	}
}

// Columns give way in order as the width shrinks: first the ends of the
// long texts, then the least needed columns, never the run's name; with
// no limit (a pipe, a file) every line is whole.
func TestRunsColumnsGiveWay(t *testing.T) {
	rows := [][]string{
		{"run", "kind", "engine", "status", "started", "storage", "headline"},
		{"20261122-003401-pg", "tpcc", "postgres 15.20", "completed", "2026-11-22 00:34", "ext4 on vda (rotational)", "tpcc 28,260 TPM / 12,567 NOPM at 2 users"},
		{"20261122-suite/20261122-001305-quick-ext4", "quick", "sqlite 3.54.1", "completed", "2026-11-22 00:13", "ext4 on vda (rotational), capped at 500 read IOPS", "tpcc 56,656 TPM / 25,328 NOPM at 1 user; fio 127,110 IOPS (4k-randwrite)"},
	}
	tests := []struct {
		width       int
		has, hasNot []string
	}{
		{width: 0, has: []string{"engine", "storage", "(4k-randwrite)"}},
		{width: 160, has: []string{"engine", "storage", "started", "…"}},
		{width: 120, has: []string{"engine", "started", "headline"}, hasNot: []string{"storage"}},
		{width: 80, has: []string{"kind", "headline"}, hasNot: []string{"storage", "started", "engine"}},
		{width: 50, has: []string{"20261122-suite/20261122-001305-quick-ext4"}, hasNot: []string{"storage", "started", "engine", "status"}},
	}
	for _, tt := range tests {
		lines := fitColumns(rows, tt.width)
		text := strings.Join(lines, "\n")
		for _, line := range lines {
			if n := utf8.RuneCountInString(line); tt.width > 0 && n > tt.width && !strings.HasPrefix(line, "20261122-suite/20261122-001305-quick-ext4") {
				t.Errorf("width %d: a line of %d columns: %q", tt.width, n, line)
			}
			if strings.HasSuffix(line, " ") {
				t.Errorf("width %d: trailing spaces: %q", tt.width, line)
			}
		}
		for _, want := range append(tt.has, "20261122-003401-pg", "20261122-suite/20261122-001305-quick-ext4") {
			if !strings.Contains(text, want) {
				t.Errorf("width %d: does not say %q:\n%s", tt.width, want, text)
			}
		}
		for _, not := range tt.hasNot {
			if strings.Contains(lines[0], not) {
				t.Errorf("width %d: still has the %s column:\n%s", tt.width, not, text)
			}
		}
	}
}
