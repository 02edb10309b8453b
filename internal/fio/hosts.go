package fio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"dbio/internal/fioformat"
	"dbio/internal/fleet"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/telemetry"
)

// A fleet: the targets are on other hosts, reached with the user's ssh
// (internal/fleet). Each point runs on every host at once through fio's
// own client and server: one job file per host, one fio client here
// sending each to its host's server. The client brings back every host's
// json+ report and per-second logs, which dbio files per host under the
// step (hosts/<name>/), and the fleet's figures are computed from the
// hosts' logs over the seconds all of them were measuring (Fleet).
//
// Hosts fail: a host that cannot be reached at the start, or whose fio
// server ends during a point, is recorded as failed (run.json's hosts) and
// left out from then on; the run goes on with the others. The hosts'
// clocks are measured against this machine's at the start and the end,
// and their node exporters read once a second while each point runs.

// HostsDir is the directory of a fleet step that holds one directory per host.
const HostsDir = "hosts"

// hostsPlace is a fleet's place.
type hostsPlace struct {
	r       *runner
	shell   fleet.Shell
	servers *fleet.Servers
	// live are the hosts still in the run, in the order given: a host that
	// failed is taken out (fail).
	live  []*site
	hosts map[string]fleet.Host
	// order names every host of the run, record what run.json says of each.
	order  []string
	record map[string]*results.FleetHost
	// leftOut says which hosts failed, and when ("h2: failed during point x").
	leftOut []string
	// clocked says the clocks were read at the start: they are read again
	// at the end.
	clocked bool
	// exporters are the node exporters read, by host name.
	exporters map[string]*telemetry.Exporter
	// watch samples them while the point runs.
	watch *pointWatch
	// locks hold the hosts' targets for the run, by host name: a host that
	// fails lets its own go at once (fail).
	locks map[string][]*fleet.RemoteLock
}

func newHostsPlace(r *runner) *hostsPlace {
	return &hostsPlace{r: r, shell: fleet.Shell{Exec: r.exec}, hosts: map[string]fleet.Host{}, record: map[string]*results.FleetHost{},
		exporters: map[string]*telemetry.Exporter{}, locks: map[string][]*fleet.RemoteLock{}}
}

func (p *hostsPlace) sites() []*site { return p.live }

// reach starts every host's fio server, or connects to the one the user
// runs there, once fio there is of this machine's version, and reads the
// hosts' clocks. A host that cannot be reached is failed; the run goes on
// with the others.
func (p *hostsPlace) reach(ctx context.Context, version string) error {
	r := p.r
	c := r.plan.Config
	targets, errs := fleet.Resolve(c.Hosts, c.Targets)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	hosts := fleet.Hosts(c.Hosts, targets)
	sites := map[string]*site{}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
		p.hosts[h.Name] = h
		p.order = append(p.order, h.Name)
		p.record[h.Name] = &results.FleetHost{Name: h.Name, Destination: h.Destination, Status: results.HostOK}
		sites[h.Name] = &site{host: h.Name, machine: &overSSH{p: p, host: h}, paths: map[string]string{}}
	}
	for i, t := range targets {
		if s := sites[t.Host]; s != nil { // a target here is refused on a fleet (fleetProblems)
			s.paths[c.Targets[i]] = t.Path
		}
	}
	r.say("reaching %d host(s) over ssh: %s", len(hosts), strings.Join(names, ", "))
	servers, err := p.shell.OpenServers(ctx, hosts, version)
	if err != nil {
		if errors.Is(err, fleet.ErrNoHostLeft) {
			for _, name := range p.order {
				p.record[name].Status, p.record[name].Error = results.HostFailed, "not reachable at the start of the run"
			}
			_ = p.save()
		}
		return err
	}
	p.servers = servers
	for _, h := range hosts {
		if srv := servers.Server(h.Name); srv != nil {
			sites[h.Name].addr = srv.Address
			p.live = append(p.live, sites[h.Name])
		}
	}
	var warnings []string
	for _, u := range servers.Unreached {
		p.fail(u.Host.Name, "", r.now(), u.Err)
		w := fmt.Sprintf("host %s cannot be reached, and the run goes on without it: %v", u.Host.Name, u.Err)
		r.say("warning: %s", w)
		warnings = append(warnings, w)
	}
	var notes []string
	for _, srv := range servers.Servers {
		how := "started by dbio for the run, stopped after it"
		if !srv.Started {
			how = "run by the user"
		}
		notes = append(notes, fmt.Sprintf("host %s: fio server %s (%s), %s", srv.Host.Name, srv.Arg, how, servers.Versions[srv.Host.Name]))
	}
	warnings = append(warnings, p.measureClocks(ctx, "start")...)
	p.clocked = true
	return r.sink.UpdateRun(func(run *results.Run) {
		for h, v := range servers.Versions {
			run.Environment.Versions["fio on "+h] = v
		}
		run.Notes = append(run.Notes, notes...)
		run.Warnings = append(run.Warnings, warnings...)
	})
}

