package workload

import (
	"runtime"
	"time"
)

// Yielder lets the Go runtime see that a session whose goroutine only ever
// waits in blocking system calls (sqlclient's blocking sockets) or cgo
// calls (SQLite) is not stuck. Such a goroutine never passes through the
// scheduler, and after 10 ms of that the runtime's monitor thread takes its
// P at its next call and then wakes every 20 µs; a yield resets that clock.
// A yield costs a wakeup of another thread (two, and a handover of the P,
// for a goroutine pinned to its thread: see vusers.ThreadKeeper), so it is
// made at most every yieldEvery, not every transaction. The zero value is
// ready to use.
type Yielder struct {
	last time.Time
}

// yieldEvery keeps a yield in every 10 ms the monitor looks at, with room
// for a transaction that runs a while.
const yieldEvery = 5 * time.Millisecond

// Yield yields if the last yield was yieldEvery or more before now, and
// reports whether it did.
func (y *Yielder) Yield(now time.Time) bool {
	if now.Sub(y.last) < yieldEvery {
		return false
	}
	runtime.Gosched()
	y.last = now
	return true
}
