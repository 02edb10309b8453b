package results

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/metrics"
)

func TestDirRoundTrip(t *testing.T) {
	base := t.TempDir()
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cfg := RunConfig{Engine: "sqlite", Users: []int{1}, Workload: "tpcc", Settings: Settings{{"warehouses", json.Number("2")}}}
	d, err := Create(base, "tpcc sqlite/x", Run{Kind: "tpcc", Config: cfg}, start)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(d.Path) != "20261122-100000-tpcc-sqlite-x" {
		t.Errorf("directory %s", d.Path)
	}
	// A second run in the same second gets its own directory.
	d2, err := Create(base, "tpcc sqlite/x", Run{Kind: "tpcc"}, start)
	if err != nil || d2.Path == d.Path {
		t.Fatalf("second directory %v %v", d2, err)
	}
	l, err := Load(d.Path)
	if err != nil || l.Run.Status != StatusRunning || l.Run.SchemaVersion != SchemaVersion {
		t.Fatalf("a run in progress must load: %+v %v", l, err)
	}

	h := metrics.NewHistogram()
	for v := int64(1); v <= 1000; v++ {
		h.RecordValue(v)
	}
	step := Step{Index: 0, Name: "users-1", Kind: "tpcc", Users: 1, Started: start, Ended: start.Add(time.Minute),
		Figures: []Figure{{Name: "tpm", Value: 1234, Unit: "tx/min"}}, Status: StatusCompleted}
	if err := d.WriteStep(step, map[string]*hdrhistogram.Histogram{"new_order": h}); err != nil {
		t.Fatal(err)
	}
	back, err := ReadHistogram(filepath.Join(d.Path, "steps", "00-users-1", "latency-new_order.hdr"))
	if err != nil || back.TotalCount() != 1000 || back.ValueAtQuantile(50) != h.ValueAtQuantile(50) {
		t.Fatalf("histogram round trip: %v count %d", err, back.TotalCount())
	}
	corrected := metrics.NewHistogram()
	corrected.RecordValue(5000)
	open := Step{Index: 1, Name: "rate-20", Kind: "tpcc", Started: start, Ended: start.Add(time.Minute), Status: StatusCompleted}
	if err := d.WriteStep(open, map[string]*hdrhistogram.Histogram{"new_order": h, "new_order" + CorrectedSuffix: corrected}); err != nil {
		t.Fatal(err)
	}
	byType, err := StepHistograms(StepPath(d.Path, open.Index, open.Name))
	if err != nil || len(byType) != 2 || byType["new_order"].TotalCount() != 1000 || byType["new_order-corrected"].Max() != corrected.Max() {
		t.Fatalf("a step's histograms by type: %v, %d types", err, len(byType))
	}

	// The series widens when a new column appears, keeping earlier rows.
	d.AppendSeries(SeriesRow{Time: start.Add(time.Second), Step: "users-1", Phase: "measure", Values: []Sample{{"tpm", 1000}}})
	d.AppendSeries(SeriesRow{Time: start.Add(2 * time.Second), Step: "users-1", Phase: "measure", Values: []Sample{{"tpm", 1100}, {"cpu_idle_pct", 40}}})
	d.AppendSeries(SeriesRow{Time: start.Add(3 * time.Second), Step: "users-1", Phase: "measure", Values: []Sample{{"cpu_idle_pct", math.NaN()}}})
	if err := d.Finish(StatusInterrupted, os.ErrDeadlineExceeded, start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	l, err = Load(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Run.Status != StatusInterrupted || !strings.Contains(l.Run.Error, "timeout") || l.Run.Ended.IsZero() {
		t.Errorf("run %+v", l.Run)
	}
	if v, ok := l.Steps[0].Figure("tpm"); !ok || v != 1234 {
		t.Errorf("step figures %+v", l.Steps)
	}
	s := l.Series
	if len(s.Rows) != 3 || s.Column("tpm") != 0 || s.Column("cpu_idle_pct") != 1 {
		t.Fatalf("series columns %v rows %d", s.Columns, len(s.Rows))
	}
	if !math.IsNaN(s.Rows[0].Values[1]) || s.Rows[1].Values[1] != 40 || !math.IsNaN(s.Rows[2].Values[0]) {
		t.Errorf("series values %+v", s.Rows)
	}
	if s.Rows[1].ElapsedS != 2 {
		t.Errorf("elapsed %v", s.Rows[1].ElapsedS)
	}
}

func TestLoadRefusesOtherDirectories(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a dbio results directory") {
		t.Errorf("Load of an empty directory: %v", err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"schema_version": 99}`), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "newer dbio") {
		t.Errorf("Load of a newer schema: %v", err)
	}
}

func TestSeriesSurvivesATornLastLine(t *testing.T) {
	d, err := Create(t.TempDir(), "x", Run{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	d.AppendSeries(SeriesRow{Time: time.Now(), Step: "s", Values: []Sample{{"a", 1}}})
	f, _ := os.OpenFile(filepath.Join(d.Path, "series.csv"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("2026-11-22T10:00:0")
	f.Close()
	l, err := Load(d.Path)
	if err != nil || len(l.Series.Rows) != 1 {
		t.Fatalf("torn line: %v, %d rows", err, len(l.Series.Rows))
	}
}

// TestDiscardRemovesOnlyTheRun: a refused run's directory goes with all it
// holds, and a link in it is removed without touching what it points to.
func TestDiscardRemovesOnlyTheRun(t *testing.T) {
	base, outside := t.TempDir(), t.TempDir()
	kept := filepath.Join(outside, "kept")
	if err := os.WriteFile(kept, []byte("not dbio's"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Create(base, "refused", Run{Kind: "sysbench"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.StepDir(1, "users-1"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(d.Path, "link")); err != nil {
		t.Fatal(err)
	}
	if err := d.Discard(); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(base); err != nil || len(ents) != 0 {
		t.Errorf("results base holds %v after Discard (%v)", ents, err)
	}
	if b, err := os.ReadFile(kept); err != nil || string(b) != "not dbio's" {
		t.Errorf("the file the link pointed to: %q, %v", b, err)
	}
}
