package report

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// hostileText is what a results directory someone handed over, or a user's
// flags, may put in any name: Markdown headings, quotes, lists, a table's
// pipe, raw HTML, a javascript: link, a code span, and line breaks.
const hostileText = "# x | <script>alert(1)</script> [x](javascript:alert(1)) ![i](http://e/i.png) `tick` *em* _u_ ~~s~~ \\ &lt;\n> quote\n- item\n1. one\n    code"

// hostileRun is quick-tmpfs with every name it records replaced by
// hostileText or by a spreadsheet formula.
func hostileRun(t testing.TB) *results.Loaded {
	t.Helper()
	l := load(t, "quick-tmpfs")[0]
	l.Path = "/results/" + hostileText
	l.Run.ID = "20261122-001403-" + hostileText
	l.Run.Error = hostileText
	l.Run.Status = results.StatusFailed
	l.Run.Warnings = []string{hostileText, "- a list item", "1. an ordered item", "=1+2", "+cmd|' /C calc'!A0"}
	env := &l.Run.Environment
	env.Hostname = hostileText
	env.CPUModel = `=HYPERLINK("http://evil","x")`
	env.Kernel = "@SUM(1+1)*cmd|' /C calc'!A0"
	for i := range env.Targets {
		env.Targets[i].Path = "/srv/" + hostileText
	}
	engines := append([]results.EngineInfo(nil), l.Run.Engines...)
	for i := range engines {
		engines[i].Version = hostileText
		settings := map[string]string{"-x": "\t=cmd", "journal_mode": "+1", "mode": "-cmd", "at": "@x", "cr": "\r=1"}
		for k, v := range engines[i].Settings {
			settings[k] = v
		}
		engines[i].Settings = settings
	}
	l.Run.Engines = engines
	checks := append([]results.Check(nil), l.Run.Checks...)
	if len(checks) > 0 {
		checks[0].Name = hostileText
	}
	l.Run.Checks = checks
	return l
}

// TestHostileNamesMatchGolden renders a run whose every name is hostile:
// the report's golden files show each escaped, and summary.md keeps its
// structure (no heading, quote, list, HTML, link or code span comes from
// the data).
func TestHostileNamesMatchGolden(t *testing.T) {
	dir := t.TempDir()
	out := Output{HTML: filepath.Join(dir, "report.html"), Markdown: filepath.Join(dir, "summary.md"), CSVDir: filepath.Join(dir, "csv")}
	if err := WriteReport(out, []*results.Loaded{hostileRun(t)}, testOptions()); err != nil {
		t.Fatal(err)
	}
	got := rendered(t, out)
	checkMarkdownInert(t, string(got["summary.md"]))
	checkGolden(t, "hostile-names", got)
}