// goesOnWithout fails a host that cannot be reached any more.
func (p *hostsPlace) goesOnWithout(ctx context.Context, s *site, err error) bool {
	if !fleet.Unreachable(err) || ctx.Err() != nil {
		return false
	}
	p.fail(s.host, "", p.r.now(), err)
	p.r.say("warning: host %s cannot be reached any more, and the run goes on without it: %v", s.host, err)
	return true
}

// ready starts reading the hosts' node exporters.
func (p *hostsPlace) ready(ctx context.Context) error {
	if len(p.live) == 0 {
		return fmt.Errorf("%w: every host failed before the first point (%s)", fleet.ErrNoHostLeft, strings.Join(p.leftOut, "; "))
	}
	tw := p.startTelemetry(ctx)
	if err := p.r.sink.UpdateRun(func(run *results.Run) { run.Warnings = append(run.Warnings, tw...) }); err != nil {
		return err
	}
	return p.save()
}

// run runs fio's client with each host's job file, sent to its server,
// while the hosts' node exporters are read; the client's json+ report and
// the logs it brings back are filed per host.
func (p *hostsPlace) run(ctx context.Context, stepDir string, pt results.FioPlan, fio func([]string) ([]byte, error)) (error, error) {
	args := []string{"--output-format=json+"}
	for _, s := range p.live {
		// A job file directly after a --client goes to that server alone.
		args = append(args, "--client="+p.servers.Server(s.host).Arg, filepath.Join(HostsDir, s.host, JobFileName))
	}
	p.watch = p.watchPoint(ctx, stepDir, pt)
	report, runErr := fio(args)
	var fileErr error
	if err := p.watch.end(); err != nil {
		fileErr = fmt.Errorf("the hosts' telemetry: %w", err)
	}
	if err := results.WriteFileAtomic(filepath.Join(stepDir, OutputFileName), report); err != nil {
		return runErr, err
	}
	return runErr, errors.Join(p.fileHosts(stepDir, report), fileErr)
}

// lost fails the hosts whose fio server ended during the point, or from
// which fio's client brought back no report: each took its part of the
// point with it (the client may then fail too, for that host's sake
// alone), and its server is stopped. When no host reported and every
// server still runs, the point itself failed, and no host is lost.
func (p *hostsPlace) lost(ctx context.Context, pt results.FioPlan, out *fioformat.Output, at time.Time) ([]string, error) {
	type lostHost struct {
		name string
		why  error
	}
	var lost []lostHost
	confirmed := false
	for _, s := range p.live {
		srv := p.servers.Server(s.host)
		reported := out != nil && len(out.HostGroups(srv.Address)) > 0
		switch {
		case !srv.Alive():
			confirmed = true
			lost = append(lost, lostHost{s.host, fmt.Errorf("its fio server (%s) ended during point %s", srv.Arg, pt.Name)})
		case !reported:
			// A server's session may take a moment to end after the client
			// lost it, and a server the user runs is asked directly.
			if srv.EndsWithin(5*time.Second) || (!srv.Started && !srv.Answers(ctx)) {
				confirmed = true
			}
			lost = append(lost, lostHost{s.host, fmt.Errorf("fio's client brought back no report from its fio server (%s) for point %s", srv.Arg, pt.Name)})
		}
	}
	if len(lost) == len(p.live) && !confirmed {
		return nil, nil // the point failed, not the hosts
	}
	var gone []string
	for _, l := range lost {
		p.fail(l.name, pt.Name, at, l.why)
		gone = append(gone, l.name)
		p.r.say("warning: host %s failed: %v; the run goes on without it", l.name, l.why)
	}
	if len(gone) == 0 {
		return nil, nil
	}
	if err := errors.Join(p.save(), p.r.sink.UpdateRun(func(run *results.Run) {
		run.Warnings = append(run.Warnings, fmt.Sprintf("host(s) %s failed during point %s (their fio server ended, or fio's client got no report from it): the point's figures and the later points are over the other hosts", strings.Join(gone, ", "), pt.Name))
	})); err != nil {
		return gone, err
	}
	if len(p.live) == 0 {
		return gone, fmt.Errorf("point %s: %w: every host failed (%s)", pt.Name, fleet.ErrNoHostLeft, strings.Join(p.leftOut, "; "))
	}
	return gone, nil
}

