package runner

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/workload"
)

// crowdWorkload is pure logic: its interactive sessions record a response
// time proportional to the number of users running (10 ms each), and two
// background sessions record batch transactions. Recorded times are
// synthetic, so the stepping decisions are deterministic.
type crowdWorkload struct {
	active     atomic.Int64
	background atomic.Int64
}

func (w *crowdWorkload) Name() string      { return "crowd" }
func (w *crowdWorkload) TxTypes() []string { return []string{"interactive", "batch"} }
func (w *crowdWorkload) Prepare(context.Context, engine.Instance, io.Writer) (workload.LoadStats, error) {
	return workload.LoadStats{}, nil
}
func (w *crowdWorkload) NewSession(_ context.Context, _ engine.Instance, _ int, rec *metrics.Recorder) (workload.Session, error) {
	w.active.Add(1)
	return &crowdSession{w: w, rec: rec, tx: 0}, nil
}
func (w *crowdWorkload) BackgroundSessions() int { return 2 }
func (w *crowdWorkload) NewBackgroundSession(_ context.Context, _ engine.Instance, _ int, rec *metrics.Recorder) (workload.Session, error) {
	w.background.Add(1)
	return &crowdSession{w: w, rec: rec, tx: 1}, nil
}
func (w *crowdWorkload) Check(context.Context, engine.Instance) ([]workload.CheckResult, error) {
	return []workload.CheckResult{{Name: "nothing to check", Passed: true}}, nil
}
func (w *crowdWorkload) FigureNames() []results.FigureName {
	return []results.FigureName{"interactive_mean"}
}
func (w *crowdWorkload) Figures(counts []metrics.TxCounts, d time.Duration) []results.Figure {
	if counts[0].Latency.TotalCount() == 0 {
		return nil
	}
	return []results.Figure{{Name: "interactive_mean", Value: counts[0].Latency.Mean() / 1000, Unit: "ms"}}
}

type crowdSession struct {
	w   *crowdWorkload
	rec *metrics.Recorder
	tx  int
}

func (s *crowdSession) Next(ctx context.Context) error {
	workload.Sleep(ctx, time.Millisecond)
	d := 5 * time.Millisecond
	if s.tx == 0 {
		d = time.Duration(s.w.active.Load()) * 10 * time.Millisecond
	}
	s.rec.Record(s.tx, d, metrics.Committed)
	return nil
}

func (s *crowdSession) Close() error {
	if s.tx == 0 {
		s.w.active.Add(-1)
	}
	return nil
}

func TestSteppingStopsAtTheCeiling(t *testing.T) {
	w := &crowdWorkload{}
	ceiling := analysis.Ceiling{Figure: "interactive_mean", Max: 25, Unit: "ms"}
	plan := Plan{Setup: Setup{
		Name: "crowd", Kind: "crowd", Engine: sqlite.Engine{},
		EngineOptions: engine.Options{Database: "crowd", Fresh: true}, DataPath: t.TempDir(), Workload: w,
		Tick: 10 * time.Millisecond, ResultsBase: t.TempDir(),
	}, Body: Steps{Users: []int{1, 2, 3, 4, 5}, Step: 60 * time.Millisecond, StopWhen: ceiling.Stop, Conclude: ceiling.Conclude}}
	out, err := Run(context.Background(), plan, Env{Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 3 || out.Stopped == "" {
		t.Fatalf("ran %d steps, stopped %q; want 3 steps, stopped at 3 users (30 ms > 25 ms)", len(out.Steps), out.Stopped)
	}
	if got := w.background.Load(); got != 2 {
		t.Errorf("%d background sessions started, want 2 for the whole run", got)
	}
	for _, s := range out.Steps {
		var batch int64
		for _, tx := range s.Transactions {
			if tx.Name == "batch" {
				batch = tx.Committed
			}
		}
		if batch == 0 {
			t.Errorf("step %s counted no background transactions", s.Name)
		}
	}
	want := map[results.FigureName]float64{results.FigureMaxUsersUnderCeiling: 2, results.FigureCeiling: 25, results.FigureCeilingReached: 1, "interactive_mean_at_max_users": 20}
	check := func(where string, figs []results.Figure) {
		t.Helper()
		got := map[results.FigureName]float64{}
		for _, f := range figs {
			got[f.Name] = f.Value
		}
		for name, v := range want {
			if g, ok := got[name]; !ok || g < v*0.99 || g > v*1.01 {
				t.Errorf("%s: %s = %v (present %v), want %v", where, name, g, ok, v)
			}
		}
	}
	check("outcome", out.Figures)
	b, err := os.ReadFile(filepath.Join(out.Dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run results.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	check("run.json", run.Figures)
	if len(run.Notes) == 0 || run.Status != results.StatusCompleted {
		t.Errorf("run.json: status %s, notes %q; want completed with the reason for stopping", run.Status, run.Notes)
	}
}

func TestCeilingNotReached(t *testing.T) {
	c := analysis.Ceiling{Figure: "p95", Max: 100, Unit: "ms"}
	steps := []results.Step{
		{Users: 1, Figures: []results.Figure{{Name: "p95", Value: 10}}},
		{Users: 6, Figures: []results.Figure{{Name: "p95", Value: 40}}},
	}
	for _, s := range steps {
		if stop, why := c.Stop(s); stop {
			t.Fatalf("stopped at %d users: %s", s.Users, why)
		}
	}
	if stop, _ := c.Stop(results.Step{Users: 11}); !stop {
		t.Error("a step without the figure did not stop the run")
	}
	figs := c.Conclude(steps, false)
	if figs[0].Value != 6 || figs[2].Value != 0 {
		t.Errorf("conclusion %+v, want 6 users and the ceiling not reached", figs)
	}
}
