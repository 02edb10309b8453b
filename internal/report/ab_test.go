package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/analysis"
	"dbio/internal/metrics"
	"dbio/internal/results"
)

// abRun builds a loaded run with one step per (users, tps, mean ms).
func abRun(steps [][3]float64, hitPerS, missPerS float64, maxUsers float64) *results.Loaded {
	l := &results.Loaded{}
	if maxUsers > 0 {
		l.Run.Figures = []results.Figure{{Name: results.FigureMaxUsersUnderCeiling, Value: maxUsers}}
	}
	for i, s := range steps {
		l.Steps = append(l.Steps, results.Step{
			Index: i, Users: int(s[0]), Status: results.StatusCompleted,
			Figures: []results.Figure{{Name: results.FigureTPS, Value: s[1]}},
			Total:   &metrics.TxSummary{Latency: metrics.Latency{Count: 100, MeanUS: s[2] * 1000, P95US: int64(s[2] * 2000)}},
			Telemetry: &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{
				"engine_cache_hit_reads_per_s":  {Mean: hitPerS, Samples: 1},
				"engine_cache_miss_reads_per_s": {Mean: missPerS, Samples: 1},
				"disk_vda_rps":                  {Mean: missPerS * 0.8, Samples: 1},
				"disk_vda_r_await_ms":           {Mean: 1.5, Samples: 1},
			}},
		})
	}
	return l
}

// TestABTablesMatchGolden renders the A/B study of an accelerator (38 vs 18
// TPS at 1 daemon, 26 vs 55 ms, two runs a side) as ab.md and the terminal
// table, compared with testdata/ab.golden.md.
func TestABTablesMatchGolden(t *testing.T) {
	a := []*results.Loaded{
		abRun([][3]float64{{1, 18, 55}, {6, 30, 80}, {11, 33, 120}}, 580, 420, 6),
		abRun([][3]float64{{1, 19, 53}, {6, 29, 82}, {11, 31, 125}}, 570, 430, 6),
	}
	b := []*results.Loaded{
		abRun([][3]float64{{1, 38, 26}, {6, 47, 40}, {11, 50, 60}, {16, 52, 90}}, 800, 200, 16),
		abRun([][3]float64{{1, 37, 27}, {6, 48, 41}, {11, 49, 62}, {16, 51, 95}}, 810, 190, 16),
	}
	b[1].Run.Figures = append(b[1].Run.Figures, results.Figure{Name: results.FigureCeilingReached, Value: 0})
	res, err := analysis.AB(a, b, "without", "with optimizer")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	ABMarkdown(&got, res)
	if err := ABText(&got, res); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "ab.golden.md")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("A/B tables differ from %s:\n%s", path, got.String())
	}
}

// TestWriteABWritesTheTableAndTheRecord writes ab.json and ab.md of two
// results directories and reads the record back.
func TestWriteABWritesTheTableAndTheRecord(t *testing.T) {
	dir := t.TempDir()
	var dirs []string
	for _, l := range []*results.Loaded{abRun([][3]float64{{1, 18, 55}}, 0, 0, 0), abRun([][3]float64{{1, 38, 26}}, 0, 0, 0)} {
		d, err := results.Create(dir, "side", results.Run{Kind: "as3ap"}, fixedClock())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range l.Steps {
			if err := d.WriteStep(s, nil); err != nil {
				t.Fatal(err)
			}
		}
		dirs = append(dirs, d.Path)
	}
	stem := filepath.Join(dir, "ab")
	res, err := WriteAB(stem, dirs[:1], dirs[1:], "A", "B")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 1 || res.Steps[0].Metrics[0].B.Mean != 38 {
		t.Errorf("comparison %+v", res)
	}
	for _, f := range []string{stem + ".json", stem + ".md"} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
}

// A figure that stays under its floor in every run (CPU idle on a saturated
// machine) gets a sentence, not a table of ratios of noise.
func TestCompareLeavesOutTablesUnderTheFloor(t *testing.T) {
	step := func(idle, iowait float64) *results.Step {
		return &results.Step{Telemetry: &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{
			"cpu_idle_pct": {Mean: idle, Samples: 10}, "cpu_iowait_pct": {Mean: iowait, Samples: 10}}}}
	}
	rows := []analysis.Row{
		{Label: "1", Steps: []*results.Step{step(0.0, 7.3), step(0.7, 0.2)}},
		{Label: "2", Steps: []*results.Step{step(0.4, 12), step(0.1, 9)}},
	}
	runs := []*runView{{Letter: "A"}, {Letter: "B"}}
	var idle, iowait analysis.Metric
	for _, m := range analysis.WorkloadMetrics(nil) {
		switch m.ID {
		case "cpu-idle":
			idle = m
		case "cpu-iowait":
			iowait = m
		}
	}
	sec := &section{}
	abTables(sec, "users", "step", []analysis.Metric{idle, iowait}, rows, runs, func(s string) string { return s })
	var tables, notes []string
	for _, b := range sec.Blocks {
		switch b := b.(type) {
		case *table:
			tables = append(tables, b.ID)
			// iowait is never called better or worse: it falls as surely
			// when another process takes the CPU as when storage gets faster.
			if b.ID == "cpu-iowait" && (b.Rows[0][4].Text != "-" || b.Rows[0][5].Text != "lower") {
				t.Errorf("iowait 7.3 → 0.2: ratio %q, change %q; want no ratio under the floor and the word lower", b.Rows[0][4].Text, b.Rows[0][5].Text)
			}
		case *paragraph:
			notes = append(notes, b.Text)
		}
	}
	if strings.Join(tables, ",") != "cpu-iowait" {
		t.Errorf("tables %v, want only cpu-iowait", tables)
	}
	if last := notes[len(notes)-1]; !strings.Contains(last, "CPU idle stayed under 1.0 % of the machine") {
		t.Errorf("no sentence for the idle table left out: %q", last)
	}
}

