package vusers

import "runtime"

// SessionsPerCPU bounds how many of a group's sessions get a P of their own
// (see procsFor): past it, the P count would grow without bound with the
// users, for sessions that mostly wait anyway.
const SessionsPerCPU = 8

// procsFor is the GOMAXPROCS under which each of n sessions keeps a P of its
// own, with one more for the rest of the process (timers, the sampler, the
// progress line): never fewer than procs, the count already in force, and
// for at most SessionsPerCPU sessions per CPU.
//
// Why: a session on a blocking socket (sqlclient's, the first GOMAXPROCS-1
// of a set) or in a cgo call (SQLite) keeps its P while it waits for the
// server, as a C client's thread waits in the kernel. With fewer Ps than
// such sessions, one whose answer came back finds its P taken and waits for
// another to be handed over by the runtime's monitor, which polls every
// 20 µs meanwhile: measured in the sysbench cross-check at four users on two
// CPUs, 1.3 to 1.6 times sysbench's client CPU a transaction, against about
// 1.1 with a P each. A P is not a thread: the kernel still shares the CPUs
// among the sessions' threads as it shares them among a C client's.
func procsFor(n, procs, cpus int) int {
	return max(procs, min(n, SessionsPerCPU*cpus)+1)
}

// raiseProcs sets GOMAXPROCS for n sessions (procsFor) and returns what puts
// it back, which leaves alone a count something else set in between.
func raiseProcs(n int) (restore func()) {
	prev := runtime.GOMAXPROCS(0)
	want := procsFor(n, prev, runtime.NumCPU())
	if want == prev {
		return func() {}
	}
	runtime.GOMAXPROCS(want)
	return func() {
		if runtime.GOMAXPROCS(0) == want {
			runtime.GOMAXPROCS(prev)
		}
	}
}
