package vusers

import (
	"context"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"dbio/internal/arrival"
)

// threadSession records the threads its transactions ran on, and yields
// after each, as a session on a blocking socket does now and then.
type threadSession struct {
	waits bool
	// after is closed once the session has run enough transactions.
	after chan struct{}
	mu    sync.Mutex
	tids  map[int]bool
	runs  int
}

const threadRuns = 300

func (s *threadSession) KeepsThread() bool { return s.waits }

func (s *threadSession) Next(ctx context.Context) error {
	s.mu.Lock()
	s.tids[syscall.Gettid()] = true
	s.runs++
	if s.runs == threadRuns {
		close(s.after)
	}
	s.mu.Unlock()
	runtime.Gosched()
	return nil
}

func (s *threadSession) Close() error { return nil }

// TestThreadKeepersKeepTheirThread checks that closed-loop sessions that
// keep a thread run every transaction on one thread each, yields and all:
// unpinned, a yielding goroutine is soon taken by another thread.
func TestThreadKeepersKeepTheirThread(t *testing.T) {
	const n = 4
	var sessions []*threadSession
	g, err := Start(context.Background(), Users{N: n, Open: func(ctx context.Context, i int) (Session, error) {
		s := &threadSession{waits: true, after: make(chan struct{}), tids: map[int]bool{}}
		sessions = append(sessions, s)
		return s, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		<-s.after
	}
	g.Stop()
	for i, s := range sessions {
		if len(s.tids) != 1 {
			t.Errorf("session %d ran its %d transactions on %d threads, want one", i, s.runs, len(s.tids))
		}
	}
}

func TestKeepsThread(t *testing.T) {
	sched, err := arrival.Plan{Users: 1, Rate: 1}.Schedule(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		m    member
		want bool
	}{
		{"keeps a thread, closed loop", member{s: &threadSession{waits: true}}, true},
		{"waits in the poller: keeps none", member{s: &threadSession{waits: false}}, false},
		{"says nothing of threads", member{s: idleSession{}}, false},
		{"open loop: sleeps until its next start", member{s: &threadSession{waits: true}, sched: sched}, false},
		{"a monitor's connection: waits for terminals", member{s: &threadSession{waits: true}, mon: &monitor{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.keepsThread(); got != tc.want {
				t.Errorf("keepsThread() = %v, want %v", got, tc.want)
			}
		})
	}
}