// add computes the fleet's figures over the seconds every host was
// measuring, each host's over the same window, and the hosts' CPU and
// disks over it.
func (p *hostsPlace) add(res *results.FioPoint, parts []part) ([]string, error) {
	fl := &results.FioFleet{LeftOut: slices.Clone(p.leftOut)}
	var seconds [][]fioformat.Second
	var usr, sys float64
	for _, pt := range parts {
		g, s := pt.group, pt.site
		seconds = append(seconds, pt.seconds)
		usr += g.UsrCPU / float64(len(parts))
		sys += g.SysCPU / float64(len(parts))
		res.ElapsedS = max(res.ElapsedS, g.ElapsedS)
		pl := s.places[0]
		host := results.FioHost{HostTelemetry: results.HostTelemetry{Host: s.host}, Server: p.servers.Server(s.host).Arg, Dir: filepath.Join(HostsDir, s.host),
			Engine: pl.Engine, Direct: pl.Direct && !res.Buffered, FioIOPS: g.Total.IOPS}
		if secs := pt.seconds; len(secs) > 0 {
			host.FirstSecond, host.LastSecond = secs[0].Time.UTC(), secs[len(secs)-1].Time.UTC()
		}
		fl.Hosts = append(fl.Hosts, host)
	}
	figs, err := Fleet(seconds)
	if err != nil {
		var logged []string
		for i, pt := range parts {
			logged = append(logged, pt.site.host+" "+describeSeconds(seconds[i]))
		}
		return nil, fmt.Errorf("point %s: %w (%s)", res.Name, err, strings.Join(logged, "; "))
	}
	fl.WindowStart, fl.WindowEnd, fl.Seconds = figs.Start, figs.End, figs.Seconds
	if figs.Unbinned {
		var reports []results.FioDirections
		for _, pt := range parts {
			reports = append(reports, pt.group.FioDirections)
		}
		percentiles := "it has no percentiles"
		if figs.PercentilesFromReports(reports) {
			percentiles = "its percentiles are over each host's whole measurement, from fio's final reports"
		}
		warning := fmt.Sprintf("point %s: no second had every host's latency histogram (fio logs one when an I/O completes, so a host whose I/Os stalled logs it late): its throughput is over the %d s all hosts logged, its mean latency over those of them whose latency fio logged, and %s", res.Name, figs.Seconds, percentiles)
		p.r.say("warning: %s", warning)
		if err := p.r.sink.UpdateRun(func(run *results.Run) { run.Warnings = append(run.Warnings, warning) }); err != nil {
			return nil, err
		}
	}
	earliest, latest := fl.Hosts[0].FirstSecond, fl.Hosts[0].FirstSecond
	for _, h := range fl.Hosts[1:] {
		if h.FirstSecond.Before(earliest) {
			earliest = h.FirstSecond
		}
		if h.FirstSecond.After(latest) {
			latest = h.FirstSecond
		}
	}
	fl.StartSpreadMS = latest.Sub(earliest).Milliseconds()
	measured := res.Started.Add(time.Duration(res.RampS) * time.Second)
	var noTelemetry []string
	for i := range fl.Hosts {
		fh := &fl.Hosts[i]
		fh.FioDirections = figs.Hosts[i]
		fh.HostTelemetry = p.watch.hostTelemetry(fh.Host, figs.Start, figs.End, measured)
		if fh.System == nil {
			why := p.record[fh.Host].Telemetry
			if why == "" {
				why = "no sample of its node exporter during the point"
			}
			noTelemetry = append(noTelemetry, fh.Host+": "+why)
		}
	}
	fl.System = fleetSystem(fl.Hosts, noTelemetry)
	res.FioDirections = figs.Fleet
	res.UsrCPU, res.SysCPU, res.Fleet = usr, sys, fl
	if res.Total == nil {
		return nil, fmt.Errorf("point %s: the hosts did no I/O in the seconds all of them were measuring", res.Name)
	}
	if err := p.series(res, seconds, figs); err != nil {
		return nil, err
	}
	all := fmt.Sprintf("all %d hosts", len(fl.Hosts))
	if len(fl.Hosts) == 2 {
		all = "both hosts"
	}
	lines := []string{fmt.Sprintf("  fleet: %s, over the %d s %s were measuring (their first seconds %d ms apart)", headline(*res), figs.Seconds, all, fl.StartSpreadMS)}
	if s := fl.System; s != nil {
		whose := fmt.Sprintf("the mean of %d hosts' shares", len(s.Hosts))
		if len(s.Hosts) == 1 {
			whose = "host " + s.Hosts[0] + " alone"
		}
		lines = append(lines, fmt.Sprintf("         %s (CPU: %s)", systemLine(s.HostSystem), whose))
	}
	for _, h := range fl.Hosts {
		lines = append(lines, fmt.Sprintf("    %-12s %s", h.Host, hostLine(h)))
	}
	for _, l := range fl.LeftOut {
		lines = append(lines, "    left out: "+l)
	}
	return lines, p.save()
}

