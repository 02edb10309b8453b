// Package vusers runs virtual users: sessions that each repeat their
// workload's transactions until told to stop. A run's user steps, the
// background jobs beside them and a scenario's tenants all run through it,
// so that starting, losing and stopping a session means one thing everywhere.
package vusers

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Session is one virtual user's connection; workload.Session implements it.
type Session interface {
	// Next runs one transaction; an error means the session cannot go on.
	Next(ctx context.Context) error
	Close() error
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
}

// Group is the running sessions of one or more sets.
type Group struct {
	sessions []Session
	stop     atomic.Bool
	wg       sync.WaitGroup
	lost     chan error
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
	type member struct {
		s    Session
		lost func(error) error
	}
	var members []member
	g := &Group{}
	for _, set := range sets {
		for i := range set.N {
			s, err := set.Open(ctx, i)
			if err != nil {
				g.closeAll()
				return nil, err
			}
			g.sessions = append(g.sessions, s)
			members = append(members, member{s: s, lost: set.Lost})
		}
	}
	// One slot per session: each reports at most once, and never blocks.
	g.lost = make(chan error, len(members))
	for _, m := range members {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			for !g.stop.Load() && ctx.Err() == nil {
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

// Lost delivers the error of each session that could not go on.
func (g *Group) Lost() <-chan error { return g.lost }

// Stop tells every session to stop after the transaction in hand, waits for
// them (at most stopWait) and closes them.
func (g *Group) Stop() {
	g.stop.Store(true)
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
}
