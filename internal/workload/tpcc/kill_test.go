package tpcc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/workload"
)

// startRecorder passes Start through to an engine and keeps the instance, so
// that a test can reach the server's processes. The instance is returned as
// it is, with all its optional interfaces.
type startRecorder struct {
	engine.Engine
	mu   sync.Mutex
	inst engine.Instance
}

func (r *startRecorder) Start(ctx context.Context, p engine.Placement, o engine.Options) (engine.Instance, error) {
	inst, err := r.Engine.Start(ctx, p, o)
	r.mu.Lock()
	r.inst = inst
	r.mu.Unlock()
	return inst, err
}

func (r *startRecorder) pids() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.inst.(engine.Processes); ok {
		return p.PIDs()
	}
	return nil
}

// TestServerKilledMidRun kills the database server during the second step of
// a run: the run must stop at once, keep the first step, write the second as
// failed, and say that the server exited.
func TestServerKilledMidRun(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e testEngine) {
		if e.managed == nil {
			t.Skip("an embedded engine has no server to kill")
		}
		eng, opts := e.managed()
		rec := &startRecorder{Engine: eng}
		base := t.TempDir()
		plan := runner.Plan{Setup: runner.Setup{
			Name: "killed", Kind: "tpcc", Engine: rec,
			EngineOptions: opts, DataPath: reachableDir(t),
			Workload: New(Config{Warehouses: 1, Loading: workload.Loading{Seed: 1}}), Tick: 100 * time.Millisecond,
			ResultsBase: base,
		}, Body: runner.Steps{Users: []int{1, 2, 2}, Step: 2 * time.Second}}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		killed := make(chan []int, 1)
		go func() {
			defer close(killed)
			// Kill the server once the second step has measured a tick.
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for ctx.Err() == nil && !measured(base, "users-2") {
				<-tick.C
			}
			pids := rec.pids()
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			killed <- pids
		}()
		// The run stops on the server's exit, not on a timeout: a run that
		// waited out ctx would end with its deadline instead.
		out, err := runner.Run(ctx, plan, runner.Env{Out: io.Discard})
		pids := <-killed
		if len(pids) == 0 {
			t.Fatalf("no server process to kill (run ended with %v)", err)
		}
		if !errors.Is(err, runner.ErrEngineExited) || !strings.Contains(err.Error(), "exited") {
			t.Errorf("run error = %v, want one naming the server's exit", err)
		}
		if out.Status != results.StatusFailed {
			t.Errorf("status %s, want failed", out.Status)
		}
		l, lerr := results.Load(out.Dir)
		if lerr != nil {
			t.Fatal(lerr)
		}
		if l.Run.Status != results.StatusFailed || !strings.Contains(l.Run.Error, "exited") {
			t.Errorf("run.json: status %s, error %q; want failed, naming the server's exit", l.Run.Status, l.Run.Error)
		}
		if len(l.Steps) != 2 {
			t.Fatalf("%d steps kept, want the finished one and the one cut short", len(l.Steps))
		}
		first, second := l.Steps[0], l.Steps[1]
		if first.Status != results.StatusCompleted || first.Total == nil || first.Total.Committed == 0 {
			t.Errorf("first step: status %s, totals %+v; want completed with transactions", first.Status, first.Total)
		}
		if second.Status != results.StatusFailed || !strings.Contains(second.Error, "exited") {
			t.Errorf("second step: status %s, error %q; want failed, naming the server's exit", second.Status, second.Error)
		}
		// The server's workers follow it out.
		for _, pid := range pids {
			for end := time.Now().Add(time.Minute); alive(pid); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(end) {
					t.Fatalf("server process %d still runs a minute after the server was killed", pid)
				}
			}
		}
	})
}

// measured says whether the run under base has written a series.csv row of
// step's measurement.
func measured(base, step string) bool {
	m, _ := filepath.Glob(filepath.Join(base, "*", "series.csv"))
	if len(m) != 1 {
		return false
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		return false
	}
	return strings.Contains(string(b), ","+step+",measure,")
}

// alive says whether process pid exists and has not ended (a zombie has).
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
