// Package vusers runs virtual users: sessions that each repeat their
// workload's transactions until told to stop. A run's user steps, the
// background jobs beside them and a scenario's tenants all run through it,
// so that starting, losing and stopping a session means one thing everywhere.
//
// A set runs closed loop (each session sends its next transaction when the
// last one returns) or open loop: each session sends its transactions at
// the intended starts of an arrival schedule, waiting when early and
// starting at once when late, so that a stalled database cannot slow the
// offered load down.
//
// A set can also run as terminals behind a transaction monitor, as TPC-C's
// emulated users reach the database: many terminals, each keying and
// thinking on a timer and holding no connection, share the set's few
// sessions, borrowing one for each transaction they submit. A submitted
// transaction waits in line for a free session, and that wait is part of
// what its terminal sees.
package vusers

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"dbio/internal/arrival"
)

// Session is one virtual user's connection; workload.Session implements it.
type Session interface {
	// Next runs one transaction; an error means the session cannot go on.
	Next(ctx context.Context) error
	Close() error
}

// ThreadKeeper is implemented by a session that may run on one OS thread
// for its life: one that waits for its server on its goroutine's own thread,
// in blocking system calls or cgo calls (sqlclient's blocking sockets,
// SQLite), rather than parking in Go's network poller, and makes many such
// waits between two of its yields (workload.Yielder).
type ThreadKeeper interface {
	// KeepsThread reports whether the open session is one.
	KeepsThread() bool
}

// keepsThread says whether m is a session that keeps a thread, in a
// closed-loop set: one that Start runs on one thread for its life when the
// group has two or more of them.
//
// Why: such a goroutine leaves its thread only when it yields, and then
// another thread usually takes it, so a session's system calls wander over
// every thread the runtime has. Measured in the sysbench cross-check at four
// users on two CPUs (six rounds each; the median of the rounds' ratios and
// its 96.9 % interval), the client's CPU per transaction went from 1.12x
// sysbench's C client's (1.04 to 1.18, above it beyond the noise) to 0.87x
// (0.83 to 1.06) on PostgreSQL, and from 1.00x (0.93 to 1.12) to 0.83x (0.77
// to 0.91, below it) on MariaDB.
//
// The price is the yield: a pinned goroutine's yield hands its P to another
// thread and back, two wakeups where an unpinned one costs one. A lone
// session does not wander (no other session's thread is about to take it),
// so pinned it only pays: at one thread 1.02x (0.91 to 1.08) against 0.70x
// (0.64 to 0.80) unpinned on MariaDB, 0.99x (0.84 to 1.12) against 0.80x
// (0.79 to 0.97) on PostgreSQL. A session that yields at nearly every
// transaction (one round trip each, as TPC-C's procedure calls) pays at
// every one, and does not say it keeps a thread. A paced session or
// a monitor's connection sleeps between transactions, and waking a pinned
// goroutine costs the same handover each time: those are never pinned.
func (m *member) keepsThread() bool {
	k, ok := m.s.(ThreadKeeper)
	return ok && m.sched == nil && m.mon == nil && k.KeepsThread()
}

// Users is one set of sessions in a group: a step's users, a workload's
// background jobs, or one tenant's users.
type Users struct {
	// N is how many sessions the set has; Open opens session i (0-based).
	N    int
	Open func(ctx context.Context, i int) (Session, error)
	// Lost, when set, explains the error that ended one of the set's
	// sessions (naming its tenant, say); nil passes it on as it is.
	Lost func(error) error
	// Arrivals, when set, runs the set open loop.
	Arrivals *Arrivals
	// Terminals, when set, runs the set as terminals sharing its N
	// sessions, the monitor's pool of connections; it excludes Arrivals.
	Terminals *Terminals
	// InPoller marks a set whose sessions wait for their server through
	// Go's network poller (a workload's background jobs, see
	// sqlclient.Dialect.ForBackground): they park while they wait, need no
	// P of their own, and Start does not count them when it sets
	// GOMAXPROCS.
	InPoller bool
	// ShareProcs marks a set whose sessions share the Ps in force rather
	// than each keeping one: Start does not count them when it raises
	// GOMAXPROCS, so that sqlclient's Dialect.ForUser puts all but the
	// first GOMAXPROCS-1 of them in the network poller, where the Go
	// scheduler runs several sessions' answers on one thread between two
	// sleeps. A workload chooses it where it measured it lighter (TPC-C's
	// one round trip a transaction on a server engine).
	ShareProcs bool
}

// Terminals are paced users without a connection of their own.
type Terminals struct {
	// N is how many terminals share the set's sessions; Terminal returns
	// terminal i (0-based), once each, before any runs.
	N        int
	Terminal func(i int) Terminal
	// Begin, when set, is told before each transaction which session runs
	// it, when its terminal submitted it (Intended) and when a session took
	// it (Started). It runs on that session's goroutine, before Run.
	Begin func(session int, t arrival.Timing)
}

// Terminal is one terminal's state: a little struct, with no goroutine and
// no connection while it keys and thinks.
type Terminal interface {
	// Wait draws the terminal's next transaction and says how long after
	// its last one ended (after the set started, the first time) the
	// terminal submits it: its think time and its keying time.
	Wait() time.Duration
	// Run runs the submitted transaction on conn, one of the set's
	// sessions; an error means conn cannot go on.
	Run(ctx context.Context, conn Session) error
}