// end reads the hosts' clocks again (unless the run was stopped, or lost
// every host), records the hosts in run.json, stops the fio servers dbio
// started and lets the hosts' targets go.
func (p *hostsPlace) end(ctx context.Context) error {
	if p.servers == nil {
		return nil
	}
	var errs []error
	if p.clocked && ctx.Err() == nil && len(p.live) > 0 {
		w := p.measureClocks(context.WithoutCancel(ctx), "end")
		errs = append(errs, p.r.sink.UpdateRun(func(run *results.Run) { run.Warnings = append(run.Warnings, w...) }))
	}
	errs = append(errs, p.save(), p.servers.Close(), p.releaseLocks())
	return errors.Join(errs...)
}

// fail records the named host as failed (why, during point step, ""
// before the first point) and takes it out of the points to come: its fio
// server is stopped and its targets let go.
func (p *hostsPlace) fail(name, step string, at time.Time, why error) {
	rec := p.record[name]
	rec.Status, rec.Error, rec.FailedStep = results.HostFailed, why.Error(), step
	if !at.IsZero() {
		rec.FailedAt = at.UTC()
	}
	p.live = slices.DeleteFunc(p.live, func(s *site) bool { return s.host == name })
	delete(p.exporters, name)
	// Its targets are let go now, not when the run ends: the run may go on
	// for long without it, and the host's targets are free for another.
	// Its fio server is stopped first, so that no job of this run still
	// writes there once another run may.
	if srv := p.servers.Server(name); srv != nil {
		if err := srv.Stop(); err != nil {
			rec.Error += "; " + err.Error()
		}
	}
	if err := p.releaseHostLocks(name); err != nil {
		rec.Error += "; " + err.Error()
	}
	where := "before the first point"
	if step != "" {
		where = "during point " + step
	}
	p.leftOut = append(p.leftOut, fmt.Sprintf("%s: failed %s", name, where))
}

// releaseHostLocks lets the named host's targets go.
func (p *hostsPlace) releaseHostLocks(name string) error {
	var errs []error
	for _, l := range p.locks[name] {
		if err := l.Release(); err != nil {
			errs = append(errs, fmt.Errorf("host %s: %w", name, err))
		}
	}
	delete(p.locks, name)
	return errors.Join(errs...)
}

// releaseLocks lets every host's targets go, at the end of the run.
func (p *hostsPlace) releaseLocks() error {
	var errs []error
	for name := range p.locks {
		errs = append(errs, p.releaseHostLocks(name))
	}
	return errors.Join(errs...)
}

