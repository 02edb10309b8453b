package vusers

import (
	"context"
	"sync"
	"testing"
	"time"

	"dbio/internal/arrival"
)

// stallSession runs instantly except its stallAt-th transaction, which
// lasts stall: the database stalled while the session held it.
type stallSession struct {
	n       int
	stallAt int
	stall   time.Duration
}

func (s *stallSession) Next(ctx context.Context) error {
	s.n++
	if s.n == s.stallAt {
		// The stall's own duration is what the test measures.
		t := time.NewTimer(s.stall)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return nil
}

func (s *stallSession) Close() error { return nil }

// timings collects what Begin is told, per session, and signals once a
// session has begun want transactions.
type timings struct {
	mu   sync.Mutex
	by   map[int][]arrival.Timing
	want int
	done chan struct{}
	once sync.Once
}

func (tm *timings) begin(i int, t arrival.Timing) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.by[i] = append(tm.by[i], t)
	if len(tm.by[i]) >= tm.want {
		tm.once.Do(func() { close(tm.done) })
	}
}

// An open-loop session sends each transaction at its intended start, never
// before; after a stall it sends the ones whose starts passed during the
// stall at once, late, instead of skipping them, and the schedule itself
// does not shift.
func TestArrivalsKeepTheScheduleThroughAStall(t *testing.T) {
	const rate = 1000 // one start per millisecond for one user
	stall := 50 * time.Millisecond
	tm := &timings{by: map[int][]arrival.Timing{}, want: 120, done: make(chan struct{})}
	s := &stallSession{stallAt: 5, stall: stall}
	g, err := Start(context.Background(), Users{
		N:        1,
		Open:     func(context.Context, int) (Session, error) { return s, nil },
		Arrivals: &Arrivals{Plan: arrival.Plan{Rate: rate, Users: 1}, Begin: tm.begin},
	})
	if err != nil {
		t.Fatal(err)
	}
	<-tm.done
	g.Stop()
	got := tm.by[0]
	base := got[0].Intended
	late := 0
	for n, tg := range got {
		if want := base.Add(time.Duration(n) * time.Millisecond); !tg.Intended.Equal(want) {
			t.Fatalf("transaction %d intended at +%v, want +%v: the schedule moved", n, tg.Intended.Sub(base), want.Sub(base))
		}
		if tg.Started.Before(tg.Intended) {
			t.Errorf("transaction %d sent %v before its intended start", n, tg.Intended.Sub(tg.Started))
		}
		if tg.Late(stall / 2) {
			late++
		}
	}
	// The starts that fell inside the stall (about 50 of them) were sent
	// late, one after the other, rather than dropped.
	if late < 10 {
		t.Errorf("%d transactions started more than %v late after a %v stall; want the ones scheduled during it", late, stall/2, stall)
	}
	if d := got[5].Delay(); d < stall/2 {
		t.Errorf("the transaction after the stall started %v late, want about %v", d, stall)
	}
}

// Users paced over a total rate follow their own phases of one schedule.
func TestArrivalsSpreadUsers(t *testing.T) {
	tm := &timings{by: map[int][]arrival.Timing{}, want: 10, done: make(chan struct{})}
	g, err := Start(context.Background(), Users{
		N:        4,
		Open:     func(context.Context, int) (Session, error) { return &stallSession{}, nil },
		Arrivals: &Arrivals{Plan: arrival.Plan{Rate: 400, Users: 4}, Begin: tm.begin},
	})
	if err != nil {
		t.Fatal(err)
	}
	<-tm.done
	g.Stop()
	tm.mu.Lock()
	defer tm.mu.Unlock()
	for i := range 4 {
		ts := tm.by[i]
		for n := 1; n < len(ts); n++ {
			if gap := ts[n].Intended.Sub(ts[n-1].Intended); gap != 10*time.Millisecond {
				t.Fatalf("user %d: starts %d and %d %v apart, want 10ms", i, n-1, n, gap)
			}
		}
		if len(ts) > 0 && len(tm.by[0]) > 0 {
			if off := ts[0].Intended.Sub(tm.by[0][0].Intended); off != time.Duration(i)*2500*time.Microsecond {
				t.Errorf("user %d starts %v after user 0, want %v", i, off, time.Duration(i)*2500*time.Microsecond)
			}
		}
	}
}

// Stop wakes a session waiting for a start far ahead instead of waiting
// out the time Stop grants a transaction in hand.
func TestStopWakesAWaitingSession(t *testing.T) {
	begun := make(chan struct{}, 1)
	g, err := Start(context.Background(), Users{
		N:    1,
		Open: func(context.Context, int) (Session, error) { return &stallSession{}, nil },
		// One start now, the next in 1,000 s.
		Arrivals: &Arrivals{Plan: arrival.Plan{Rate: 0.001, Users: 1}, Begin: func(int, arrival.Timing) {
			select {
			case begun <- struct{}{}:
			default:
			}
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	<-begun
	stopped := make(chan struct{})
	go func() { g.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(stopWait / 2):
		t.Fatal("Stop waited for a session sleeping until its next start")
	}
}

// A schedule for another number of users than the set's is refused.
func TestArrivalsMustMatchTheSet(t *testing.T) {
	_, err := Start(context.Background(), Users{
		N:        2,
		Open:     func(context.Context, int) (Session, error) { return &stallSession{}, nil },
		Arrivals: &Arrivals{Plan: arrival.Plan{Rate: 10, Users: 3}},
	})
	if err == nil {
		t.Fatal("a schedule for 3 users ran a set of 2")
	}
}
