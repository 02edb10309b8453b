package results

import (
	"math"
	"sync"
	"time"
)

// What a fleet run records about its hosts beyond each point's figures:
// how each host fared (reached, failed at the start, failed during a
// point), how far its clock was from this machine's, and its CPU and disks
// during each point, read from its node exporter.

// Host states in run.json.
const (
	// HostOK is a host that took part in the whole run.
	HostOK = "ok"
	// HostFailed is a host that could not be reached at the start, or
	// whose fio server ended during a point: it took no part after that.
	HostFailed = "failed"
)

// FleetHost is one host of a fleet run, in run.json.
type FleetHost struct {
	Name        string `json:"name"`
	Destination string `json:"destination"`
	// Status is HostOK or HostFailed.
	Status string `json:"status"`
	// Error says why a failed host failed: ssh's own words when it could
	// not be reached.
	Error string `json:"error,omitempty"`
	// FailedAt is when the host failed, and FailedStep the point it failed
	// in ("" when it failed before the first point).
	FailedAt   time.Time `json:"failed_at,omitzero"`
	FailedStep string    `json:"failed_step,omitempty"`
	// Clock holds the host's clock offsets, measured at the start and at
	// the end of the run.
	Clock []ClockOffset `json:"clock,omitempty"`
	// NodeExporter is the metrics page dbio read the host's CPU and disks
	// from ("" when none was read), and Devices the block devices behind
	// the host's targets that it watched there.
	NodeExporter string   `json:"node_exporter,omitempty"`
	Devices      []string `json:"devices,omitempty"`
	// Telemetry says why no telemetry was read from the host, when none was.
	Telemetry string `json:"telemetry,omitempty"`
}

// ClockOffset is one measurement of a host's clock against this machine's.
type ClockOffset struct {
	// At is "start" or "end".
	At string `json:"at"`
	// Measured is when, on this machine's clock.
	Measured time.Time `json:"measured"`
	// OffsetMS is the host's clock minus this machine's, in ms: positive
	// when the host's clock is ahead. It is the host's time against the
	// middle of the round trip of the best of several tries.
	OffsetMS float64 `json:"offset_ms"`
	// RoundTripMS is that try's round trip: the offset is known to within
	// half of it.
	RoundTripMS float64 `json:"round_trip_ms"`
	// Tries is how many round trips were made.
	Tries int `json:"tries"`
}

// HostSystem is a host's CPU, disks and memory over a fleet point, drawn
// from its node exporter's per-second samples (or, for the fleet, from
// every host's).
type HostSystem struct {
	// Seconds is how many per-second samples it is drawn from (for the
	// fleet: the fewest of any host).
	Seconds int `json:"seconds"`
	// CPU shares in % of the host's CPUs, means over the seconds; for the
	// fleet, the mean of the hosts' shares (each host counts once, whatever
	// its number of CPUs).
	CPUUserPct   float64 `json:"cpu_user_pct"`
	CPUSystemPct float64 `json:"cpu_system_pct"`
	CPUIowaitPct float64 `json:"cpu_iowait_pct"`
	CPUStealPct  float64 `json:"cpu_steal_pct"`
	CPUIdlePct   float64 `json:"cpu_idle_pct"`
	// DiskIOPS and DiskMBPerSec are the watched devices' reads and writes
	// per second (for the fleet: summed over the hosts); DiskAwaitMS their
	// mean time per I/O, weighted by each device's (and host's) IOPS; zero
	// without I/O.
	DiskIOPS     float64 `json:"disk_iops"`
	DiskMBPerSec float64 `json:"disk_mb_s"`
	DiskAwaitMS  float64 `json:"disk_await_ms"`
	// MemUsedMB is the memory in use (all of it less what is available),
	// in MB; for the fleet, summed over the hosts.
	MemUsedMB float64 `json:"mem_used_mb"`
}

// FleetSystem is a fleet point's CPU, disks and memory over the hosts whose
// node exporter was read.
type FleetSystem struct {
	HostSystem
	// Hosts are the hosts it covers; LeftOut the others, each with why
	// ("h3: node exporter unreachable").
	Hosts   []string `json:"hosts"`
	LeftOut []string `json:"left_out,omitempty"`
}

// SeriesWriter writes a series file of its own, in series.csv's format: a
// fleet host's per-second samples in its directory of the step.
type SeriesWriter struct {
	mu sync.Mutex
	s  *seriesFile
}