// save writes the hosts' records into run.json.
func (p *hostsPlace) save() error {
	var hosts []results.FleetHost
	for _, name := range p.order {
		hosts = append(hosts, *p.record[name])
	}
	return p.r.sink.UpdateRun(func(run *results.Run) { run.Hosts = hosts })
}

// liveHosts are the hosts still in the run.
func (p *hostsPlace) liveHosts() []fleet.Host {
	out := make([]fleet.Host, len(p.live))
	for i, s := range p.live {
		out[i] = p.hosts[s.host]
	}
	return out
}

// measureClocks reads every live host's clock against this machine's, at
// once, and records it under at ("start" or "end"); a host further off
// than fleet.ClockWarnOffset is a warning, on the terminal and in run.json.
// A clock that cannot be read is a warning too: the run does not need it.
func (p *hostsPlace) measureClocks(ctx context.Context, at string) []string {
	check := p.shell.CheckClocks(ctx, p.liveHosts(), at, p.r.now)
	for i, s := range p.live {
		if rec, ok := check.Record(i); ok {
			p.record[s.host].Clock = append(p.record[s.host].Clock, rec)
			if at == "start" {
				s.offset = check.Readings[i].Offset
			}
		}
	}
	warnings := check.Warnings("", fmt.Sprintf("the fleet's window lines the hosts' seconds up by their clocks, so synchronize them (chrony, systemd-timesyncd) below %d ms",
		fleet.ClockWarnOffset.Milliseconds()))
	if line := check.Line(); line != "" {
		p.r.say("%s", line)
	}
	for _, w := range warnings {
		p.r.say("warning: %s", w)
	}
	return warnings
}

// startTelemetry prepares the reading of every live host's node exporter:
// the devices behind its targets (over ssh) and one read of the page. An
// exporter that cannot be read is a warning: the run goes on without that
// host's telemetry, and says so.
func (p *hostsPlace) startTelemetry(ctx context.Context) []string {
	var warnings []string
	for _, s := range p.live {
		h := p.hosts[s.host]
		rec := p.record[s.host]
		var dirs []string
		for _, t := range p.r.plan.Config.Targets {
			if dir, ok := s.paths[t]; ok {
				dirs = append(dirs, dir)
			}
		}
		exp, more := p.shell.WatchExporter(ctx, h, s.addr, dirs, "node_exporter in the host's [[host]] table", rec)
		warnings = append(warnings, more...)
		if exp == nil {
			continue
		}
		p.exporters[h.Name] = exp
	}
	for _, w := range warnings {
		p.r.say("warning: %s", w)
	}
	return warnings
}

// fileHosts puts each live host's part of the client's output in the host's
// directory: its logs (which fio's client writes here, named
// <log>.<server address>) under their own names, and its entries of the
// json+ report, in a report of its own.
func (p *hostsPlace) fileHosts(stepDir string, report []byte) error {
	entries, err := os.ReadDir(stepDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range p.live {
		suffix := "." + s.addr
		dir := s.dir(stepDir)
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), suffix)
			if !ok || !e.Type().IsRegular() || !strings.Contains(name, ".log") {
				continue
			}
			if err := os.Rename(filepath.Join(stepDir, e.Name()), filepath.Join(dir, name)); err != nil {
				errs = append(errs, err)
			}
		}
		part, err := fioformat.HostReport(report, s.addr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, OutputFileName), part); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// series appends the fleet's seconds to series.csv: IOPS and MB/s
