package telemetry

import (
	"context"
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
		sys := results.HostSystemOf(sum)
		out.System = &sys
	}
	return out
}
