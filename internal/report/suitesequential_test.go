package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/analysis"
	"dbio/internal/results"
	"dbio/internal/stats"
)

// A suite's comparison run until decided shows its looks in the suite's
// report and summary: after each pair of runs the statistic against its
// boundary, and the look where it stopped with the verdict.
func TestSuiteReportShowsSequentialLooks(t *testing.T) {
	design, err := stats.NewSequential(stats.DefaultAlpha, 5)
	if err != nil {
		t.Fatal(err)
	}
	a := []float64{1210, 1185, 1240, 1199}
	b := []float64{640, 702, 655, 610}
	seq := results.SuiteSequential{Group: "tpcc", A: "nvme", B: "sata",
		ABSequential: results.ABSequential{Figure: "TPM at its best step", Alpha: design.Alpha, MaxPerSide: 5, MarginPct: 5}}
	decided := false
	for n := 1; n <= len(a) && !decided; n++ {
		if decided, err = analysis.LookSequential(design, 0.05, &seq.ABSequential, a[:n], b[:n]); err != nil {
			t.Fatal(err)
		}
	}
	if !decided || len(seq.Looks) != 4 {
		t.Fatalf("the design decided %v after %d looks, want a difference called at the fourth", decided, len(seq.Looks))
	}
	dir := t.TempDir()
	record := map[string]any{
		"plan":    map[string]any{"name": "until-decided", "runs": []any{}},
		"outcome": map[string]any{"dir": ".", "runs": []any{}, "sequential": []results.SuiteSequential{seq}},
	}
	j, _ := json.Marshal(record)
	if err := os.WriteFile(filepath.Join(dir, results.SuiteFile), j, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := results.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Sequential) != 1 || len(s.Sequential[0].Looks) != 4 {
		t.Fatalf("suite.json's comparisons read back as %+v", s.Sequential)
	}
	out := OutputAt(filepath.Join(t.TempDir(), "suite.html"))
	if err := WriteSuiteReport(out, CheckSuite(s), testOptions()); err != nil {
		t.Fatal(err)
	}
	got := rendered(t, out)
	var text strings.Builder
	if err := SequentialText(&text, s.Sequential); err != nil {
		t.Fatal(err)
	}
	stop := "tpcc (sata against nvme, TPM at its best step, until decided): significant difference after 4 runs a side of at most 5 (stopped)."
	for name, want := range map[string][]string{
		"report.html": {stop, "Sequential looks: tpcc", "none yet", "±2.31", "stopped: significant difference", "go on", "640, 702, 655, 610"},
		"summary.md":  {stop, "none yet", "±2.31", "stopped: significant difference"},
		"terminal":    {stop, "1 run a side: Z -1.00, boundary none yet", "4 runs a side: Z -2.31, boundary ±2.31"},
	} {
		body := text.String()
		if name != "terminal" {
			body = string(got[name])
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s does not say %q:\n%s", name, w, body)
			}
		}
	}
	// Without a comparison run until decided there is no such section.
	s.Sequential = nil
	plain := OutputAt(filepath.Join(t.TempDir(), "suite.html"))
	if err := WriteSuiteReport(plain, CheckSuite(s), testOptions()); err != nil {
		t.Fatal(err)
	}
	if html := rendered(t, plain)["report.html"]; strings.Contains(string(html), "run until decided") {
		t.Error("a suite without sequential comparisons reports one")
	}
}
