package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"dbio/internal/analysis"
	"dbio/internal/results"
	"dbio/internal/units"
)

// A suite's expectations are laid out the same way everywhere: the finding,
// the seed study's figure, dbio's figure and the verdict, with why.

// expectValue renders one side's median of an expectation's figure, and
// the unit that goes after it.
func expectValue(c analysis.ExpectCheck, v float64) (string, string) {
	switch {
	case strings.HasPrefix(c.Metric.Unit, "%"):
		return percent(v), "%"
	case c.Metric.Unit == "ms" || strings.HasPrefix(c.Metric.Unit, "ms,"):
		return millis(v), "ms"
	}
	return quantity(v), c.Metric.Unit
}

// ExpectFigure is dbio's figure for an expectation: B / A, then each side's
// median and where it was read ("0.42x: tpcc-sata 12,840 vs tpcc-nvme
// 30,512 tx/min (8 users, 2 runs)"); "-" without both sides. A ratio says
// nothing when A's side is at or under the figure's floor (zero, or a
// change of sign): how far B is above or below A leads instead ("3.10 ms
// higher: ..."). A yes-or-no figure has no ratio either: each side says
// yes or no, or how often yes across its runs.
func ExpectFigure(c analysis.ExpectCheck) string {
	if c.Verdict == analysis.NotMeasured {
		return "-"
	}
	a, unit := expectValue(c, c.MedianA)
	b, _ := expectValue(c, c.MedianB)
	lead := ratio(c.Ratio) + ": "
	switch {
	case c.Metric.Unit == "bool":
		a, b, unit, lead = yesShare(c.MedianA), yesShare(c.MedianB), "", ""
	case !ratioSays(c):
		d, du := expectValue(c, math.Abs(c.MedianB-c.MedianA))
		if du == "%" {
			// Of a share, the difference is in points: "0.4 % higher"
			// reads as 0.4 % of A.
			du = "points"
		}
		lead = withUnit(d, du) + map[bool]string{true: " higher: ", false: " lower: "}[c.MedianB > c.MedianA]
	}
	if c.WhereA != c.WhereB {
		// Read at different steps (a run against itself): each side says where.
		return fmt.Sprintf("%s%s %s (%s) vs %s %s (%s)", lead, c.B, withUnit(b, unit), c.WhereB, c.A, withUnit(a, unit), c.WhereA)
	}
	return fmt.Sprintf("%s%s %s vs %s %s (%s)", lead, c.B, b, c.A, withUnit(a, unit), c.WhereA)
}

// ratioSays is whether B / A means something: A's median above the
// figure's floor and above zero, B's not below zero, and the ratio within what ratio renders
// as a number.
func ratioSays(c analysis.ExpectCheck) bool {
	return c.MedianA > 0 && c.MedianA > c.Metric.Floor && c.MedianB >= 0 && !math.IsNaN(c.Ratio) && !math.IsInf(c.Ratio, 0) && math.Abs(c.Ratio) <= maxRatio
}

// yesShare renders a yes-or-no figure's median over runs: yes, no, or
// the share of runs that said yes.
func yesShare(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 1:
		return "yes"
	case v <= 0:
		return "no"
	}
	return fmt.Sprintf("yes in %.0f %% of runs", v*100)
}

// withUnit puts a unit after a value, when there is one.
func withUnit(v, unit string) string {
	if unit == "" {
		return v
	}
	return v + " " + unit
}

// ExpectText prints a suite's expectations for the terminal: per finding,
// the verdict, the seed's figure, dbio's and why.
func ExpectText(w io.Writer, checks []analysis.ExpectCheck) error {
	if len(checks) == 0 {
		return nil
	}
	var b strings.Builder
	counts := map[analysis.ExpectVerdict]int{}
	b.WriteString("\nexpectations (the seed study's findings, checked against these runs):\n")
	for _, c := range checks {
		counts[c.Verdict]++
		fmt.Fprintf(&b, "  %-15s %s\n", c.Verdict, c.Finding)
		fmt.Fprintf(&b, "  %-15s seed: %s\n", "", orDash(c.Seed))
		fmt.Fprintf(&b, "  %-15s dbio: %s\n", "", ExpectFigure(c))
		fmt.Fprintf(&b, "  %-15s why:  %s\n", "", c.Reason)
	}
	var parts []string
	for _, v := range []analysis.ExpectVerdict{analysis.Reproduced, analysis.NotReproduced, analysis.WithinNoise, analysis.NotMeasured} {
		if counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
		}
	}
	fmt.Fprintf(&b, "  %d of %d findings reproduced (%s)\n", counts[analysis.Reproduced], len(checks), strings.Join(parts, ", "))
	_, err := io.WriteString(w, b.String())
	return err
}

