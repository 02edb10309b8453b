package fio

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"dbio/internal/fleet"
	"dbio/internal/results"
	"dbio/internal/telemetry"
)

// A fleet run's hosts beyond their fio servers: which of them are still
// in the run (a host unreachable at the start, or whose fio server ends
// during a point, is left out from then on and recorded as failed), their
// clocks against this machine's, and their CPU and disks read from their
// node exporters once a second while each point runs.

// failHost records h as failed (why, during point step, "" before the
// first point) and takes it out of the points to come: its fio server is
// stopped and its targets let go.
func (fr *fleetRun) failHost(h fleet.Host, step string, at time.Time, why error) {
	rec := fr.record[h.Name]
	rec.Status, rec.Error, rec.FailedStep = results.HostFailed, why.Error(), step
	if !at.IsZero() {
		rec.FailedAt = at.UTC()
	}
	fr.hosts = slices.DeleteFunc(fr.hosts, func(x fleet.Host) bool { return x.Name == h.Name })
	delete(fr.watch, h.Name)
	// Its targets are let go now, not when the run ends: the run may go on
	// for long without it, and the host's targets are free for another.
	// Its fio server is stopped first, so that no job of this run still
	// writes there once another run may.
	if srv := fr.sess.Server(h.Name); srv != nil {
		if err := srv.Stop(); err != nil {
			rec.Error += "; " + err.Error()
		}
	}
	if err := fr.releaseHostLocks(h.Name); err != nil {
		rec.Error += "; " + err.Error()
	}
	where := "before the first point"
	if step != "" {
		where = "during point " + step
	}
	fr.leftOut = append(fr.leftOut, fmt.Sprintf("%s: failed %s", h.Name, where))
}

// releaseHostLocks lets the named host's targets go.
func (fr *fleetRun) releaseHostLocks(name string) error {
	var errs []error
	for _, l := range fr.locks[name] {
		if err := l.Release(); err != nil {
			errs = append(errs, fmt.Errorf("host %s: %w", name, err))
		}
	}
	delete(fr.locks, name)
	return errors.Join(errs...)
}

// releaseLocks lets every host's targets go, at the end of the run.
func (fr *fleetRun) releaseLocks() error {
	var errs []error
	for name := range fr.locks {
		errs = append(errs, fr.releaseHostLocks(name))
	}
	return errors.Join(errs...)
}

// saveHosts writes the hosts' records into run.json.
func (r *runner) saveHosts(fr *fleetRun) error {
	var hosts []results.FleetHost
	for _, name := range fr.order {
		hosts = append(hosts, *fr.record[name])
	}
	return r.sink.UpdateRun(func(run *results.Run) { run.Hosts = hosts })
}

// measureClocks reads every live host's clock against this machine's, at
// once, and records it under at ("start" or "end"); a host further off
// than fleet.ClockWarnOffset is a warning, on the terminal and in run.json.
// A clock that cannot be read is a warning too: the run does not need it.
func (r *runner) measureClocks(ctx context.Context, fr *fleetRun, shell fleet.Shell, at string) []string {
	check := shell.CheckClocks(ctx, fr.hosts, at, r.now)
	for i, h := range fr.hosts {
		if rec, ok := check.Record(i); ok {
			fr.record[h.Name].Clock = append(fr.record[h.Name].Clock, rec)
			if at == "start" {
				fr.offsets[h.Name] = check.Readings[i].Offset
			}
		}
	}
	warnings := check.Warnings("", fmt.Sprintf("the fleet's window lines the hosts' seconds up by their clocks, so synchronize them (chrony, systemd-timesyncd) below %d ms",
		fleet.ClockWarnOffset.Milliseconds()))
	if line := check.Line(); line != "" {
		r.say("%s", line)
	}
	for _, w := range warnings {
		r.say("warning: %s", w)
	}
	return warnings
}

// startTelemetry prepares the reading of every live host's node exporter:
// the devices behind its targets (over ssh) and one read of the page. An
// exporter that cannot be read is a warning: the run goes on without that
// host's telemetry, and says so.
func (r *runner) startTelemetry(ctx context.Context, fr *fleetRun, shell fleet.Shell, targets []fleet.Target) []string {
	var warnings []string
	for _, h := range fr.hosts {
		rec := fr.record[h.Name]
		srv := fr.sess.Server(h.Name)
		url := h.NodeExporterURL(srv.Address)
		if url == "" {
			rec.Telemetry = "not read: node_exporter = " + fleet.NodeExporterOff
			continue
		}
		rec.NodeExporter = url
		var devices []string
		for _, t := range targets {
			if t.Host != h.Name {
				continue
			}
			devs, err := shell.TargetDevices(ctx, h, t.Path)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("host %s: %v: no disk figures", h.Name, err))
				continue
			}
			if len(devs) == 0 {
				warnings = append(warnings, fmt.Sprintf("host %s: no block device behind %s (a file system without one): no disk figures", h.Name, t))
			}
			for _, d := range devs {
				if !slices.Contains(devices, d) {
					devices = append(devices, d)
				}
			}
		}
		rec.Devices = devices
		exp, more, err := telemetry.OpenExporter(ctx, h.Name, telemetry.ExporterOptions{URL: url, Devices: devices})
		warnings = append(warnings, more...)
		if err != nil {
			rec.Telemetry = "node exporter unreachable: " + err.Error()
			warnings = append(warnings, fmt.Sprintf("host %s: its node exporter cannot be read (%v): the run goes on without its CPU and disk figures (set node_exporter, or start prometheus-node-exporter there)", h.Name, err))
			continue
		}
		fr.watch[h.Name] = exp
	}
	for _, w := range warnings {
		r.say("warning: %s", w)
	}
	return warnings
}