// TestHostileComparisonMarkdownIsInert compares the hostile run with
// itself: the comparison's title, run names and side-by-side tables.
func TestHostileComparisonMarkdownIsInert(t *testing.T) {
	out := OutputAt(filepath.Join(t.TempDir(), "c.html"))
	a, b := hostileRun(t), hostileRun(t)
	b.Run.ID += " B"
	if _, err := WriteComparison(out, []*results.Loaded{a, b}, testOptions()); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(out.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	checkMarkdownInert(t, string(md))
}

// TestABMarkdownEscapesLabels: an A/B study's labels come from the user's
// flags and end up in ab.md's title, sentences and tables.
func TestABMarkdownEscapesLabels(t *testing.T) {
	a := []*results.Loaded{abRun([][3]float64{{1, 18, 55}}, 580, 420, 6)}
	b := []*results.Loaded{abRun([][3]float64{{1, 38, 26}}, 800, 200, 16)}
	res, err := analysis.AB(a, b, hostileText, "| B |")
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	ABMarkdown(&md, res)
	checkMarkdownInert(t, markdownMark+"\n"+md.String())
}

// TestStudiesMarkdownEscapesNames: a suite's name and its host's come from
// the suite directory.
func TestStudiesMarkdownEscapesNames(t *testing.T) {
	var md bytes.Buffer
	s := results.Suite{Name: hostileText, Path: "/suites/" + hostileText}
	if err := StudiesMarkdown(&md, []SuiteChecks{{Suite: &s}}); err != nil {
		t.Fatal(err)
	}
	checkMarkdownInert(t, markdownMark+"\n"+strings.TrimPrefix(md.String(), markdownMark+"\n"))
}

var (
	ourLink        = regexp.MustCompile(`\[((?:[^\[\]\\]|\\.)*)\]\(([^()\s:]*)\)`)
	unescapedPipe  = regexp.MustCompile(`(^|[^\\])(\\\\)*\|`)
	blockStart     = regexp.MustCompile(`^(#{1,6}(\s|$)|>|[-+*](\s|$)|\d{1,9}[.)](\s|$)|\s{4}|\t|[-*_=]{3,}\s*$)`)
	headingOrList  = regexp.MustCompile(`^(#{1,6} |- |\| )`)
	hostileLineEnd = regexp.MustCompile(`^(> quote|- item|1\. one|\s+code)`)
)

// checkMarkdownInert fails where summary.md would render something the
// report did not write: raw HTML, a link or image other than the report's
// own links to its files, a code span, emphasis from data, a line of data
// that starts a block (heading, quote, list, code), or a table row with
// more cells than its header.
func checkMarkdownInert(t *testing.T, md string) {
	t.Helper()
	lines := strings.Split(md, "\n")
	if lines[0] != markdownMark {
		t.Errorf("first line %q, want the mark", lines[0])
	}
	cells := -1
	for i, line := range lines[1:] {
		n := i + 2
		if strings.Contains(line, "<") {
			t.Errorf("line %d has raw HTML: %s", n, clip(line))
		}
		rest := ourLink.ReplaceAllString(line, "")
		for _, c := range []string{"`", "[", "]", "~~"} {
			if unescaped(rest, c) {
				t.Errorf("line %d has an unescaped %q: %s", n, c, clip(line))
			}
		}
		if hostileLineEnd.MatchString(line) {
			t.Errorf("line %d starts with a line of the data: %s", n, clip(line))
		}
		// What follows the report's own marker ("# ", "- ", "| ") must not
		// start a block of its own.
		if m := headingOrList.FindString(line); m != "" {
			text := strings.TrimPrefix(line, m)
			text = strings.TrimPrefix(text, "**") // a fact's bold label
			if m != "| " && blockStart.MatchString(text) {
				t.Errorf("line %d: the text after %q starts a block: %s", n, m, clip(line))
			}
		} else if line != "" && !strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "> **") && line != "---" && blockStart.MatchString(line) {
			t.Errorf("line %d starts a block: %s", n, clip(line))
		}
		if strings.HasPrefix(line, "|") {
			k := len(unescapedPipe.FindAllString(line, -1))
			if cells >= 0 && k != cells {
				t.Errorf("line %d has %d cell separators, its table's header %d: %s", n, k, cells, clip(line))
			}
			if cells < 0 {
				cells = k
			}
		} else {
			cells = -1
		}
	}
}

// unescaped says s holds c not preceded by a backslash.
func unescaped(s, c string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], c)
		if j < 0 {
			return false
		}
		at := i + j
		backslashes := 0
		for k := at - 1; k >= 0 && s[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return true
		}
		i = at + len(c)
	}
}

// TestCSVNeutralisesFormulas: a text cell a spreadsheet would run as a
// formula gets a leading quote; numbers, negative ones included, stay
// numbers.
func TestCSVNeutralisesFormulas(t *testing.T) {
	cells := []struct{ raw, want string }{
		{"=1+2", "'=1+2"},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-cmd", "'-cmd"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"-", "'-"},
		{"-3.5", "-3.5"},
		{"+2", "+2"},
		{"-1.25e+10", "-1.25e+10"},
		{"1e-05", "1e-05"},
		{"-inf", "'-inf"},
		{"-0x1p3", "'-0x1p3"},
		{"4k-randread", "4k-randread"},
	}
	tb := &table{ID: "t", Columns: []column{{Name: "=header"}}}
	for _, c := range cells {
		tb.Rows = append(tb.Rows, []cell{{Text: c.raw, Raw: c.raw}})
	}
	var b bytes.Buffer
	if err := writeCSV(&b, tb); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(cells)+1 {
		t.Fatalf("%d records read back, want %d", len(recs), len(cells)+1)
	}
	if recs[0][0] != "'=header" {
		t.Errorf("header %q, want %q", recs[0][0], "'=header")
	}
	for i, c := range cells {
		if got := recs[i+1][0]; got != c.want {
			t.Errorf("cell %q exported as %q, want %q", c.raw, got, c.want)
		}
	}
}