// summed over the hosts, p99 from their merged bins, for the seconds of
// the common window.
func (p *hostsPlace) series(res *results.FioPoint, hosts [][]fioformat.Second, figs FleetFigures) error {
	from, to := figs.clock.slot(figs.Start), figs.clock.slot(figs.End)
	type acc struct {
		read, write, mb float64
		bins            []fioformat.HistBin
		hosts           int
		binless         bool
	}
	secs := map[int64]*acc{}
	for _, h := range hosts {
		slots := figs.clock.slots(h)
		for j, s := range h {
			w := slots[j]
			if w < from || w > to || (!binned(s) && !figs.Unbinned) {
				continue
			}
			a := secs[w]
			if a == nil {
				a = &acc{}
				secs[w] = a
			}
			if !binned(s) {
				a.binless = true
			}
			a.read, a.write, a.mb, a.hosts = a.read+s.ReadIOPS, a.write+s.WriteIOPS, a.mb+s.MBPerSec, a.hosts+1
			if math.IsNaN(s.LatP99US) {
				a.binless = true
			}
			a.bins = append(append(a.bins, s.ReadBins...), s.WriteBins...)
		}
	}
	for w := from; w <= to; w++ {
		a := secs[w]
		if a == nil || a.hosts < len(hosts) {
			continue
		}
		p99 := math.NaN()
		if !a.binless && len(a.bins) > 0 {
			p99 = fioformat.HistPercentile(fioformat.MergeBins(a.bins), 99) / 1000
		}
		res.Seconds++
		vals := []results.Sample{{Name: "fio_iops", Value: a.read + a.write}, {Name: "fio_mb_s", Value: a.mb}, {Name: "fio_lat_p99_us", Value: p99}}
		if Mixed(res.RW) {
			vals = append(vals, results.Sample{Name: "fio_read_iops", Value: a.read}, results.Sample{Name: "fio_write_iops", Value: a.write})
		}
		if err := p.r.sink.AppendSeries(results.SeriesRow{Time: figs.clock.time(w), Step: res.Name, Phase: "measure", Values: vals}); err != nil {
			return err
		}
	}
	return nil
}

// describeSeconds says what a host's per-second logs held, for an error
// that has to explain why no window was found: how many whole seconds,
// from when to when on this machine's clock, and how many came with their
// latency bins (a second without them is left out of the window).
func describeSeconds(secs []fioformat.Second) string {
	if len(secs) == 0 {
		return "logged no whole second"
	}
	withBins := 0
	for _, s := range secs {
		if binned(s) {
			withBins++
		}
	}
	const clock = "15:04:05.000"
	return fmt.Sprintf("logged %d second(s) from %s to %s, %d with latency bins",
		len(secs), secs[0].Time.UTC().Format(clock), secs[len(secs)-1].Time.UTC().Format(clock), withBins)
}

// systemLine is a host's (or the fleet's) CPU and disks during a point.
func systemLine(s results.HostSystem) string {
	line := fmt.Sprintf("CPU user %.0f%% system %.0f%% iowait %.0f%%", s.CPUUserPct, s.CPUSystemPct, s.CPUIowaitPct)
	if s.DiskIOPS > 0 {
		line += fmt.Sprintf(", disks %s IOPS await %.2f ms", groupThousands(s.DiskIOPS), s.DiskAwaitMS)
	}
	return line
}

// hostLine is a host's row of a fleet point.
func hostLine(h results.FioHost) string {
	t := h.Total
	if t == nil {
		return "no I/O in the window"
	}
	line := fmt.Sprintf("%s IOPS  %.1f MB/s  mean %s  p99 %s", groupThousands(t.IOPS), t.MBPerSec(), formatUS(t.Completion.MeanUS), p99Text(t))
	if h.System != nil {
		line += "  " + systemLine(*h.System)
	}
	return line
}

// overSSH is a host of a fleet, where a target is prepared by scripts run
// over the user's ssh and fio run by the host's fio server.
type overSSH struct {
	p    *hostsPlace
	host fleet.Host
}

// script runs a POSIX shell script on the host.
func (m *overSSH) script(ctx context.Context, format string, a ...any) (string, error) {
	return m.p.shell.Run(ctx, m.host, fmt.Sprintf(format, a...))
}

