package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

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