// TestReportCSVsHaveNoFormulas: every CSV of the hostile run's report.
func TestReportCSVsHaveNoFormulas(t *testing.T) {
	out := OutputIn(t.TempDir())
	if err := WriteReport(out, []*results.Loaded{hostileRun(t)}, testOptions()); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(out.CSVDir, "*.csv"))
	if len(files) == 0 {
		t.Fatal("no CSV written")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, rec := range recs {
			for _, v := range rec {
				if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) && !spreadsheetNumber.MatchString(v) {
					t.Errorf("%s: cell %q would run as a formula", filepath.Base(f), v)
				}
			}
		}
	}
}

// spreadsheetNumber is a cell a spreadsheet reads as a plain number.
var spreadsheetNumber = regexp.MustCompile(`^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$`)

// TestMarkdownEscape: each construct a name could start is written as text.
func TestMarkdownEscape(t *testing.T) {
	cases := []struct{ in, escape, cell string }{
		{"plain text 4k-randread 1.5 ms", "plain text 4k-randread 1.5 ms", "plain text 4k-randread 1.5 ms"},
		{"# heading", `\# heading`, "# heading"},
		{"run ##", `run \#\#`, "run ##"},
		{"> quote", "&gt; quote", "> quote"},
		{"- item", `\- item`, "- item"},
		{"-", `\-`, "-"},
		{"---", `\---`, "---"},
		{"+ item", `\+ item`, "+ item"},
		{"-3.5 %", "-3.5 %", "-3.5 %"},
		{"12. item", `12\. item`, "12. item"},
		{"1) item", `1\) item`, "1) item"},
		{"a | b", `a \| b`, `a \| b`},
		{"<script>x</script>", "&lt;script>x&lt;/script>", "&lt;script>x&lt;/script>"},
		{"[x](javascript:alert(1))", `\[x\](javascript:alert(1))`, `\[x\](javascript:alert(1))`},
		{"`code` *em* _u_ ~~s~~ $m$", "\\`code\\` \\*em\\* \\_u\\_ \\~\\~s\\~\\~ \\$m\\$", "\\`code\\` \\*em\\* \\_u\\_ \\~\\~s\\~\\~ \\$m\\$"},
		{`a\b &amp;`, `a\\b &amp;amp;`, `a\\b &amp;amp;`},
		{"line\nbreak\r\nand\ttab\u2028sep", "line break  and tab sep", "line break  and tab sep"},
		{"    indented", "indented", "indented"},
	}
	for _, c := range cases {
		if got := mdEscape(c.in); got != c.escape {
			t.Errorf("mdEscape(%q) = %q, want %q", c.in, got, c.escape)
		}
		if got := mdCell(c.in); got != c.cell {
			t.Errorf("mdCell(%q) = %q, want %q", c.in, got, c.cell)
		}
	}
	for rel, want := range map[string]string{
		"csv/fio-points.csv":        "[csv/fio-points.csv](csv/fio-points.csv)",
		"my report (1)/a b.csv":     "[my report (1)/a b.csv](my%20report%20%281%29/a%20b.csv)",
		"javascript:alert(1)/x.csv": "[javascript:alert(1)/x.csv](./javascript:alert%281%29/x.csv)",
		"c_d/[x].csv":               `[c\_d/\[x\].csv](c_d/%5Bx%5D.csv)`,
	} {
		if got := mdLink(rel); got != want {
			t.Errorf("mdLink(%q) = %q, want %q", rel, got, want)
		}
	}
}

// TestComparisonHeadlinesKeepNamesOnOneLine: a run's name heads the lines
// a comparison prints on the terminal; a line break in it (an id from a
// results directory someone handed over) must not start a line of its own.
func TestComparisonHeadlinesKeepNamesOnOneLine(t *testing.T) {
	out := OutputAt(filepath.Join(t.TempDir(), "c.html"))
	a, b := load(t, "quick-tmpfs")[0], load(t, "quick-ext4")[0]
	a.Run.ID += "\nFAKE: B is 10x faster, beyond noise"
	b.Run.ID += "\n\tFAKE: verdict reproduced"
	lines, err := WriteComparison(out, []*results.Loaded{a, b}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(out.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range append(lines, string(md)) {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "FAKE") {
				t.Errorf("a run's name started a line: %q", line)
			}
		}
	}
	if !strings.Contains(strings.Join(lines, "\n"), `\nFAKE: B is 10x faster`) {
		t.Errorf("the name's line break is not shown as an escape in %q", lines)
	}
}