// verdictClass colours a verdict cell as a comparison's judgement is.
func verdictClass(v analysis.ExpectVerdict) string {
	switch v {
	case analysis.Reproduced:
		return "better"
	case analysis.NotReproduced:
		return "worse"
	}
	return ""
}

// expectTable is a suite's expectations as a table.
func expectTable(id string, checks []analysis.ExpectCheck) *table {
	t := &table{ID: id, Title: "Expected findings",
		Caption: "Each finding of the seed study as run b against run a. A difference counts when the runs' ranges do not overlap (two runs a side or more; a U test from four), or, one run against one run, when it passes the stated floor; else it is within noise."}
	t.Columns = []column{{Name: "finding", Wrap: true}, {Name: "a"}, {Name: "b"}, {Name: "seed study", Wrap: true}, {Name: "dbio", Wrap: true}, {Name: "verdict"}, {Name: "why", Wrap: true}}
	for _, c := range checks {
		v := textCell(c.Verdict.String())
		v.Class = verdictClass(c.Verdict)
		t.Rows = append(t.Rows, []cell{textCell(c.Finding), textCell(c.A), textCell(c.B), textCell(orDash(c.Seed)), textCell(ExpectFigure(c)), v, textCell(c.Reason)})
	}
	return t
}

// SuiteChecks is a suite directory read back with its expectations checked.
type SuiteChecks struct {
	Suite  *results.Suite
	Checks []analysis.ExpectCheck
}

// CheckSuite checks a suite's expectations against its runs' results.
func CheckSuite(s *results.Suite) SuiteChecks {
	return SuiteChecks{Suite: s, Checks: analysis.CheckExpectations(s.Expect, s.Repeats)}
}

// WriteSuiteReport writes a suite's report (OutputIn its directory, for
// dbio suite and dbio report): the expected findings and their verdicts,
// every run and the comparisons the suite wrote.
func WriteSuiteReport(out Output, sc SuiteChecks, opts Options) error {
	s := sc.Suite
	d := &document{Title: "dbio suite: " + s.Name, Subtitle: s.Description}
	reproduced := 0
	for _, c := range sc.Checks {
		if c.Verdict == analysis.Reproduced {
			reproduced++
		}
	}
	summary := &section{ID: "summary", Title: "Summary"}
	d.Sections = append(d.Sections, summary)
	if len(sc.Checks) > 0 {
		summary.add(&paragraph{Text: fmt.Sprintf("%d of %d expected findings reproduced.", reproduced, len(sc.Checks)), Class: "verdict"})
		summary.add(expectTable("suite-expect", sc.Checks))
	} else {
		summary.add(&paragraph{Text: "The suite names no expected finding ([[expect]] in its file).", Class: "note"})
	}
	if len(s.Sequential) > 0 {
		seq := &section{ID: "suite-sequential", Title: "Comparisons run until decided"}
		for i, q := range s.Sequential {
			summary.add(&paragraph{Text: sequentialSentence(q)})
			seq.add(sequentialTable(fmt.Sprintf("suite-sequential-%d", i+1), q))
		}
		d.Sections = append(d.Sections, seq)
	}
	runs := &section{ID: "suite-runs", Title: "Runs"}
	t := &table{ID: "suite-runs-table", Title: "Runs of the suite"}
	t.Columns = []column{{Name: "run"}, {Name: "kind"}, {Name: "status"}, {Name: "results directory", Wrap: true}, {Name: "error", Wrap: true}}
	for _, r := range s.Runs {
		dir := "-"
		if r.Dir != "" {
			dir = filepath.Base(r.Dir)
		}
		t.Rows = append(t.Rows, []cell{textCell(r.Name), textCell(r.Kind), statusCell(orDash(string(r.Status))), textCell(dir), textCell(orDash(r.Error))})
	}
	runs.add(t)
	var files []string
	for _, pattern := range []string{"compare-*.html", "ab-*.md"} {
		m, _ := filepath.Glob(filepath.Join(s.Path, pattern))
		for _, f := range m {
			files = append(files, filepath.Base(f))
		}
	}
	if len(files) > 0 {
		runs.add(&paragraph{Text: "Comparisons in this directory: " + strings.Join(files, ", ") + "."})
	}
	d.Sections = append(d.Sections, runs)
	d.Footer = "Rendered by dbio"
	if opts.Version != "" {
		d.Footer += " " + opts.Version
	}
	if opts.Now != nil {
		d.Footer += " on " + stamp(opts.Now())
	}
	d.Footer += " from the suite directory " + filepath.Base(s.Path) + " (" + results.SuiteFile + " and the results directories of its runs)."
	return out.write(d)
}

