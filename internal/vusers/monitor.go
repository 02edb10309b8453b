package vusers

import (
	"context"
	"errors"
	"sync"
	"time"

	"dbio/internal/arrival"
)

// errStopped ends a session's wait for a submitted transaction when the
// group stops or its context ends.
var errStopped = errors.New("stopped")

// monitor is a transaction monitor in front of a set's sessions. Every
// terminal is in one place at a time: in the heap of terminals keying or
// thinking, ordered by when each submits; in the line of submitted
// transactions waiting for a session; or with the session running its
// transaction. One scheduler goroutine moves terminals from the heap to the
// line; the set's sessions take from the line in order of submission.
type monitor struct {
	t     Terminals
	terms []Terminal
	// base is the moment every submission time counts from (monotonic).
	base time.Time

	mu  sync.Mutex
	due dueHeap
	// wake tells the scheduler that the heap's first terminal changed.
	wake chan struct{}
	// line holds each terminal at most once, so sends never block.
	line chan submission
}

// submission is a terminal and when it submits (or submitted) its
// transaction, in nanoseconds after the monitor's base: 16 bytes per
// terminal, in the heap or the line.
type submission struct {
	at   int64
	term int32
}

func newMonitor(t Terminals) *monitor {
	m := &monitor{t: t, terms: make([]Terminal, t.N), wake: make(chan struct{}, 1), line: make(chan submission, t.N)}
	for i := range t.N {
		m.terms[i] = t.Terminal(i)
	}
	return m
}

// start puts every terminal in the heap, due after its first wait.
func (m *monitor) start(base time.Time) {
	m.base = base
	m.due = make(dueHeap, 0, len(m.terms))
	for i, term := range m.terms {
		m.due.push(submission{at: int64(term.Wait()), term: int32(i)})
	}
}

// schedule moves each terminal to the line when its submission time comes,
// until the group stops or ctx ends.
func (m *monitor) schedule(ctx context.Context, stopped <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		m.mu.Lock()
		now := int64(time.Since(m.base))
		for len(m.due) > 0 && m.due[0].at <= now {
			m.line <- m.due.pop()
		}
		wait := time.Hour
		if len(m.due) > 0 {
			wait = time.Duration(m.due[0].at - now)
		}
		m.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-m.wake:
		case <-stopped:
			return
		case <-ctx.Done():
			return
		}
	}
}

// serve runs the transaction first in line on conn, session i, and puts
// its terminal back in the heap to key and think. It returns errStopped
// when the group stops or ctx ends before a transaction comes, and the
// terminal's error when conn cannot go on.
func (m *monitor) serve(ctx context.Context, stopped <-chan struct{}, i int, conn Session) error {
	var s submission
	select {
	case s = <-m.line:
	case <-stopped:
		return errStopped
	case <-ctx.Done():
		return errStopped
	}
	term := m.terms[s.term]
	if m.t.Begin != nil {
		m.t.Begin(i, arrival.Timing{Intended: m.base.Add(time.Duration(s.at)), Started: time.Now()})
	}
	err := term.Run(ctx, conn)
	next := submission{at: int64(time.Since(m.base) + term.Wait()), term: s.term}
	m.mu.Lock()
	m.due.push(next)
	first := m.due[0] == next
	m.mu.Unlock()
	if first {
		select {
		case m.wake <- struct{}{}:
		default: // the scheduler is already told
		}
	}
	return err
}

// dueHeap is a binary min-heap of submissions by time, written out rather
// than through container/heap so that a push or pop allocates nothing.
type dueHeap []submission

func (h *dueHeap) push(s submission) {
	*h = append(*h, s)
	q := *h
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if q[parent].at <= q[i].at {
			break
		}
		q[parent], q[i] = q[i], q[parent]
		i = parent
	}
}

func (h *dueHeap) pop() submission {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < len(q) && q[l].at < q[small].at {
			small = l
		}
		if r < len(q) && q[r].at < q[small].at {
			small = r
		}
		if small == i {
			break
		}
		q[i], q[small] = q[small], q[i]
		i = small
	}
	*h = q
	return top
}
