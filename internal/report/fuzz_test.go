package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
)

// FuzzReport renders a results directory whose run.json, one step's
// summary.json and series.csv come from the fuzzer: `dbio report` of a
// damaged directory either refuses it with an error or writes a whole
// report, and never panics; its charts draw no NaN, infinite or far-off
// coordinate, and its summary.md takes no markup from the data. Seeds are
// the results directories of testdata, so `go test` runs them as ordinary
// tests, and the hostile run of hostile_test.go (names full of markup, and
// figures of 1.7e308, 1e-300 and 0).
func FuzzReport(f *testing.F) {
	runs, _ := filepath.Glob(filepath.Join("testdata", "*", "run.json"))
	if len(runs) == 0 {
		f.Fatal("no results directories in testdata")
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			return nil // a tenants run has no series.csv of its own: its hosts' are under hosts/
		}
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	for _, r := range runs {
		dir := filepath.Dir(r)
		steps, _ := filepath.Glob(filepath.Join(dir, "steps", "*", "summary.json"))
		for _, s := range steps[:min(len(steps), 2)] {
			f.Add(read(r), read(s), read(filepath.Join(dir, "series.csv")))
		}
	}
	hostile := hostileRun(f)
	extreme := hostileFigures(f, 1.7e308, 1e-300)
	hostileJSON, err := json.Marshal(hostile.Run)
	if err != nil {
		f.Fatal(err)
	}
	for i := range extreme.Steps[:min(len(extreme.Steps), 2)] {
		stepJSON, err := json.Marshal(extreme.Steps[i])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(hostileJSON, stepJSON, read(filepath.Join("testdata", "quick-tmpfs", "series.csv")))
	}
	f.Fuzz(func(t *testing.T, run, step, series []byte) {
		dir := t.TempDir()
		for rel, b := range map[string][]byte{"run.json": run, "steps/00-a/summary.json": step, "series.csv": series} {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l, err := results.Load(dir)
		if err != nil {
			return
		}
		out := OutputIn(t.TempDir())
		if err := WriteReport(out, []*results.Loaded{l}, Options{}); err != nil {
			return
		}
		html, err := os.ReadFile(out.HTML)
		if err != nil || !strings.Contains(string(html), "</html>") {
			t.Errorf("report.html incomplete (%v)", err)
		}
		checkSVGs(t, string(html))
		md, err := os.ReadFile(out.Markdown)
		if err != nil {
			t.Fatalf("no summary.md: %v", err)
		}
		checkMarkdownInert(t, string(md))
	})
}
