package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
)

// The repeat sets in testdata are real: dbio sysbench --workload
// oltp_write_only --table-size 1000 --users 1 --rampup 1s --step 2s
// --repeat 5 on SQLite, trimmed to repeats.json, run.json and
// steps/*/summary.json:
//
//	repeats-slow  on ext4 with --limit wiops=200
//	repeats-fast  on tmpfs

func TestRepeatReportMatchesGolden(t *testing.T) {
	dir := t.TempDir()
	out := Output{HTML: filepath.Join(dir, "report.html"), Markdown: filepath.Join(dir, "summary.md"), CSVDir: filepath.Join(dir, "csv")}
	if err := WriteRepeatReportTo(out, filepath.Join("testdata", "repeats-slow"), testOptions()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "repeats-slow", rendered(t, out))
}

func TestRepeatedComparisonMatchesGolden(t *testing.T) {
	var sets []Set
	for _, n := range []string{"repeats-slow", "repeats-fast"} {
		s, err := LoadSet(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, s)
	}
	dir := t.TempDir()
	out := Output{HTML: filepath.Join(dir, "compare.html"), Markdown: filepath.Join(dir, "compare.md"), CSVDir: filepath.Join(dir, "compare-csv")}
	findings, err := WriteRepeatedComparison(out, sets, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) == 0 || !strings.Contains(findings[0], "TPS +24,871 % (250x), better: significant, 95 % CI of the ratio 137x–357x, p = 0.008") {
		t.Errorf("findings %q", findings)
	}
	checkGolden(t, "compare-repeats", rendered(t, out))
	// Each set measured one step (as an A/B study of one step does): its
	// chart is a strip of each set's repeats, a dot per repeat, on a log
	// axis since the sets are 250x apart.
	page, err := os.ReadFile(out.HTML)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<figcaption>TPS of each repeat</figcaption>", `<g data-markers="A slow"`, `<g data-markers="B fast"`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("compare.html lacks %s", want)
		}
	}
	for _, side := range []string{"A slow", "B fast"} {
		i := bytes.Index(page, []byte(`<g data-markers="`+side+`"`))
		if i < 0 {
			continue
		}
		group := page[i:]
		group = group[:bytes.Index(group, []byte("</g>"))]
		if n := bytes.Count(group, []byte("<circle")); n != 5 {
			t.Errorf("%s has %d dots, want one per repeat (5)", side, n)
		}
	}
}

// The verdicts a comparison of repeats states, on sets built so that each
// has a known answer: the same repeats twice, too few repeats, and a set
// against itself shifted beyond its spread.
func TestRepeatedComparisonVerdicts(t *testing.T) {
	slow, err := LoadSet(filepath.Join("testdata", "repeats-slow"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		b    Set
		want string
		not  []string
	}{
		{"the same repeats", Set{Label: "again", Runs: slow.Runs}, "TPS 0.0 % (1.0x): no significant difference (p = 1.000)", []string{"better", "worse"}},
		{"two repeats", Set{Label: "two", Runs: slow.Runs[:2]}, "too few repeats to tell (4 a side needed)", []string{"better", "worse"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			findings, err := WriteRepeatedComparison(OutputAt(filepath.Join(dir, "c.html")), []Set{slow, c.b}, testOptions())
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Join(findings, "\n")
			if !strings.Contains(text, c.want) {
				t.Errorf("findings do not say %q:\n%s", c.want, text)
			}
			for _, n := range c.not {
				if strings.Contains(text, n) {
					t.Errorf("findings say %q:\n%s", n, text)
				}
			}
		})
	}
}

// Runs of one repeat set given one after the other compare as that set.
func TestGroupRepeatsMergesRunsOfOneSet(t *testing.T) {
	var sets []Set
	for _, set := range []string{"repeats-slow", "repeats-fast"} {
		m, err := results.ReadRepeatSet(filepath.Join("testdata", set))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range m.RunDirs(filepath.Join("testdata", set)) {
			s, err := LoadSet(d)
			if err != nil {
				t.Fatal(err)
			}
			sets = append(sets, s)
		}
	}
	got := GroupRepeats(sets)
	if len(got) != 2 || got[0].Label != "slow" || len(got[0].Runs) != 5 || got[1].Label != "fast" || len(got[1].Runs) != 5 || !AnyRepeated(got) {
		t.Errorf("grouped into %d sets: %+v", len(got), got)
	}
}

func TestRepeatTextStatesMedianIntervalAndSpread(t *testing.T) {
	var b bytes.Buffer
	if err := RepeatText(&b, filepath.Join("testdata", "repeats-fast"), testOptions()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"== dbio sysbench: 5 of 5 repeats completed, COMPLETED ==", "TPS (tx/s)", "12,532 [needs 6]", "6,891–17,870 (88 %)",
		"a 95 % confidence interval of the median needs 6 repeats", "differ by up to 88 % in TPS"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the summary does not say %q:\n%s", want, b.String())
		}
	}
	if _, err := os.Stat(filepath.Join("testdata", "repeats-fast", "report.html")); err == nil {
		t.Error("RepeatText wrote into testdata")
	}
}
