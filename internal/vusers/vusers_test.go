package vusers

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// fakeSession counts its transactions and fails on the one numbered failAt (0: never).
type fakeSession struct {
	next    atomic.Int64
	closed  atomic.Bool
	failAt  int64
	started chan struct{}
}

func (f *fakeSession) Next(ctx context.Context) error {
	n := f.next.Add(1)
	if n == 1 {
		close(f.started)
	}
	if f.failAt > 0 && n >= f.failAt {
		return fmt.Errorf("lost after %d", n)
	}
	return nil
}

func (f *fakeSession) Close() error { f.closed.Store(true); return nil }

func TestGroup(t *testing.T) {
	errOpen := errors.New("refused")
	tests := []struct {
		name string
		// sizes are the sets' sizes; openFails the index (over all sets) whose Open fails, -1 for none.
		sizes     []int
		openFails int
		// failAt makes the first session fail on its failAt-th transaction.
		failAt   int64
		wantLost string
	}{
		{name: "users run until stopped", sizes: []int{3}, openFails: -1},
		{name: "several sets run together", sizes: []int{2, 1, 0, 2}, openFails: -1},
		{name: "a session that cannot go on is reported by its set", sizes: []int{2}, openFails: -1, failAt: 3, wantLost: "set 0: lost after 3"},
		{name: "an open that fails closes the sessions opened", sizes: []int{2, 2}, openFails: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opened []*fakeSession
			var sets []Users
			for si, n := range tc.sizes {
				sets = append(sets, Users{
					N: n,
					Open: func(ctx context.Context, i int) (Session, error) {
						if len(opened) == tc.openFails {
							return nil, errOpen
						}
						f := &fakeSession{started: make(chan struct{})}
						if len(opened) == 0 {
							f.failAt = tc.failAt
						}
						opened = append(opened, f)
						return f, nil
					},
					Lost: func(err error) error { return fmt.Errorf("set %d: %w", si, err) },
				})
			}
			g, err := Start(context.Background(), sets...)
			if tc.openFails >= 0 {
				if !errors.Is(err, errOpen) {
					t.Fatalf("Start: %v, want %v", err, errOpen)
				}
				for i, f := range opened {
					if !f.closed.Load() || f.next.Load() != 0 {
						t.Errorf("session %d: closed %v after %d transactions, want closed before any", i, f.closed.Load(), f.next.Load())
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range opened {
				<-f.started
			}
			if tc.wantLost != "" {
				if got := (<-g.Lost()).Error(); got != tc.wantLost {
					t.Errorf("lost %q, want %q", got, tc.wantLost)
				}
			}
			g.Stop()
			for i, f := range opened {
				if !f.closed.Load() {
					t.Errorf("session %d not closed", i)
				}
			}
			select {
			case err := <-g.Lost():
				if tc.wantLost == "" {
					t.Errorf("lost %v, want none", err)
				}
			default:
			}
		})
	}
}