// workDir makes dbio's directory and fio's in it on the host's target,
// and holds the target for the run, as a local one is held, before
// anything is written in it.
func (m *overSSH) workDir(ctx context.Context, dir string) (string, results.TargetInfo, []string, error) {
	h := m.host
	t := fleet.Target{Host: h.Name, Path: dir}
	info := results.TargetInfo{Role: target.RoleData, Path: t.String(), Host: h.Name}
	work, err := m.p.shell.PrepareTarget(ctx, h, dir, target.DirName, results.MarkerName, WorkSubdir)
	if err != nil {
		return "", info, nil, err
	}
	holder, _ := json.Marshal(target.Holder{PID: os.Getpid(), Command: []string{"dbio", "(a fleet run, from another machine)"}, Started: m.p.r.now().UTC()})
	lock, err := m.p.shell.LockTarget(ctx, h, path.Join(dir, target.DirName), target.LockName, string(holder))
	var busy *fleet.BusyTargetError
	if errors.As(err, &busy) {
		var who target.Holder
		_ = json.Unmarshal([]byte(busy.Holder), &who)
		return "", info, nil, &target.BusyError{Target: t.String(), Holder: who}
	}
	if err != nil {
		return "", info, nil, err
	}
	m.p.locks[h.Name] = append(m.p.locks[h.Name], lock)
	return work, info, nil, nil
}

// spaceScript refuses a link, or anything but a regular file, where fio's
// files go (fio opens them by name, and would write through a link), then
// prints what the working file's size is drawn from: the target's free
// blocks, block size and file system type (stat -f), the host's memory
// (MemTotal, in kB), and the working file's size, allocated blocks and
// their unit, or "none".
const spaceScript = `t=%s; f=%s
for x in "$f" "$f.partial" %s; do
  if [ -L "$x" ]; then echo "$x is a symbolic link, which dbio did not create: dbio neither follows, uses nor removes it" >&2; exit 4; fi
  if [ -e "$x" ] && [ ! -f "$x" ]; then echo "$x is not a regular file, which dbio did not create: dbio neither follows, uses nor removes it" >&2; exit 4; fi
done
stat -f -c '%%a %%S %%T' "$t" || exit 5
while read k v u; do [ "$k" = MemTotal: ] && echo "$v"; done < /proc/meminfo
if [ -f "$f" ]; then stat -c '%%s %%b %%B' "$f"; else echo none; fi
`

// space reads what the working file's size is drawn from, on the host.
func (m *overSSH) space(ctx context.Context, dir, file string) (space, error) {
	q := fleet.ShellQuote
	out, err := m.script(ctx, spaceScript, q(dir), q(file), q(filepath.Join(filepath.Dir(file), probeFile)))
	if err != nil {
		return space{}, fmt.Errorf("sizing the working file: %w", err)
	}
	return parseSpace(out)
}

// parseSpace reads what spaceScript printed.
func parseSpace(out string) (space, error) {
	bad := fmt.Errorf("sizing the working file: the host printed %q, want free blocks, block size and file system, memory in kB, and the working file's size and blocks: pass --size", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		return space{}, bad
	}
	fs := strings.Fields(lines[0])
	if len(fs) < 3 {
		return space{}, bad
	}
	blocks, err1 := strconv.ParseUint(fs[0], 10, 64)
	bsize, err2 := strconv.ParseUint(fs[1], 10, 64)
	memKB, err3 := strconv.ParseUint(strings.TrimSpace(lines[1]), 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil || bsize == 0 || blocks > math.MaxUint64/bsize || memKB > math.MaxUint64/1024 {
		return space{}, bad
	}
	sp := space{free: blocks * bsize, fsType: fs[2], memory: memKB * 1024, existing: -1}
	if file := strings.Fields(lines[2]); len(file) != 1 || file[0] != "none" {
		if len(file) != 3 {
			return space{}, bad
		}
		size, err1 := strconv.ParseInt(file[0], 10, 64)
		used, err2 := allocated(file[1], file[2])
		if errors.Join(err1, err2) != nil || size < 0 {
			return space{}, bad
		}
		sp.existing, sp.allocated = size, used
	}
	return sp, nil
}

func (m *overSSH) tryEngine(ctx context.Context, file, engine string, direct bool) (string, error) {
	q := fleet.ShellQuote
	quoted := make([]string, 0, 8)
	for _, a := range probeArgs(file, engine, direct) {
		quoted = append(quoted, q(a))
	}
	out, err := m.script(ctx, "%s %s 2>&1; rm -f %s", q(m.host.FioProgram()), strings.Join(quoted, " "), q(file))
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		return "", err // ssh failed: the host, not the engine
	}
	if o, perr := fioformat.Parse(strings.NewReader(out)); perr == nil && len(o.Groups) == 1 && o.Groups[0].Error == 0 {
		return "", nil
	}
	return fioComplaint([]byte(out), nil), nil
}

