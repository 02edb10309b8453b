package report

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"dbio/internal/results"
)

func TestTrendChange(t *testing.T) {
	base := TrendRun{ConfigKey: "a", Engine: "postgres", EngineVersion: "15.2", Kernel: "6.1", DBIOVersion: "v1", Settings: map[string]string{"work_mem": "4MB"}}
	with := func(f func(r *TrendRun)) TrendRun {
		r := base
		r.Settings = map[string]string{"work_mem": "4MB"}
		f(&r)
		return r
	}
	tests := []struct {
		name string
		b    TrendRun
		want []string
	}{
		{"nothing", with(func(r *TrendRun) {}), nil},
		{"kernel", with(func(r *TrendRun) { r.Kernel = "6.6" }), []string{"kernel 6.6"}},
		{"dbio and engine", with(func(r *TrendRun) { r.DBIOVersion, r.EngineVersion = "v2", "16.1" }), []string{"dbio v2", "postgres 16.1"}},
		{"another engine is a configuration", with(func(r *TrendRun) { r.Engine, r.EngineVersion, r.ConfigKey = "sqlite", "3.45", "b" }), []string{"configuration b"}},
		{"a setting", with(func(r *TrendRun) { r.ConfigKey, r.Settings["work_mem"] = "b", "64MB" }), []string{"work_mem=64MB"}},
		{"a setting added", with(func(r *TrendRun) { r.ConfigKey, r.Settings["limit"] = "b", "wiops=200" }), []string{"limit=wiops=200"}},
		{"a setting dropped", with(func(r *TrendRun) { r.ConfigKey, r.Settings = "b", nil }), []string{"work_mem=none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := trendChange(base, tt.b); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("changes %q, want %q", got, tt.want)
			}
		})
	}
}

// trendOf is the trend page of recorded runs, oldest first, as the
// history hands them over: every step's NOPM and p99 latency.
func trendOf(t *testing.T, names ...string) TrendPage {
	var p TrendPage
	for i, l := range load(t, names...) {
		r := l.Run
		tr := TrendRun{ID: r.ID, Started: r.Started, ConfigKey: r.Config.Workload + "-" + r.Config.Engine, Describe: r.Config.Workload,
			Kernel: r.Environment.Kernel, DBIOVersion: r.Environment.Versions["dbio"], Engine: r.Config.Engine}
		for _, e := range r.Engines {
			tr.EngineVersion = e.Version
		}
		p.Runs = append(p.Runs, tr)
		for _, st := range l.Steps {
			for _, f := range st.Figures {
				if f.Name == results.FigureNOPM || f.Name == results.FigureLatencyP99 {
					p.Points = append(p.Points, TrendPoint{Run: i, Figure: f.Name, Step: st.Name, Value: f.Value})
				}
			}
		}
	}
	return p
}

// TestTrendPageRendersInChromium writes the trend page of three TPC-C
// runs and loads it once in headless Chromium: no console message, every
// chart in the DOM with a drawn line for each configuration, the change
// of kernel marked, nothing fetched from elsewhere.
func TestTrendPageRendersInChromium(t *testing.T) {
	b := findChromium(t)
	p := trendOf(t, "tpcc-postgres", "tpcc-paced-sqlite", "tpcc-postgres-dbtime-tmpfs")
	if len(p.Points) < 6 {
		t.Fatalf("testdata: %d points", len(p.Points))
	}
	page := filepath.Join(b.dir, "trend.html")
	if err := WriteTrendPage(page, p, fixedClock()); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, html)
	doc := trendDocument(p, fixedClock())
	charts := doc.charts()
	// NOPM and p99 at each of the steps the runs had (users-1, -2, -4).
	if len(charts) != 6 {
		t.Errorf("%d charts, want 6 (two figures at three steps)", len(charts))
	}
	for _, c := range charts {
		if strings.HasPrefix(c.Title, "NOPM at users-1") && len(c.Series) != 2 {
			t.Errorf("chart %s: %d lines, want one per configuration (2)", c.ID, len(c.Series))
		}
	}

	dom, console := b.run(page, "--dump-dom")
	for _, c := range console {
		t.Errorf("console message while loading the trend page: %s", c)
	}
	checkChartsInDOM(t, dom, charts)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?s)data-chart="trend-nopm-users-1".*?<line class="mark" data-mark="kernel 6\.18\.44-fc-v782`),              // the kernel's change marked
		regexp.MustCompile(`(?s)<table.*?>20261122-003401-pg<.*?>20261125-154527-tpcc-sqlite<.*?>20261128-042239-tpcc-postgres-tmpfs<`), // runs oldest first
	} {
		if !want.Match(dom) {
			t.Errorf("the rendered page does not show %s", want)
		}
	}

	// A file dbio did not write is never replaced by the page.
	foreign := filepath.Join(b.dir, "theirs.html")
	if err := os.WriteFile(foreign, []byte("<html>mine</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteTrendPage(foreign, p, time.Now()); err == nil {
		t.Error("the trend page replaced a file dbio did not write")
	}
	if err := WriteTrendPage(page, p, time.Now()); err != nil {
		t.Errorf("the page could not be written again: %v", err)
	}
}