// Arrivals is the open-loop schedule of a set of sessions.
type Arrivals struct {
	// Plan is the offered load; its Users must be the set's N. Session i
	// follows the plan's schedule i, counted from the moment Start has
	// opened every session.
	Plan arrival.Plan
	// Begin, when set, is told before each transaction of session i when
	// it was meant to start and when it is sent (Timing's Ended is zero).
	// It runs on the session's goroutine, before the session's Next.
	Begin func(i int, t arrival.Timing)
}

// Group is the running sessions of one or more sets.
type Group struct {
	sessions []Session
	stop     atomic.Bool
	// stopped is closed by Stop: it wakes sessions waiting for their next
	// intended start.
	stopped  chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
	lost     chan error
	// restoreProcs puts GOMAXPROCS back once the sessions are closed.
	restoreProcs func()
}

// member is one session of a group, with its set's pacing.
type member struct {
	s     Session
	lost  func(error) error
	i     int
	pace  *Arrivals
	sched *arrival.Schedule
	mon   *monitor
}

// stopWait is how long Stop waits for the sessions to finish the
// transaction in hand: a crashed server can leave one hanging in a call
// that never returns.
const stopWait = 30 * time.Second

// Start opens every session of every set, then runs each one's
// transactions over and over until Stop is called or ctx ends. If a session
// cannot be opened, the ones already open are closed, none has run, and the
// error is Open's.
func Start(ctx context.Context, sets ...Users) (*Group, error) {
	var members []member
	var monitors []*monitor
	g := &Group{stopped: make(chan struct{})}
	n := 0
	for _, set := range sets {
		if err := set.check(); err != nil {
			return nil, err
		}
		if !set.InPoller && !set.ShareProcs {
			n += set.N
		}
	}
	// Before the sessions open: a session chooses its socket by the P
	// count it finds (sqlclient).
	g.restoreProcs = raiseProcs(n)
	for _, set := range sets {
		var mon *monitor
		if t := set.Terminals; t != nil {
			mon = newMonitor(*t)
			monitors = append(monitors, mon)
		}
		for i := range set.N {
			m := member{lost: set.Lost, i: i, pace: set.Arrivals, mon: mon}
			if m.pace != nil {
				sched, err := m.pace.Plan.Schedule(i)
				if err != nil {
					g.closeAll()
					return nil, err
				}
				m.sched = sched
			}
			s, err := set.Open(ctx, i)
			if err != nil {
				g.closeAll()
				return nil, err
			}
			m.s = s
			g.sessions = append(g.sessions, s)
			members = append(members, m)
		}
	}
	// Every schedule counts from here, once the sessions are open.
	base := time.Now()
	// One slot per session: each reports at most once, and never blocks.
	g.lost = make(chan error, len(members))
	for _, mon := range monitors {
		mon.start(base)
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			mon.schedule(ctx, g.stopped)
		}()
	}
	keepers := 0
	for _, m := range members {
		if m.keepsThread() {
			keepers++
		}
	}
	for _, m := range members {
		pin := keepers > 1 && m.keepsThread()
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			if pin {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			for !g.stop.Load() && ctx.Err() == nil {
				if m.mon != nil {
					// The session serves whichever terminal submitted first.
					if err := m.mon.serve(ctx, g.stopped, m.i, m.s); err != nil {
						if errors.Is(err, errStopped) {
							return
						}
						if m.lost != nil {
							err = m.lost(err)
						}
						g.lost <- err
						return
					}
					continue
				}
				if m.sched != nil {
					intended := base.Add(m.sched.Next())
					if !g.waitUntil(ctx, intended) {
						return
					}
					if m.pace.Begin != nil {
						m.pace.Begin(m.i, arrival.Timing{Intended: intended, Started: time.Now()})
					}
				}
				if err := m.s.Next(ctx); err != nil {
					if m.lost != nil {
						err = m.lost(err)
					}
					g.lost <- err
					return
				}
			}
		}()
	}
	return g, nil
}

// check refuses a set that cannot run, before any session opens.
func (set Users) check() error {
	if a := set.Arrivals; a != nil && a.Plan.Users != set.N {
		return fmt.Errorf("open-loop schedule for %d users given to a set of %d", a.Plan.Users, set.N)
	}
	if t := set.Terminals; t != nil {
		if set.Arrivals != nil {
			return errors.New("a set runs either open loop or as terminals, not both")
		}
		if t.N < 1 || set.N < 1 {
			return fmt.Errorf("%d terminals over %d sessions: a monitor needs at least one of each", t.N, set.N)
		}
	}
	return nil
}

// waitUntil waits for an intended start; a start already past returns at
// once. It reports false when the group stops or ctx ends first.
func (g *Group) waitUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return !g.stop.Load() && ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return !g.stop.Load()
	case <-g.stopped:
		return false
	case <-ctx.Done():
		return false
	}
}

// Lost delivers the error of each session that could not go on.
func (g *Group) Lost() <-chan error { return g.lost }

// Stop tells every session to stop after the transaction in hand (a
// session waiting for its next intended start stops waiting), waits for
// them (at most stopWait) and closes them.
func (g *Group) Stop() {
	g.stop.Store(true)
	g.stopOnce.Do(func() { close(g.stopped) })
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	timer := time.NewTimer(stopWait)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	}
	g.closeAll()
}

func (g *Group) closeAll() {
	for _, s := range g.sessions {
		s.Close()
	}
	g.restoreProcs()
}