// hostSamples are one host's node exporter samples during a point.
type hostSamples struct {
	exp    *telemetry.Exporter
	series *results.SeriesWriter
	mu     sync.Mutex
	at     []time.Time
	pts    [][]telemetry.Point
	err    error
}

// pointWatch samples the hosts' exporters while a point runs.
type pointWatch struct {
	hosts map[string]*hostSamples
	stop  chan struct{}
	wg    sync.WaitGroup
}

// watchPoint starts sampling every watched host once a second, each into
// series.csv in its directory of the step, until the returned watch is
// stopped; seconds before the point's warm-up ends are marked rampup.
func (r *runner) watchPoint(ctx context.Context, fr *fleetRun, stepDir string, pt results.FioPlan) *pointWatch {
	w := &pointWatch{hosts: map[string]*hostSamples{}, stop: make(chan struct{})}
	start := r.now()
	measured := start.Add(time.Duration(pt.RampS) * time.Second)
	for _, h := range fr.hosts {
		exp := fr.watch[h.Name]
		if exp == nil {
			continue
		}
		hs := &hostSamples{exp: exp}
		hs.series, hs.err = results.CreateSeries(filepath.Join(stepDir, HostsDir, h.Name, "series.csv"), start)
		w.hosts[h.Name] = hs
		exp.Restart()
		w.wg.Go(func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				hs.sample(ctx, pt.Name, measured)
				select {
				case <-w.stop:
					hs.sample(ctx, pt.Name, measured) // the second the point ended in
					return
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	return w
}

func (hs *hostSamples) sample(ctx context.Context, step string, measured time.Time) {
	at, pts := hs.exp.Sample(ctx)
	if len(pts) == 0 {
		return
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.at, hs.pts = append(hs.at, at), append(hs.pts, pts)
	if hs.series == nil {
		return
	}
	phase := "measure"
	if at.Before(measured) {
		phase = "rampup"
	}
	row := results.SeriesRow{Time: at, Step: step, Phase: phase, Values: make([]results.Sample, len(pts))}
	for i, p := range pts {
		row.Values[i] = results.Sample{Name: p.Name, Value: p.Value}
	}
	if err := hs.series.Append(row); err != nil && hs.err == nil {
		hs.err = err
	}
}

// end stops the sampling and closes the hosts' series; the first error
// writing one is returned.
func (w *pointWatch) end() error {
	close(w.stop)
	w.wg.Wait()
	var first error
	for _, hs := range w.hosts {
		if hs.series != nil {
			if err := hs.series.Close(); err != nil && first == nil {
				first = err
			}
		}
		if hs.err != nil && first == nil {
			first = hs.err
		}
	}
	return first
}

// hostTelemetry summarizes a host's samples over the point's common window
// (its samples within half a second of the window's seconds: both are on
// this machine's clock, the samples' stamps and the hosts' seconds once
// onThisClock took their offsets off); a window too short to hold one
// falls back on the samples of the whole measured point.
func (w *pointWatch) hostTelemetry(name string, from, to time.Time, measured time.Time) results.HostTelemetry {
	hs := w.hosts[name]
	if hs == nil {
		return results.HostTelemetry{Host: name}
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	pick := func(keep func(time.Time) bool) [][]telemetry.Point {
		var out [][]telemetry.Point
		for i, at := range hs.at {
			if keep(at) {
				out = append(out, hs.pts[i])
			}
		}
		return out
	}
	lo, hi := from.Add(-500*time.Millisecond), to.Add(500*time.Millisecond)
	chosen := pick(func(at time.Time) bool { return !at.Before(lo) && at.Before(hi) })
	if len(chosen) == 0 {
		chosen = pick(func(at time.Time) bool { return !at.Before(measured) })
	}
	if len(chosen) == 0 {
		return results.HostTelemetry{Host: name}
	}
	return telemetry.HostTelemetryOf(name, telemetry.Summarize(chosen, hs.exp.CPUs(), hs.exp.Devices(), hs.exp.Warnings()))
}

// fleetSystem is the fleet's CPU, disks and memory over the hosts that
// have theirs (results.FleetSystemOf).
func fleetSystem(hosts []results.FioHost, leftOut []string) *results.FleetSystem {
	var systems []results.HostTelemetry
	for _, h := range hosts {
		systems = append(systems, h.HostTelemetry)
	}
	return results.FleetSystemOf(systems, leftOut)
}
