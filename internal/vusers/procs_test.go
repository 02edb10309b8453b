package vusers

import (
	"context"
	"runtime"
	"testing"
)

func TestProcsFor(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		n, procs, cpus, want int
	}{
		{"one session keeps the count", 1, 2, 2, 2},
		{"a P each and one more", 4, 2, 2, 5},
		{"never fewer than in force", 4, 16, 16, 16},
		{"at most SessionsPerCPU a CPU", 1000, 2, 2, 2*SessionsPerCPU + 1},
		{"no sessions", 0, 2, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := procsFor(tc.n, tc.procs, tc.cpus); got != tc.want {
				t.Errorf("procsFor(%d, %d, %d) = %d, want %d", tc.n, tc.procs, tc.cpus, got, tc.want)
			}
		})
	}
}

// TestStartGivesEachSessionAP checks that a group's sessions open under a
// P count that has one for each of them, and that Stop puts it back.
func TestStartGivesEachSessionAP(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	n := before + 2
	seen := make(chan int, n)
	g, err := Start(context.Background(), Users{N: n, Open: func(ctx context.Context, i int) (Session, error) {
		seen <- runtime.GOMAXPROCS(0)
		return idleSession{}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	g.Stop()
	close(seen)
	want := procsFor(n, before, runtime.NumCPU())
	for p := range seen {
		if p != want {
			t.Errorf("a session opened under GOMAXPROCS=%d, want %d", p, want)
		}
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS is %d after Stop, want %d as before", after, before)
	}

	// Sessions in the poller get no P, and sessions that share the Ps in
	// force none of their own: the count stays as it was.
	for _, set := range []Users{{N: n, InPoller: true}, {N: n, ShareProcs: true}} {
		set.Open = func(ctx context.Context, i int) (Session, error) {
			if p := runtime.GOMAXPROCS(0); p != before {
				t.Errorf("a session of %+v opened under GOMAXPROCS=%d, want %d as before", set, p, before)
			}
			return idleSession{}, nil
		}
		g, err = Start(context.Background(), set)
		if err != nil {
			t.Fatal(err)
		}
		g.Stop()
	}
}

// idleSession's transactions do nothing.
type idleSession struct{}

func (idleSession) Next(ctx context.Context) error { return nil }
func (idleSession) Close() error                   { return nil }
