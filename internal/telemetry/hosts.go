package telemetry

import (
	"context"
	"math"
	"sync"
	"time"

	"dbio/internal/results"
)

// A Sampler can read other hosts too, through their node exporters, at
// each of its samples: the database host of a server dbio drives from here
// by its DSN, which runs no dbio. Their per-second values join this
// machine's in the same row, each named host_<host>_<metric> (the host's
// name as in metric names: "db-1" → "db_1"), and each step's summary holds
// every host's own (Summary.Hosts), under the plain names.

// RemoteHost is a host a Sampler reads through its node exporter.
type RemoteHost struct {
	// Name is the host's name, as targets call it ("db1").
	Name     string
	Exporter *Exporter
}

// HostReadTimeout bounds a host's read within a sample: the row waits for
// it, and a slower read would push the row past the next second. A read
// that takes longer loses that second, counted in the host's warnings.
const HostReadTimeout = 750 * time.Millisecond

// HostMetric is the name of a host's metric in the run's series.
func HostMetric(host, metric string) string {
	return "host_" + metricKey(host) + "_" + metric
}

// remoteHost is a host's state in a Sampler.
type remoteHost struct {
	RemoteHost
	prefix string
	step   *accumulator
	// warnings are the exporter's since the step started.
	warnings []string
}

func newRemoteHosts(hosts []RemoteHost) []*remoteHost {
	var out []*remoteHost
	for _, h := range hosts {
		if h.Exporter == nil {
			continue
		}
		// A sample never spans the time before this sampler existed (a
		// load, an earlier sampler's steps).
		h.Exporter.Restart()
		out = append(out, &remoteHost{RemoteHost: h, prefix: HostMetric(h.Name, ""), step: newAccumulator()})
	}
	return out
}

// readHosts reads every host at once, each within HostReadTimeout, into its
// step, and returns their points under their series names.
func readHosts(ctx context.Context, hosts []*remoteHost) []Point {
	if len(hosts) == 0 {
		return nil
	}
	got := make([][]Point, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() {
			rctx, cancel := context.WithTimeout(ctx, HostReadTimeout)
			defer cancel()
			_, got[i] = h.Exporter.Sample(rctx)
		})
	}
	wg.Wait()
	var out []Point
	for i, h := range hosts {
		if len(got[i]) == 0 {
			continue
		}
		h.step.add(got[i])
		for _, p := range got[i] {
			out = append(out, Point{Name: h.prefix + p.Name, Value: p.Value})
		}
	}
	return out
}

// startStep drops the host's samples and warnings so far.
func (h *remoteHost) startStep() {
	h.step = newAccumulator()
	h.Exporter.Warnings()
	h.warnings = nil
}

// summary is the host's part of the step's summary.
func (h *remoteHost) summary() results.HostTelemetry {
	h.warnings = append(h.warnings, h.Exporter.Warnings()...)
	return HostTelemetryOf(h.Name, h.step.summary(h.Exporter.CPUs(), h.Exporter.Devices(), append([]string(nil), h.warnings...)))
}

// HostTelemetryOf is a host's part of a step's telemetry: its summary, and
// the CPU, disks and memory drawn from it when it holds a sample.
func HostTelemetryOf(host string, sum results.TelemetrySummary) results.HostTelemetry {
	out := results.HostTelemetry{Host: host, Telemetry: &sum}
	if sum.Samples > 0 {
		sys := HostSystemOf(sum)
		out.System = &sys
	}
	return out
}

// HostSystemOf draws a host's CPU, disks and memory from its summary: the
// CPU shares' means, the watched devices' IOPS and MB/s summed and their
// awaits weighted by each one's IOPS, and the memory in use. A device's
// await is the mean of its per-second awaits (as iostat's at one second),
// not its total wait over its total I/Os: the summary keeps no per-second
// figures, so a second of one slow I/O weighs as much as a busy one.
func HostSystemOf(s results.TelemetrySummary) results.HostSystem {
	mean := func(name string) float64 {
		if v := s.Mean(name); !math.IsNaN(v) {
			return v
		}
		return 0
	}
	h := results.HostSystem{Seconds: s.Samples,
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
func FleetSystemOf(hosts []results.HostTelemetry, leftOut []string) *results.FleetSystem {
	f := &results.FleetSystem{LeftOut: leftOut}
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