func (m *overSSH) remove(ctx context.Context, file string) error {
	_, err := m.script(ctx, "rm -f -- %s", fleet.ShellQuote(file))
	return err
}

// layoutScript lays the working file out under its temporary name with
// fio, and renames it once it has its size.
const layoutScript = `f=%s; p=%s
rm -f -- "$p"
%s %s >/dev/null || { rm -f -- "$p"; exit 5; }
if [ "$(stat -c %%s "$p")" != %d ]; then rm -f -- "$p"; echo "fio left a short file" >&2; exit 5; fi
mv -- "$p" "$f"
`

func (m *overSSH) layout(ctx context.Context, pl placement) error {
	q := fleet.ShellQuote
	partial := partialFile(pl.File)
	var args []string
	for _, a := range layoutArgs(partial, pl.Size, pl.Engine, pl.Direct) {
		args = append(args, q(a))
	}
	if _, err := m.script(ctx, layoutScript, q(pl.File), q(partial), q(m.host.FioProgram()), strings.Join(args, " "), pl.Size); err != nil {
		return fmt.Errorf("laying out the working file: %w", err)
	}
	return nil
}

// purgeScript deallocates every block of dbio's working file on the host,
// keeping its size, as purgeWorkFile does here: work.dat in fio's
// directory of dbio's, neither of them a link; it prints the file's
// allocated blocks and their unit before and after.
const purgeScript = `f=%s; d=$(dirname -- "$f")
case "$f" in */%s/%s) ;; *) echo "purge $f: dbio purges only its own working file" >&2; exit 4;; esac
if [ -L "$d" ] || [ -L "$f" ] || [ ! -f "$f" ]; then echo "purge $f: not dbio's working file (a link, or no regular file): dbio purges only its own" >&2; exit 4; fi
stat -c '%%b %%B' "$f" || exit 5
fallocate --punch-hole --keep-size --offset 0 --length %d "$f" || { echo "the filesystem cannot deallocate a file's blocks (fallocate --punch-hole), or util-linux's fallocate is missing: use a target on ext4, xfs, btrfs or tmpfs, or another profile" >&2; exit 5; }
sync -- "$f" 2>/dev/null || sync
stat -c '%%b %%B' "$f" || exit 5
`

func (m *overSSH) purge(ctx context.Context, file string, size int64) (string, error) {
	out, err := m.script(ctx, purgeScript, fleet.ShellQuote(file), WorkSubdir, workFile, size)
	if err != nil {
		return "", fmt.Errorf("purge %s: %w", file, err)
	}
	f := strings.Fields(out)
	if len(f) != 4 {
		return "", fmt.Errorf("purge %s: the host printed %q, want the file's blocks before and after", file, out)
	}
	before, err1 := allocated(f[0], f[1])
	after, err2 := allocated(f[2], f[3])
	if err := errors.Join(err1, err2); err != nil {
		return "", fmt.Errorf("purge %s: the host printed %q: %w", file, out, err)
	}
	return purgedNote(file, size, before, after), nil
}

// allocated reads a file's allocated blocks and their unit in bytes, as
// stat -c '%b %B' prints them, into bytes.
func allocated(blocks, unit string) (int64, error) {
	n, err1 := strconv.ParseInt(blocks, 10, 64)
	u, err2 := strconv.ParseInt(unit, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	if n < 0 || u <= 0 || n > math.MaxInt64/u {
		return 0, fmt.Errorf("%s blocks of %s bytes: not a file's allocation", blocks, unit)
	}
	return n * u, nil
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
func (p *hostsPlace) watchPoint(ctx context.Context, stepDir string, pt results.FioPlan) *pointWatch {
	w := &pointWatch{hosts: map[string]*hostSamples{}, stop: make(chan struct{})}
	start := p.r.now()
	measured := start.Add(time.Duration(pt.RampS) * time.Second)
	for _, s := range p.live {
		exp := p.exporters[s.host]
		if exp == nil {
			continue
		}
		hs := &hostSamples{exp: exp}
		hs.series, hs.err = results.CreateSeries(filepath.Join(s.dir(stepDir), "series.csv"), start)
		w.hosts[s.host] = hs
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