// StudiesMarkdown writes the studies page: one table of every suite's
// expected findings (study, finding, the seed's figure, dbio's figure and
// the verdict), the machine the suites ran on, and their directories.
func StudiesMarkdown(w io.Writer, suites []SuiteChecks) error {
	var b strings.Builder
	b.WriteString(markdownMark + "\n# Studies: the seed findings dbio reproduces\n\n")
	b.WriteString("Each example suite (examples/*.toml) names the findings of the study it reproduces, scaled down to one machine; " +
		"dbio checks them against the suite's recorded runs. A finding is reproduced when the runs differ in the study's direction " +
		"(and by its ratio, where one is given) beyond the noise between repeats; within noise when the repeats cannot tell the sides apart; " +
		"not measured when a run did not record the figure.\n\n")
	if h, ok := suitesHost(suites); ok {
		fmt.Fprintf(&b, "Measured on %s: %s, %s, %s, kernel %s.\n\n", mdCell(h.Hostname), plural(h.CPUs, "CPU", "CPUs"), mdCell(orDash(h.CPUModel)),
			units.FormatBytes(h.MemoryBytes)+" of memory", mdCell(h.Kernel))
	}
	b.WriteString("| study | finding | seed study | dbio | verdict |\n|---|---|---|---|---|\n")
	for _, sc := range suites {
		if len(sc.Checks) == 0 {
			fmt.Fprintf(&b, "| %s | (no expected finding) | - | - | - |\n", mdCell(sc.Suite.Name))
		}
		for _, c := range sc.Checks {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCell(sc.Suite.Name), mdCell(c.Finding), mdCell(orDash(c.Seed)), mdCell(ExpectFigure(c)), mdCell(c.Verdict.String()))
		}
	}
	b.WriteString("\nSuite directories: ")
	var dirs []string
	for _, sc := range suites {
		dirs = append(dirs, mdCell(filepath.Base(sc.Suite.Path)))
	}
	b.WriteString(strings.Join(dirs, ", ") + ".\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// suitesHost is the machine the suites' first recorded run measured.
func suitesHost(suites []SuiteChecks) (results.Host, bool) {
	for _, sc := range suites {
		for _, r := range sc.Suite.Runs {
			if r.Dir == "" {
				continue
			}
			if l, err := results.LoadSummary(r.Dir); err == nil && l.Run.Environment.Host.CPUs > 0 {
				return l.Run.Environment.Host, true
			}
		}
	}
	return results.Host{}, false
}

// LoadSuites reads suite directories and checks their expectations.
func LoadSuites(dirs []string) ([]SuiteChecks, error) {
	var out []SuiteChecks
	for _, d := range dirs {
		s, err := results.LoadSuite(d)
		if err != nil {
			return nil, err
		}
		out = append(out, CheckSuite(s))
	}
	return out, nil
}

// WriteStudies writes the studies page to path, refusing to replace a file
// dbio did not write.
func WriteStudies(path string, suites []SuiteChecks) error {
	if err := checkOwned(path, markdownMark); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := StudiesMarkdown(&b, suites); err != nil {
		return err
	}
	return writeShared(path, b.Bytes())
}