// With runs enough, a real difference is called with its interval and a
// repeat of the same configuration is not.
func TestABTextCallsOnlyRealDifferences(t *testing.T) {
	side := func(tps ...float64) []*results.Loaded {
		var out []*results.Loaded
		for _, v := range tps {
			out = append(out, abRun([][3]float64{{4, v, 1000 / v}}, 0, 0, 0))
		}
		return out
	}
	a := side(100, 104, 98, 102, 101)
	for _, c := range []struct {
		name string
		b    []*results.Loaded
		want string
	}{
		{"twice as fast", side(201, 196, 205, 199, 203), "+99 %, better  significant: 2.0x (95 % CI 1.9x–2.1x), p = 0.008"},
		// p is the exact two-sided U test: 222 of the 252 ways to split the ten values are as far from the centre.
		{"same", side(99, 103, 100, 105, 97), "no significant difference (p = 0.881)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := analysis.AB(a, c.b, "A", "B")
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := ABText(&out, res); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), c.want) {
				t.Errorf("terminal table does not say %q:\n%s", c.want, out.String())
			}
			if c.name == "same" && strings.Contains(out.String(), "better") {
				t.Errorf("a repeat of the same configuration is called better:\n%s", out.String())
			}
		})
	}
}

// An A/B study compares the waits the database timed itself and the pages
// its memory cap made it read again, with their verdicts, when both sides
// recorded them: a slower log (B) is worse for its sync wait, and a side
// whose cap never made it refault is better, said without a % against a
// rate under one page a second.
func TestABComparesDatabaseWaitsAndRefaults(t *testing.T) {
	side := func(syncMS, refaults float64) []*results.Loaded {
		var out []*results.Loaded
		for i := range 5 {
			l := abRun([][3]float64{{4, 100, 10}}, 0, 0, 0)
			m := l.Steps[0].Telemetry.Metrics
			jitter := 1 + float64(i)/100
			m["engine_db_sync_ops_per_s"] = results.TelemetryStat{Mean: 100, Samples: 10}
			m["engine_db_sync_wait_ms_per_s"] = results.TelemetryStat{Mean: 100 * syncMS * jitter, Samples: 10}
			m[results.MetricMemcgLimit] = results.TelemetryStat{Mean: 192, Max: 192, Samples: 10}
			m[results.MetricMemcgUsage] = results.TelemetryStat{Mean: 180, Max: 191, Samples: 10}
			m[results.MetricMemcgRefaults] = results.TelemetryStat{Mean: refaults * jitter, Samples: 10}
			out = append(out, l)
		}
		return out
	}
	res, err := analysis.AB(side(1, 400), side(3, 0), "nvme", "sata")
	if err != nil {
		t.Fatal(err)
	}
	var md, text bytes.Buffer
	ABMarkdown(&md, res)
	if err := ABText(&text, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## database-seen log sync latency (ms per operation)",
		"| 4 | 1.02 | 3.06 | +2.04 | +200 %, worse | significant: 3.0x",
		"## server memory refaults (pages per s)",
		"| 4 | 408 | 0.00 | -408 | -, better | significant",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("ab.md lacks %q:\n%s", want, md.String())
		}
	}
	for _, want := range []string{"database-seen log sync latency (ms per operation), average: A 1.02, B 3.06, +200 %, worse, significant",
		"server memory refaults (pages per s), average: A 408, B 0.00, -, better, significant"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the terminal's table lacks %q:\n%s", want, text.String())
		}
	}
	// A figure only one side recorded is not compared.
	res, err = analysis.AB(side(1, 400), []*results.Loaded{abRun([][3]float64{{4, 100, 10}}, 0, 0, 0)}, "capped", "not")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Steps[0].Metrics {
		if strings.Contains(m.Name, "database-seen") || strings.Contains(m.Name, "refaults") {
			t.Errorf("%s compared though one side did not record it", m.Name)
		}
	}
}

// TestABTextOneStep: with one step the terminal's A/B table groups
// thousands, says once that the runs are too few, and draws each side's
// runs on one axis, the lowest at its left end and the highest at its right.
func TestABTextOneStep(t *testing.T) {
	side := func(tps ...float64) []*results.Loaded {
		var out []*results.Loaded
		for _, v := range tps {
			out = append(out, abRun([][3]float64{{8, v, 10}}, 0, 0, 0))
		}
		return out
	}
	res, err := analysis.AB(side(37614, 37000), side(41900, 41020), "A", "B")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := ABText(&out, res); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"users   A TPS   B TPS  change  A mean ms  B mean ms  change",
		"    8  37,307  41,460",
		"verdict: too few runs to tell (4 a side needed)",
		"TPS of each run (8 users):\n  A |●",
		"\n    37,000", "41,900\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("terminal table lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "too few") != 1 {
		t.Errorf("too few runs said %d times, want once:\n%s", strings.Count(text, "too few"), text)
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "  B |") && !strings.HasSuffix(l, "●|") {
			t.Errorf("B's highest run is not at the axis' right end: %q", lines[i])
		}
	}
}