// CreateSeries creates the series file at path (which must not exist);
// elapsed_s counts from start.
func CreateSeries(path string, start time.Time) (*SeriesWriter, error) {
	s, err := openSeries(path, start)
	if err != nil {
		return nil, err
	}
	return &SeriesWriter{s: s}, nil
}

// Append adds one row and flushes it.
func (w *SeriesWriter) Append(row SeriesRow) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.s.append(row)
}

// Close closes the file.
func (w *SeriesWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.s.w.Flush()
	err := w.s.w.Error()
	if cerr := w.s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadSeries reads a series file dbio wrote: the run's series.csv or a
// fleet host's.
func ReadSeries(path string) (Series, error) { return readSeries(path) }

// HostSystemOf draws a host's CPU, disks and memory from its summary: the
// CPU shares' means, the watched devices' IOPS and MB/s summed and their
// awaits weighted by each one's IOPS, and the memory in use. A device's
// await is the mean of its per-second awaits (as iostat's at one second),
// not its total wait over its total I/Os: the summary keeps no per-second
// figures, so a second of one slow I/O weighs as much as a busy one.
func HostSystemOf(s TelemetrySummary) HostSystem {
	mean := func(name string) float64 {
		if v := s.Mean(name); !math.IsNaN(v) {
			return v
		}
		return 0
	}
	h := HostSystem{Seconds: s.Samples,
		CPUUserPct: mean("cpu_user_pct"), CPUSystemPct: mean("cpu_system_pct"), CPUIowaitPct: mean("cpu_iowait_pct"),
		CPUStealPct: mean("cpu_steal_pct"), CPUIdlePct: mean("cpu_idle_pct"), MemUsedMB: mean("mem_used_mb")}
	var waited float64
	for _, d := range s.Devices {
		p := "disk_" + d + "_"
		rps, wps := mean(p+"rps"), mean(p+"wps")
		h.DiskIOPS += rps + wps
		h.DiskMBPerSec += mean(p+"rmbps") + mean(p+"wmbps")
		waited += mean(p+"r_await_ms")*rps + mean(p+"w_await_ms")*wps
	}
	if h.DiskIOPS > 0 {
		h.DiskAwaitMS = waited / h.DiskIOPS
	}
	return h
}

// FleetSystemOf is the fleet's CPU, disks and memory over the hosts that
// have theirs (a nil System is passed over): CPU shares are the mean of the
// hosts' (each host counts once, whatever its CPUs), disk IOPS, MB/s and
// memory are summed, and the disk latency is weighted by each host's I/Os
// (its IOPS times its seconds), so a host that did more of the fleet's
// I/O counts for more of its await. Seconds is the fewest of any host's;
// leftOut names the hosts without figures, each with why. Nil when no
// host has any.
func FleetSystemOf(hosts []HostTelemetry, leftOut []string) *FleetSystem {
	f := &FleetSystem{LeftOut: leftOut}
	var waited, ios float64
	for _, h := range hosts {
		s := h.System
		if s == nil {
			continue
		}
		if len(f.Hosts) == 0 || s.Seconds < f.Seconds {
			f.Seconds = s.Seconds
		}
		f.Hosts = append(f.Hosts, h.Host)
		f.CPUUserPct += s.CPUUserPct
		f.CPUSystemPct += s.CPUSystemPct
		f.CPUIowaitPct += s.CPUIowaitPct
		f.CPUStealPct += s.CPUStealPct
		f.CPUIdlePct += s.CPUIdlePct
		f.DiskIOPS += s.DiskIOPS
		f.DiskMBPerSec += s.DiskMBPerSec
		f.MemUsedMB += s.MemUsedMB
		hostIOs := s.DiskIOPS * float64(max(s.Seconds, 1))
		waited += s.DiskAwaitMS * hostIOs
		ios += hostIOs
	}
	n := float64(len(f.Hosts))
	if n == 0 {
		return nil
	}
	f.CPUUserPct, f.CPUSystemPct, f.CPUIowaitPct, f.CPUStealPct, f.CPUIdlePct = f.CPUUserPct/n, f.CPUSystemPct/n, f.CPUIowaitPct/n, f.CPUStealPct/n, f.CPUIdlePct/n
	if ios > 0 {
		f.DiskAwaitMS = waited / ios
	}
	return f
}
