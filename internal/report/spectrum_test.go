package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// manyStepsRun is the recorded TPC-C run with histograms, its first step
// copied until it has n steps, in a directory of the test's own.
func manyStepsRun(t *testing.T, n int) *results.Loaded {
	t.Helper()
	l := load(t, "tpcc-sqlite-histograms")[0]
	dir := t.TempDir()
	first := l.Steps[0]
	src := results.StepPath(l.Path, first.Index, first.Name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var steps []results.Step
	for i := range n {
		s := first
		s.Index, s.Name = i, "step-"+string(rune('a'+i))
		dst := results.StepPath(dir, s.Index, s.Name)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		steps = append(steps, s)
	}
	return &results.Loaded{Path: dir, Run: l.Run, Steps: steps, Series: l.Series}
}

// TestSpectrumOfManyStepsIsSmallMultiples: a run of more steps than a
// chart can show apart (a fio profile's dozens of points) draws its
// spectra as several charts of spectrumLines lines each, the first
// keeping the chart's id, each titled with the steps it holds.
func TestSpectrumOfManyStepsIsSmallMultiples(t *testing.T) {
	for _, tt := range []struct {
		steps int
		lines []int
	}{
		{2, []int{2}},
		{6, []int{6}},
		{7, []int{6, 1}},
		{14, []int{6, 6, 2}},
	} {
		l := manyStepsRun(t, tt.steps)
		v := viewsOf([]*results.Loaded{l}, testOptions())[0]
		charts := spectrumChart(v, l.Steps, "tpcc-spectrum", "transaction", "all types")
		if len(charts) != len(tt.lines) {
			t.Fatalf("%d steps: %d charts, want %d", tt.steps, len(charts), len(tt.lines))
		}
		for i, c := range charts {
			if len(c.Series) != tt.lines[i] {
				t.Errorf("%d steps, chart %d: %d lines, want %d", tt.steps, i+1, len(c.Series), tt.lines[i])
			}
			if i == 0 && c.ID != "tpcc-spectrum" || i > 0 && c.ID != "tpcc-spectrum-"+string(rune('1'+i)) {
				t.Errorf("%d steps, chart %d: id %q", tt.steps, i+1, c.ID)
			}
			if len(charts) > 1 && !strings.Contains(c.Title, c.Series[0].Name+" to "+c.Series[len(c.Series)-1].Name) {
				t.Errorf("%d steps, chart %d: title %q does not name its steps", tt.steps, i+1, c.Title)
			}
		}
	}
}

// TestCompareSpectraOfManyRuns: a comparison of more runs than there are
// line styles draws each step's spectra as charts of run A and three
// others, so that every line on a chart has a style of its own.
func TestCompareSpectraOfManyRuns(t *testing.T) {
	for _, tt := range []struct {
		runs  int
		lines []int
	}{
		{2, []int{2}},
		{4, []int{4}},
		{5, []int{4, 2}},
		{8, []int{4, 4, 2}},
	} {
		var loaded []*results.Loaded
		for range tt.runs {
			loaded = append(loaded, load(t, "tpcc-sqlite-histograms")...)
		}
		views := viewsOf(loaded, testOptions())
		for i, v := range views {
			v.Letter = letter(i)
		}
		rows := analysis.RowsByUsers(runViews(views), "tpcc")[:1]
		charts := compareSpectra(views, rows, func(s string) string { return "cmp-tpcc-" + s }, func(l string) string { return l + " users" }, "transaction")
		if len(charts) != len(tt.lines) {
			t.Fatalf("%d runs: %d charts, want %d", tt.runs, len(charts), len(tt.lines))
		}
		seen := map[string]bool{}
		for i, c := range charts {
			if len(c.Series) != tt.lines[i] || c.Series[0].Name != "A" {
				t.Errorf("%d runs, chart %d: lines %d, the first %q; want %d, the first A", tt.runs, i+1, len(c.Series), c.Series[0].Name, tt.lines[i])
			}
			styles := map[int]bool{}
			for _, s := range c.Series {
				if styles[s.Dash%len(dashes)] {
					t.Errorf("%d runs, chart %d: two lines dashed alike", tt.runs, i+1)
				}
				styles[s.Dash%len(dashes)] = true
				seen[s.Name] = true
			}
		}
		if len(seen) != tt.runs {
			t.Errorf("%d runs: the charts draw %d of them", tt.runs, len(seen))
		}
	}
}

// TestFooterNamesTheHistograms: a report whose runs kept histograms says
// in its footer which files its latency spectra are drawn from.
func TestFooterNamesTheHistograms(t *testing.T) {
	v := viewsOf(load(t, "tpcc-sqlite-histograms"), testOptions())
	got := footer(testOptions(), v)
	if !strings.Contains(got, "The latency spectra are drawn from the steps' histograms: steps/*/latency-delivery.hdr, steps/*/latency-new_order.hdr,") {
		t.Errorf("footer %q", got)
	}
	if got := footer(testOptions(), viewsOf(load(t, "quick-ext4"), testOptions())); strings.Contains(got, "histograms") {
		t.Errorf("a run without histograms names some: %q", got)
	}
}
