package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// The suite in testdata/suite-nvme-vs-sata is a real run of
// examples/nvme-vs-sata.toml on a shared two-core machine, trimmed to
// suite.json, run.json and the steps' summaries: its expectations are
// checked and laid out for the terminal, the suite's report and the
// studies table, each compared with its golden file.
func TestSuiteExpectationsMatchGolden(t *testing.T) {
	s, err := results.LoadSuite(filepath.Join("testdata", "suite-nvme-vs-sata"))
	if err != nil {
		t.Fatal(err)
	}
	sc := CheckSuite(s)
	if len(sc.Checks) != len(s.Expect) || len(sc.Checks) == 0 {
		t.Fatalf("%d checks of %d expectations", len(sc.Checks), len(s.Expect))
	}
	var text bytes.Buffer
	if err := ExpectText(&text, sc.Checks); err != nil {
		t.Fatal(err)
	}
	text.WriteString("\n")
	if err := StudiesMarkdown(&text, []SuiteChecks{sc}); err != nil {
		t.Fatal(err)
	}
	out := OutputAt(filepath.Join(t.TempDir(), "suite.html"))
	if err := WriteSuiteReport(out, sc, testOptions()); err != nil {
		t.Fatal(err)
	}
	got := rendered(t, out)
	got["terminal.txt"] = text.Bytes()
	checkGolden(t, "suite-nvme-vs-sata", got)
}

// A suite's report refuses to replace a file dbio did not write, as every
// report does.
func TestSuiteReportKeepsOthersFiles(t *testing.T) {
	s, err := results.LoadSuite(filepath.Join("testdata", "suite-nvme-vs-sata"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mine := filepath.Join(dir, "report.html")
	os.WriteFile(mine, []byte("<html>mine</html>"), 0o644)
	if err := WriteSuiteReport(OutputIn(dir), CheckSuite(s), testOptions()); err == nil {
		t.Fatal("a report.html dbio did not write was replaced")
	}
}

// An expectation's figure leads with B / A where that ratio means
// something, with B − A where A's side is at zero, under its floor or of
// the other sign, and with no ratio for a yes-or-no figure.
func TestExpectFigureLead(t *testing.T) {
	side := func(a, b float64, unit string, floor float64) analysis.ExpectCheck {
		c := analysis.ExpectCheck{Metric: analysis.Metric{Unit: unit, Floor: floor}, MedianA: a, MedianB: b, Ratio: b / a,
			WhereA: "8 users", WhereB: "8 users", Verdict: analysis.Reproduced}
		c.A, c.B = "tpcc-nvme", "tpcc-sata"
		return c
	}
	tests := []struct {
		name string
		c    analysis.ExpectCheck
		want string
	}{
		{"a ratio", side(30512, 12840, "tx/min", 0), "0.42x: tpcc-sata 12,840 vs tpcc-nvme 30,512 tx/min (8 users)"},
		{"a zero baseline", side(0, 3.1, "ms", 0), "3.10 ms higher: tpcc-sata 3.10 vs tpcc-nvme 0.000 ms (8 users)"},
		{"a baseline under the floor", side(0.2, 4, "% of CPU", 1), "3.8 points higher: tpcc-sata 4.0 vs tpcc-nvme 0.2 % (8 users)"},
		{"a change of sign", side(-2, 3, "ms", 0), "5.00 ms higher: tpcc-sata 3.00 vs tpcc-nvme -2.00 ms (8 users)"},
		{"a fall to below zero", side(2, -3, "ms", 0), "5.00 ms lower: tpcc-sata -3.00 vs tpcc-nvme 2.00 ms (8 users)"},
		{"yes against no", side(1, 0, "bool", 0), "tpcc-sata no vs tpcc-nvme yes (8 users)"},
		{"yes in some runs", side(1, 0.5, "bool", 0), "tpcc-sata yes in 50 % of runs vs tpcc-nvme yes (8 users)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExpectFigure(tt.c); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
