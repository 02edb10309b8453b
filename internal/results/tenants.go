package results

import (
	"time"

	"dbio/internal/metrics"
)

// Tenants is how a run of database tenants on several hosts went: dbio on
// each host, the start barrier that released them at one instant, and
// where each host's own results directory came back to.
type Tenants struct {
	// Workload is the workload every host ran (tpcc, sysbench...).
	Workload string `json:"workload"`
	// Driver is where each tenant's virtual users ran: "host", by dbio on
	// the database's host.
	Driver string `json:"driver"`
	// BarrierAt is the instant the coordinator chose, once every host had
	// loaded and said it was ready, for all of them to start their first
	// step.
	BarrierAt time.Time `json:"barrier_at"`
	// SkewMS is how far apart the hosts' actual starts of the first step
	// were (the latest minus the earliest, on the coordinator's clock).
	SkewMS float64      `json:"skew_ms"`
	Hosts  []TenantHost `json:"hosts"`
	// Steps are the start barriers of every step, in order, the first
	// step's included: each host waits at the barrier before each step,
	// and the coordinator releases them all at one instant once every one
	// of them is ready.
	Steps []TenantBarrier `json:"steps,omitempty"`
}

// TenantBarrier is the start barrier of one step.
type TenantBarrier struct {
	// At is the instant the coordinator chose for the step's start.
	At time.Time `json:"at"`
	// SkewMS is the latest host's start minus the earliest's.
	SkewMS float64 `json:"skew_ms"`
	// Hosts are the hosts that started the step; a host whose run ended
	// before it (its own stop rule) is not among them.
	Hosts []TenantStart `json:"hosts"`
}

// TenantStart is when a host started a step, on the coordinator's clock.
type TenantStart struct {
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
	// LateMS is how long after the barrier's instant that was.
	LateMS float64 `json:"late_ms"`
}

// TenantHost is one host's tenant.
type TenantHost struct {
	Host        string `json:"host"`
	Destination string `json:"destination"`
	Target      string `json:"target"`
	// Binary is dbio's copy on the host; Copied says this run copied it
	// (it was missing or of another build).
	Binary string `json:"binary"`
	Copied bool   `json:"copied,omitempty"`
	// Started is when the host began its first step, on the coordinator's
	// clock (the host's own minus its offset at the start); LateMS is how
	// long after the barrier's instant that was.
	Started time.Time `json:"started,omitzero"`
	LateMS  float64   `json:"late_ms"`
	// Clock holds the host's clock offsets against the coordinator's,
	// measured at the start and at the end of the run. The one at the
	// start puts the host on the coordinator's clock: the instants it is
	// sent, and its starts, steps and seconds as recorded here.
	Clock []ClockOffset `json:"clock,omitempty"`
	// Dir is the host's results directory as it came back, relative to
	// the run's directory (hosts/h1/...); empty when nothing came back.
	Dir    string `json:"dir,omitempty"`
	Status Status `json:"status"`
	Error  string `json:"error,omitempty"`
	// Backups are the backups the host's own tenants took, in a
	// noisy-neighbour run on several hosts.
	Backups []TenantBackup `json:"backups,omitempty"`
}

// TenantBackup is one backup a noisy-neighbour host's tenant took, as the
// host recorded it in its phase's step, its start put on the coordinator's
// clock.
type TenantBackup struct {
	// Phase is the host's step (the phase) it was taken in.
	Phase   string    `json:"phase"`
	Tenant  string    `json:"tenant"`
	Cycle   int       `json:"cycle"`
	Start   time.Time `json:"start"`
	Seconds float64   `json:"seconds"`
	Bytes   int64     `json:"bytes"`
	Error   string    `json:"error,omitempty"`
}

// TenantFleet is the detail of a fleet step: the window in which every
// host was measuring, and each host's figures over it. The step's figures
// are the fleet's: throughput summed over the window, latency percentiles
// from the hosts' histograms merged.
type TenantFleet struct {
	// WindowStart and WindowEnd are the first and last of the seconds every
	// host recorded, on the coordinator's clock, counted from the earliest
	// host's first measured second; Seconds is how many.
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	Seconds     int       `json:"seconds"`
	// StartSpreadMS is how far apart the hosts' first measured seconds were.
	StartSpreadMS float64 `json:"start_spread_ms"`
	// Latency is the fleet's: every host's histograms of the step merged.
	Latency metrics.Latency  `json:"latency"`
	Hosts   []TenantHostStep `json:"hosts"`
	// System is the fleet's CPU, disks and memory over each host's whole
	// measured step, as each host's dbio sampled its own machine (each
	// host's own are the step's telemetry.hosts); nil when no host
	// recorded telemetry.
	System *FleetSystem `json:"system,omitempty"`
}

// TenantHostStep is one host's part of a fleet step.
type TenantHostStep struct {
	Host string `json:"host"`
	// Step is the host's own step directory, relative to the run's.
	Step string `json:"step"`
	// Figures are the host's throughput over the fleet's window (the mean
	// of its per-second values there): these add up to the fleet's.
	Figures []Figure `json:"figures"`
	// Latency is the host's whole measured step's.
	Latency metrics.Latency `json:"latency"`
}

// Figure returns the host's named figure and whether it has it.
func (h TenantHostStep) Figure(name FigureName) (float64, bool) {
	for _, f := range h.Figures {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}
