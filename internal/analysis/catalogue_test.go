package analysis

import (
	"testing"
	"time"

	"dbio/internal/results"
)

// TestDrawnFiguresAreCatalogued checks the figures analysis writes itself:
// a stepping run's figures under its ceiling, and a fleet step's figures
// with each host's part, all as the catalogue defines them.
func TestDrawnFiguresAreCatalogued(t *testing.T) {
	c := Ceiling{Figure: results.FigureInteractiveLatencyP95, Max: 100, Unit: "ms", Stat: "p95"}
	step := func(users int, p95 float64) results.Step {
		return results.Step{Users: users, Figures: []results.Figure{results.FigureInteractiveLatencyP95.With(p95)}}
	}
	run := c.Conclude([]results.Step{step(1, 50), step(6, 150)}, true)
	if err := results.CheckFigures(results.InRun, run...); err != nil || len(run) != 4 {
		t.Errorf("a ceiling's %d figures: %v", len(run), err)
	}

	t0 := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	hosts := []TenantHost{
		{Host: "h1", Seconds: tenantSeconds(t0, 0, 100, 200), Latency: latencies(t, 10, 1000)},
		{Host: "h2", Seconds: tenantSeconds(t0, 0, 10, 20), Latency: latencies(t, 10, 2000)},
	}
	steps := []results.Step{{Figures: []results.Figure{results.FigureTPM.With(1), results.FigureNOPM.With(1), results.FigureTPS.With(1)}}}
	rec, figs, _, err := TenantFleet(hosts, TenantFigures(steps))
	if err != nil {
		t.Fatal(err)
	}
	if err := results.CheckFigures(results.InStep, figs...); err != nil || len(figs) != 4 {
		t.Errorf("a fleet step's %d figures: %v", len(figs), err)
	}
	for _, h := range rec.Hosts {
		if err := results.CheckFigures(results.InStep, h.Figures...); err != nil {
			t.Errorf("host %s: %v", h.Host, err)
		}
	}
}

// TestStepFigureMetricsReadTheCatalogue compares the steps of a backup and
// of a noisy phase by what the catalogue says of their figures: which way
// is better and in what words, the rates first.
func TestStepFigureMetricsReadTheCatalogue(t *testing.T) {
	steps := []results.Step{
		{Kind: "backup", Figures: []results.Figure{results.FigureCopySeconds.With(3), results.FigureCopyMB.With(30), results.FigureCopyMBPerSec.With(10),
			results.DeviceLatency("vda", "p99").With(2), {Name: "old_figure", Value: 1, Unit: "things"}}},
		{Kind: "noisy-quiet", Figures: []results.Figure{results.FigureTenants.With(2), results.FigureTPMTotal.With(600), results.FigureErrorsPerSec.With(1)}},
	}
	want := []struct {
		id, title, unit string
		better          results.Better
	}{
		{"mb_per_s", "MB/s", "MB/s", results.HigherBetter},
		{"tpm_total", "total TPM", "tx/min", results.HigherBetter},
		{"seconds", "duration", "s", results.LowerBetter},
		{"mb", "size", "MB", results.NeitherBetter},
		{"vda_latency_p99", "vda p99 latency", "ms", results.LowerBetter},
		// A figure of an older dbio keeps its name and unit as recorded.
		{"old_figure", "old_figure", "things", results.NeitherBetter},
		{"tenants", "tenants", "", results.NeitherBetter},
		// A rate of errors is no rate of work: it is better lower.
		{"errors_per_s", "errors per second", "errors/s", results.LowerBetter},
	}
	got := StepFigureMetrics(steps)
	if len(got) != len(want) {
		t.Fatalf("%d metrics, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if m := got[i]; m.ID != w.id || m.Title != w.title || m.Unit != w.unit || m.Better != w.better {
			t.Errorf("metric %d: %s %q %q %d, want %+v", i, m.ID, m.Title, m.Unit, m.Better, w)
		}
	}
}
