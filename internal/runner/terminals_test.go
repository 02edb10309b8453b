package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/metrics"
	"dbio/internal/progress"
	"dbio/internal/results"
	"dbio/internal/workload"
)

// deskWorkload is pure logic: terminals that wait 2 ms between
// transactions and share the monitor's connections, each transaction
// recorded as taking 1 ms on the connection that ran it.
type deskWorkload struct {
	crowdWorkload
	pool                  int
	connections, sessions atomic.Int64
}

func (w *deskWorkload) NewSession(context.Context, engine.Instance, int, *metrics.Recorder) (workload.Session, error) {
	w.sessions.Add(1)
	return nil, errors.New("a step of terminals opens pooled connections, not sessions")
}
func (w *deskWorkload) BackgroundSessions() int { return 0 }
func (w *deskWorkload) Pool(int) int            { return w.pool }
func (w *deskWorkload) TerminalRate() float64   { return 1 / 0.003 }
func (w *deskWorkload) NewTerminal(int) (workload.Terminal, error) {
	return deskTerminal{}, nil
}
func (w *deskWorkload) NewConnection(_ context.Context, _ engine.Instance, _ int, rec *metrics.Recorder) (workload.Session, error) {
	w.connections.Add(1)
	return &deskConn{rec: rec}, nil
}

type deskTerminal struct{}

func (deskTerminal) Wait() time.Duration { return 2 * time.Millisecond }
func (deskTerminal) Run(ctx context.Context, c workload.Session) error {
	workload.Sleep(ctx, time.Millisecond)
	c.(*deskConn).rec.Record(0, time.Millisecond, metrics.Committed)
	return nil
}

type deskConn struct{ rec *metrics.Recorder }

func (*deskConn) Next(context.Context) error { return errors.New("runs terminals' transactions") }
func (*deskConn) Close() error               { return nil }

// A step of terminals runs over the workload's pool, and records what the
// pool was and each transaction's time from its submission.
func TestStepOfTerminals(t *testing.T) {
	w := &deskWorkload{pool: 2}
	plan := Plan{Setup: Setup{
		Name: "desk", Kind: "desk", Engine: sqlite.Engine{},
		EngineOptions: engine.Options{Database: "desk", Fresh: true}, DataPath: t.TempDir(), Workload: w,
		Tick: 50 * time.Millisecond, ResultsBase: t.TempDir(),
	}, Body: Steps{Users: []int{20}, Step: 200 * time.Millisecond}}
	var shown bytes.Buffer
	out, err := Run(context.Background(), plan, Env{Out: io.Discard, Progress: progress.New(&shown)})
	if err != nil {
		t.Fatal(err)
	}
	// The step is named by its terminals, in the results and on screen,
	// not by the users it would have been without a pool.
	if name := out.Steps[0].Name; name != "terminals-20" {
		t.Errorf("step named %q, want terminals-20", name)
	}
	if dirs, _ := filepath.Glob(filepath.Join(out.Dir, "steps", "*-terminals-20")); len(dirs) != 1 {
		t.Errorf("no step directory named by its terminals in %s", out.Dir)
	}
	if !strings.Contains(shown.String(), "terminals-20 (1/1):") {
		t.Errorf("the terminal showed %q, want the step's result line to count terminals", shown.String())
	}
	if n := w.connections.Load(); n != 2 || w.sessions.Load() != 0 {
		t.Errorf("%d pooled connections and %d sessions opened, want 2 and none", n, w.sessions.Load())
	}
	s := out.Steps[0]
	p := s.Pacing
	if p == nil || p.Arrival != results.ArrivalTerminals || p.Connections != 2 || p.Transactions == 0 {
		t.Fatalf("step pacing %+v, want terminals over 2 connections with transactions", p)
	}
	if s.Total == nil || s.Total.Corrected == nil || s.Total.Corrected.Count != s.Total.Latency.Count {
		t.Errorf("every transaction needs its time from submission beside its service time: %+v", s.Total)
	}
	if !strings.Contains(strings.Join(s.Notes, " "), "20 terminals shared 2 connections") {
		t.Errorf("notes %q do not say how the terminals shared the pool", s.Notes)
	}
}
