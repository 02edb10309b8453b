package vusers

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"dbio/internal/arrival"
)

// fakeTerminal waits wait between transactions; run is its transaction.
type fakeTerminal struct {
	wait time.Duration
	run  func(ctx context.Context, conn Session) error
}

func (f *fakeTerminal) Wait() time.Duration { return f.wait }
func (f *fakeTerminal) Run(ctx context.Context, conn Session) error {
	return f.run(ctx, conn)
}

// pooledConn is a session of a pooled set: its Next is never called.
type pooledConn struct{ closed atomic.Bool }

func (c *pooledConn) Next(context.Context) error {
	return errors.New("a pooled session runs terminals' transactions, not its own")
}
func (c *pooledConn) Close() error { c.closed.Store(true); return nil }

func openPooled(conns *[]*pooledConn) func(context.Context, int) (Session, error) {
	return func(context.Context, int) (Session, error) {
		c := &pooledConn{}
		*conns = append(*conns, c)
		return c, nil
	}
}

// Many terminals over few sessions: each terminal runs on one session at a
// time, every one is served, and no more sessions run than the pool has.
func TestTerminalsShareThePool(t *testing.T) {
	const terminals, pool, each = 40, 3, 3
	var running, most atomic.Int64
	var mu sync.Mutex
	busy := map[int]bool{}
	served := make([]int, terminals)
	done := make(chan struct{})
	left := terminals
	term := func(i int) Terminal {
		return &fakeTerminal{wait: time.Millisecond, run: func(ctx context.Context, conn Session) error {
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			mu.Lock()
			if busy[i] {
				t.Errorf("terminal %d runs twice at once", i)
			}
			busy[i] = true
			mu.Unlock()
			mu.Lock()
			busy[i] = false
			served[i]++
			if served[i] == each {
				if left--; left == 0 {
					close(done)
				}
			}
			mu.Unlock()
			return nil
		}}
	}
	var conns []*pooledConn
	g, err := Start(context.Background(), Users{N: pool, Open: openPooled(&conns), Terminals: &Terminals{N: terminals, Terminal: term}})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	g.Stop()
	if most.Load() > pool {
		t.Errorf("%d transactions ran at once over a pool of %d", most.Load(), pool)
	}
	for i, c := range conns {
		if !c.closed.Load() {
			t.Errorf("session %d not closed", i)
		}
	}
}

// With one session, a transaction submitted while another runs waits for
// it: its start comes at least the other's service time after its
// submission, which is what its terminal's response time must include.
func TestTerminalsWaitForASession(t *testing.T) {
	const service = 50 * time.Millisecond
	var mu sync.Mutex
	var timings []arrival.Timing
	done := make(chan struct{})
	term := func(i int) Terminal {
		return &fakeTerminal{wait: 0, run: func(ctx context.Context, conn Session) error {
			mu.Lock()
			n := len(timings)
			mu.Unlock()
			if n == 2 {
				close(done)
			}
			if n <= 2 {
				// The fake's service time: the other terminal, submitted at
				// the same moment, waits behind it.
				time.Sleep(service)
			}
			return nil
		}}
	}
	begin := func(_ int, tm arrival.Timing) {
		mu.Lock()
		timings = append(timings, tm)
		mu.Unlock()
	}
	var conns []*pooledConn
	g, err := Start(context.Background(), Users{N: 1, Open: openPooled(&conns),
		Terminals: &Terminals{N: 2, Terminal: term, Begin: begin}})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	g.Stop()
	mu.Lock()
	defer mu.Unlock()
	if waited := timings[1].Started.Sub(timings[1].Intended); waited < service {
		t.Errorf("the second transaction started %v after its submission, want at least the first's service time %v", waited, service)
	}
	if timings[0].Intended != timings[1].Intended {
		t.Errorf("both terminals submit at the start: %v and %v", timings[0].Intended, timings[1].Intended)
	}
}

// A session's error stops the set and is reported as lost.
func TestTerminalsLoseASession(t *testing.T) {
	term := func(i int) Terminal {
		return &fakeTerminal{run: func(context.Context, Session) error { return errors.New("connection reset") }}
	}
	var conns []*pooledConn
	g, err := Start(context.Background(), Users{N: 2, Open: openPooled(&conns), Terminals: &Terminals{N: 5, Terminal: term}})
	if err != nil {
		t.Fatal(err)
	}
	if got := <-g.Lost(); got.Error() != "connection reset" {
		t.Errorf("lost %v", got)
	}
	g.Stop()
}

func TestTerminalsRefuseAnEmptyPool(t *testing.T) {
	term := func(int) Terminal { return &fakeTerminal{} }
	var conns []*pooledConn
	if _, err := Start(context.Background(), Users{N: 0, Open: openPooled(&conns), Terminals: &Terminals{N: 5, Terminal: term}}); err == nil {
		t.Error("a pool of no session was accepted")
	}
}

func TestDueHeapOrders(t *testing.T) {
	var h dueHeap
	for i, at := range []int64{5, 1, 9, 3, 3, 7, 0} {
		h.push(submission{at: at, term: int32(i)})
	}
	var got []int64
	for len(h) > 0 {
		got = append(got, h.pop().at)
	}
	want := []int64{0, 1, 3, 3, 5, 7, 9}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("popped %v, want %v", got, want)
		}
	}
}
