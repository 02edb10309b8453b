package results

// CPUSplit is whose the machine's CPUs were during a step: the step means
// of the per-second shares, in % of all CPUs. Server, DBIO and Other are
// the busy time by whom it was used (Other: every process that is neither
// dbio nor the database server, and the kernel's own threads; an external
// server on this machine, whose processes dbio does not know, too); Idle,
// IOWait and Steal the rest. They add up to 100 but for the seconds in
// which Other was clamped at zero (the process and machine counters are
// read a moment apart).
type CPUSplit struct {
	Server float64 `json:"server_pct"`
	// DBIO is dbio: the load generator, and SQLite where it runs inside dbio.
	DBIO   float64 `json:"dbio_pct"`
	Other  float64 `json:"other_pct"`
	Idle   float64 `json:"idle_pct"`
	IOWait float64 `json:"iowait_pct"`
	Steal  float64 `json:"steal_pct"`
	// Text says it in a sentence: "the CPUs: the server 22 %, dbio 4 %,
	// other processes 70 %, idle 3 %, iowait 1 %, steal 0 %".
	Text string `json:"text"`
}

// OtherCPUsOver is the share of the CPUs other processes may take before
// a step is said to have measured its neighbours as much as the database:
// a third.
const OtherCPUsOver = 100.0 / 3

// Neighbours says whether other processes took more than OtherCPUsOver of
// the CPUs during the step.
func (c CPUSplit) Neighbours() bool { return c.Other > OtherCPUsOver }
