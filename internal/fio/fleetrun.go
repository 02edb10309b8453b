package fio

import (
	"bytes"
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
	"syscall"
	"time"

	"dbio/internal/execx"
	"dbio/internal/fioformat"
	"dbio/internal/fleet"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/telemetry"
	"dbio/internal/units"
)

// A fleet run: the targets are on other hosts, reached with the user's ssh
// (internal/fleet). Each point runs on every host at once through fio's own
// client and server: one job file per host, one fio client here sending
// each to its host's server. The client brings back every host's json+
// report and per-second logs, which dbio files per host under the step
// (hosts/<name>/), and the fleet's figures are computed from the hosts'
// logs over the seconds all of them were measuring (Fleet).

// HostsDir is the directory of a fleet step that holds one directory per host.
const HostsDir = "hosts"

// fleetRun is what a fleet run holds between its points.
type fleetRun struct {
	sess *fleet.Servers
	// hosts are the hosts still in the run, in the order given: a host that
	// failed is taken out (failHost).
	hosts  []fleet.Host
	places map[string][]placement // by host name, in the order of the targets
	// order names every host of the run, record what run.json says of each.
	order  []string
	record map[string]*results.FleetHost
	// leftOut says which hosts failed, and when ("h2: failed during point x").
	leftOut []string
	// offsets are the hosts' clocks against this machine's, at the start.
	offsets map[string]time.Duration
	// watch are the node exporters read, by host name.
	watch map[string]*telemetry.Exporter
	// locks hold the hosts' targets for the run, by host name: a host that
	// fails lets its own go at once (failHost).
	locks map[string][]*fleet.RemoteLock
}

// runFleet runs the plan's points on the hosts' fio servers. The servers
// dbio started are stopped before it returns, whatever happens. A host that
// cannot be reached at the start, or whose fio server ends during a point,
// is recorded as failed and the run goes on with the others.
func (r *runner) runFleet(ctx context.Context, firstStep int) (done []results.FioPoint, err error) {
	c := r.plan.Config
	if r.fioPath, err = Check(r.exec); err != nil {
		return nil, err
	}
	res, err := r.exec.Run(ctx, execx.Cmd{Name: r.fioPath, Args: []string{"--version"}})
	if err != nil {
		return nil, fmt.Errorf("fio --version: %w", err)
	}
	version := strings.TrimSpace(string(res.Stdout))
	targets, errs := fleet.Resolve(c.Hosts, c.Targets)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	fr := &fleetRun{hosts: fleet.Hosts(c.Hosts, targets), places: map[string][]placement{}, record: map[string]*results.FleetHost{},
		offsets: map[string]time.Duration{}, watch: map[string]*telemetry.Exporter{}, locks: map[string][]*fleet.RemoteLock{}}
	shell := fleet.Shell{Exec: r.exec}
	names := make([]string, len(fr.hosts))
	for i, h := range fr.hosts {
		names[i] = h.Name
		fr.order = append(fr.order, h.Name)
		fr.record[h.Name] = &results.FleetHost{Name: h.Name, Destination: h.Destination, Status: results.HostOK}
	}
	r.say("reaching %d host(s) over ssh: %s", len(fr.hosts), strings.Join(names, ", "))
	if fr.sess, err = shell.OpenServers(ctx, fr.hosts, version); err != nil {
		if errors.Is(err, fleet.ErrNoHostLeft) {
			for _, name := range fr.order {
				fr.record[name].Status, fr.record[name].Error = results.HostFailed, "not reachable at the start of the run"
			}
			_ = r.saveHosts(fr)
		}
		return nil, err
	}
	defer func() {
		if cerr := fr.sess.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		if lerr := fr.releaseLocks(); lerr != nil {
			err = errors.Join(err, lerr)
		}
	}()
	var warnings []string
	for _, u := range fr.sess.Unreached {
		fr.failHost(u.Host, "", r.now(), u.Err)
		w := fmt.Sprintf("host %s cannot be reached, and the run goes on without it: %v", u.Host.Name, u.Err)
		r.say("warning: %s", w)
		warnings = append(warnings, w)
	}
	var notes []string
	for _, srv := range fr.sess.Servers {
		how := "started by dbio for the run, stopped after it"
		if !srv.Started {
			how = "run by the user"
		}
		notes = append(notes, fmt.Sprintf("host %s: fio server %s (%s), %s", srv.Host.Name, srv.Arg, how, fr.sess.Versions[srv.Host.Name]))
	}
	warnings = append(warnings, r.measureClocks(ctx, fr, shell, "start")...)
	defer func() {
		if ctx.Err() != nil || len(fr.hosts) == 0 {
			_ = r.saveHosts(fr)
			return
		}
		w := r.measureClocks(context.WithoutCancel(ctx), fr, shell, "end")
		if uerr := r.sink.UpdateRun(func(run *results.Run) { run.Warnings = append(run.Warnings, w...) }); uerr != nil {
			err = errors.Join(err, uerr)
		}
		if serr := r.saveHosts(fr); serr != nil {
			err = errors.Join(err, serr)
		}
	}()
	if err := r.sink.UpdateRun(func(run *results.Run) {
		if run.Environment.Versions == nil {
			run.Environment.Versions = map[string]string{}
		}
		run.Environment.Versions["fio"] = version
		for h, v := range fr.sess.Versions {
			run.Environment.Versions["fio on "+h] = v
		}
		run.Notes = append(run.Notes, notes...)
		run.Warnings = append(run.Warnings, warnings...)
	}); err != nil {
		return nil, err
	}
	labels := TargetLabels(c.Targets)
	for i, t := range targets {
		srv := fr.sess.Server(t.Host)
		if srv == nil {
			continue // unreachable: failed above
		}
		pl, err := r.prepareRemoteTarget(ctx, fr, shell, srv.Host, t, labels[i])
		if fleet.Unreachable(err) && ctx.Err() == nil {
			fr.failHost(srv.Host, "", r.now(), err)
			r.say("warning: host %s cannot be reached any more, and the run goes on without it: %v", t.Host, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		fr.places[t.Host] = append(fr.places[t.Host], pl)
	}
	if len(fr.hosts) == 0 {
		return nil, fmt.Errorf("%w: every host failed before the first point (%s)", fleet.ErrNoHostLeft, strings.Join(fr.leftOut, "; "))
	}
	tw := r.startTelemetry(ctx, fr, shell, targets)
	if err := r.sink.UpdateRun(func(run *results.Run) { run.Warnings = append(run.Warnings, tw...) }); err != nil {
		return nil, err
	}
	if err := r.saveHosts(fr); err != nil {
		return nil, err
	}
	step := firstStep
	for i, pt := range r.plan.Points {
		res, err := r.fleetPoint(ctx, fr, step, i, pt)
		step++
		done = append(done, res)
		if serr := r.saveHosts(fr); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			return done, err
		}
	}
	r.summarize(done)
	return done, nil
}

// prepareRemoteTarget makes dbio's directory on a host's target and finds
// the engine and O_DIRECT setting fio can use there, as for a local
// target; the working file is laid out by fio itself at the first point.
func (r *runner) prepareRemoteTarget(ctx context.Context, fr *fleetRun, shell fleet.Shell, h fleet.Host, t fleet.Target, label string) (placement, error) {
	work, err := shell.PrepareTarget(ctx, h, t.Path, target.DirName, results.MarkerName, WorkSubdir)
	if err != nil {
		return placement{}, err
	}
	// The target is held for the run, as a local one is, before anything
	// is written in it.
	holder, _ := json.Marshal(target.Holder{PID: os.Getpid(), Command: []string{"dbio", "(a fleet run, from another machine)"}, Started: r.now().UTC()})
	lock, err := shell.LockTarget(ctx, h, path.Join(t.Path, target.DirName), target.LockName, string(holder))
	var busy *fleet.BusyTargetError
	if errors.As(err, &busy) {
		var who target.Holder
		_ = json.Unmarshal([]byte(busy.Holder), &who)
		return placement{}, &target.BusyError{Target: t.String(), Holder: who}
	}
	if err != nil {
		return placement{}, err
	}
	fr.locks[h.Name] = append(fr.locks[h.Name], lock)
	try := func(ctx context.Context, file, engine string, direct bool) (string, error) {
		script := fmt.Sprintf("%s --name=probe --filename=%s --size=1m --bs=4k --rw=read --ioengine=%s --direct=%d --output-format=json 2>&1; rm -f %s",
			fleet.ShellQuote(h.FioProgram()), fleet.ShellQuote(escapeFilename(file)), engine, boolInt(direct), fleet.ShellQuote(file))
		out, err := shell.Run(ctx, h, script)
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
	engine, direct, warnings, err := r.probe(ctx, work, "", try)
	if err != nil {
		return placement{}, fmt.Errorf("target %s: %w", t, err)
	}
	pl := placement{Label: label, File: path.Join(work, workFile), Size: r.plan.Config.Size, Engine: engine, Direct: direct}
	var sizeNote string
	if pl.Size == 0 {
		if pl.Size, sizeNote, err = remoteSize(ctx, shell, h, t.Path, pl.File); err != nil {
			return placement{}, fmt.Errorf("target %s: %w", t, err)
		}
		r.say("host %s: %s", h.Name, sizeNote)
	}
	note, err := r.layoutRemote(ctx, shell, h, pl)
	if err != nil {
		return placement{}, fmt.Errorf("target %s: %w", t, err)
	}
	for i, w := range warnings {
		warnings[i] = fmt.Sprintf("host %s: %s", h.Name, w)
		r.say("warning: %s", warnings[i])
	}
	err = r.sink.UpdateRun(func(run *results.Run) {
		run.Environment.Targets = append(run.Environment.Targets, results.TargetInfo{Role: target.RoleData, Path: t.String(), Host: t.Host})
		run.Warnings = append(run.Warnings, warnings...)
		if sizeNote != "" {
			run.Notes = append(run.Notes, fmt.Sprintf("%s: %s", t, sizeNote))
		}
		run.Notes = append(run.Notes, fmt.Sprintf("%s: %s", t, note))
	})
	return pl, err
}

// sizeScript prints what the working file's default size is drawn from,
// on the host: the target's free bytes and file system type (stat -f), the
// host's memory (MemTotal, in kB) and the size of a working file dbio may
// replace (0 without one).
const sizeScript = `t=%s; f=%s
stat -f -c '%%a %%S %%T' "$t" || exit 5
while read k v u; do [ "$k" = MemTotal: ] && echo "$v"; done < /proc/meminfo
if [ -f "$f" ] && [ ! -L "$f" ]; then stat -c %%s "$f"; else echo 0; fi
`

// remoteSize is the working file's default size on a host's target, by
// the rule a local target follows (SizeRule), from the host's own memory
// and the target's free space there.
func remoteSize(ctx context.Context, shell fleet.Shell, h fleet.Host, dir, file string) (int64, string, error) {
	out, err := shell.Run(ctx, h, fmt.Sprintf(sizeScript, fleet.ShellQuote(dir), fleet.ShellQuote(file)))
	if err != nil {
		return 0, "", fmt.Errorf("sizing the working file: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	bad := fmt.Errorf("sizing the working file: the host printed %q, want free blocks, block size and file system, memory in kB, and a size: pass --size", out)
	if len(lines) != 3 {
		return 0, "", bad
	}
	fs := strings.Fields(lines[0])
	if len(fs) < 3 {
		return 0, "", bad
	}
	blocks, err1 := strconv.ParseUint(fs[0], 10, 64)
	bsize, err2 := strconv.ParseUint(fs[1], 10, 64)
	memKB, err3 := strconv.ParseUint(strings.TrimSpace(lines[1]), 10, 64)
	existing, err4 := strconv.ParseUint(strings.TrimSpace(lines[2]), 10, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil || bsize == 0 || blocks > math.MaxUint64/bsize {
		return 0, "", bad
	}
	size, why, err := DefaultSize(memKB*1024, blocks*bsize+existing, fs[2])
	if err != nil {
		return 0, "", err
	}
	return size, why, nil
}

// layoutRemote lays out the working file on a host's target before the
// first point, as on a local target: sequentially, under a temporary name
// renamed when complete, so that no point pays for it (a host laying out
// while the others measure would shrink the common window) and an
// interrupted layout is never reused. A file of dbio's of the right size
// is reused.
func (r *runner) layoutRemote(ctx context.Context, shell fleet.Shell, h fleet.Host, pl placement) (string, error) {
	q := fleet.ShellQuote
	script := fmt.Sprintf(`f=%s; p=%s
if [ -L "$f" ]; then echo "$f is a symbolic link: dbio does not follow it"; exit 4; fi
if [ -f "$f" ] && [ "$(stat -c %%s "$f")" = %d ]; then echo reused; exit 0; fi
rm -f "$p" "$f"
%s --name=layout --filename=%s --size=%d --rw=write --bs=1m --iodepth=8 --ioengine=%s --direct=%d --end_fsync=1 --output-format=json >/dev/null || { rm -f "$p"; exit 5; }
if [ "$(stat -c %%s "$p")" != %d ]; then rm -f "$p"; echo "fio left a short file"; exit 5; fi
mv "$p" "$f" && echo "laid out"
`, q(pl.File), q(pl.File+".partial"), pl.Size, q(h.FioProgram()), q(escapeFilename(pl.File+".partial")), pl.Size, pl.Engine, boolInt(pl.Direct), pl.Size)
	start := r.now()
	out, err := shell.Run(ctx, h, script)
	if err != nil {
		return "", fmt.Errorf("laying out the working file: %w", err)
	}
	if strings.TrimSpace(out) == "reused" {
		note := fmt.Sprintf("reused the working file %s (%s) laid out by an earlier run", pl.File, units.FormatBytes(uint64(pl.Size)))
		r.say("host %s: %s", h.Name, note)
		return note, nil
	}
	took := r.now().Sub(start)
	r.say("host %s: laid out the %s working file in %.1f s", h.Name, units.FormatBytes(uint64(pl.Size)), took.Seconds())
	return fmt.Sprintf("laid out the working file %s (%s) in %.1f s over ssh (1m sequential writes)", pl.File, units.FormatBytes(uint64(pl.Size)), took.Seconds()), nil
}

// fleetPoint runs one point on every host still in the run at once, as
// step index. A host whose fio server ends during the point is failed and
// left out; the point's figures are those of the hosts that completed it.
func (r *runner) fleetPoint(ctx context.Context, fr *fleetRun, index, n int, pt results.FioPlan) (results.FioPoint, error) {
	// The point runs on the targets of the hosts still in the run.
	pt.Targets = slices.DeleteFunc(slices.Clone(pt.Targets), func(t string) bool {
		ft, err := fleet.ParseTarget(t)
		return err == nil && !slices.ContainsFunc(fr.hosts, func(h fleet.Host) bool { return h.Name == ft.Host })
	})
	res := results.FioPoint{Step: index, FioPlan: pt, Profile: r.plan.Profile.Name(), JobFile: filepath.Join(HostsDir, "*", JobFileName), Output: OutputFileName}
	first := fr.places[fr.hosts[0].Name][0]
	res.Engine, res.Direct = first.Engine, first.Direct && !pt.Buffered
	fail := func(status results.Status, err error) (results.FioPoint, error) { return r.failed(res, status, err) }
	stepDir, err := r.sink.StepDir(index, pt.Name)
	if err != nil {
		return res, err
	}
	args := []string{"--output-format=json+"}
	for _, h := range fr.hosts {
		dir := filepath.Join(stepDir, HostsDir, h.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fail(results.StatusFailed, err)
		}
		job, err := JobFile(pt, r.plan.Profile.Name(), fr.places[h.Name])
		if err == nil {
			err = results.WriteFileAtomic(filepath.Join(dir, JobFileName), []byte(job))
		}
		if err != nil {
			return fail(results.StatusFailed, err)
		}
		// A job file directly after a --client goes to that server alone.
		args = append(args, "--client="+fr.sess.Server(h.Name).Arg, filepath.Join(HostsDir, h.Name, JobFileName))
	}
	r.say("[%d/%d] %s: %s", n+1, len(r.plan.Points), pt.Name, Describe(pt))
	res.Started = r.now()
	stopLive := r.live(n, pt)
	watch := r.watchPoint(ctx, fr, stepDir, pt)
	out, runErr := r.exec.Run(ctx, execx.Cmd{Name: r.fioPath, Args: args, Dir: stepDir, Setsid: true, ParentDeathSignal: syscall.SIGTERM})
	stopLive()
	res.Ended = r.now()
	watchErr := watch.end()
	if werr := results.WriteFileAtomic(filepath.Join(stepDir, OutputFileName), out.Stdout); werr != nil {
		return fail(results.StatusFailed, werr)
	}
	fileErr := fr.fileHosts(stepDir, out.Stdout)
	parsed, parseErr := fioformat.Parse(bytes.NewReader(out.Stdout))
	if parsed != nil {
		res.FioNotes = parsed.Notes
	}
	if ctx.Err() != nil {
		return fail(results.StatusInterrupted, &stopped{err: ctx.Err(), msg: fmt.Sprintf("point %s was interrupted after %.0f s (the hosts' partial reports are in %s, not counted)",
			pt.Name, res.Ended.Sub(res.Started).Seconds(), stepDir)})
	}
	// A host whose server ended, or from which fio's client brought back
	// no report, took its part of the point with it (the client may then
	// fail too, for that host's sake alone): it is failed, its server
	// stopped, and the point goes on over the others. When no host reported
	// and every server still runs, the point itself failed.
	type lostHost struct {
		h   fleet.Host
		why error
	}
	var lost []lostHost
	confirmed := false
	for _, h := range fr.hosts {
		srv := fr.sess.Server(h.Name)
		reported := parsed != nil && len(parsed.HostGroups(srv.Address)) > 0
		switch {
		case !srv.Alive():
			confirmed = true
			lost = append(lost, lostHost{h, fmt.Errorf("its fio server (%s) ended during point %s", srv.Arg, pt.Name)})
		case !reported:
			// A server's session may take a moment to end after the client
			// lost it, and a server the user runs is asked directly.
			if srv.EndsWithin(5*time.Second) || (!srv.Started && !srv.Answers(ctx)) {
				confirmed = true
			}
			lost = append(lost, lostHost{h, fmt.Errorf("fio's client brought back no report from its fio server (%s) for point %s", srv.Arg, pt.Name)})
		}
	}
	if len(lost) == len(fr.hosts) && !confirmed {
		lost = nil // the point failed, not the hosts: said below
	}
	var gone []string
	for _, l := range lost {
		fr.failHost(l.h, pt.Name, res.Ended, l.why)
		gone = append(gone, l.h.Name)
		r.say("warning: host %s failed: %v; the run goes on without it", l.h.Name, l.why)
	}
	if len(gone) > 0 {
		if uerr := r.sink.UpdateRun(func(run *results.Run) {
			run.Warnings = append(run.Warnings, fmt.Sprintf("host(s) %s failed during point %s (their fio server ended, or fio's client got no report from it): the point's figures and the later points are over the other hosts", strings.Join(gone, ", "), pt.Name))
		}); uerr != nil {
			return fail(results.StatusFailed, uerr)
		}
		if len(fr.hosts) == 0 {
			return fail(results.StatusFailed, fmt.Errorf("point %s: %w: every host failed (%s)", pt.Name, fleet.ErrNoHostLeft, strings.Join(fr.leftOut, "; ")))
		}
		runErr = nil // the client failed for the hosts that are gone
		parseErr = nil
		if parsed == nil {
			parseErr = fmt.Errorf("fio's client left no report after host(s) %s failed", strings.Join(gone, ", "))
		}
	}
	switch {
	case runErr != nil:
		return fail(results.StatusFailed, explainFioFailure(pt.Name, runErr))
	case parseErr != nil:
		return fail(results.StatusFailed, fmt.Errorf("point %s: %w", pt.Name, parseErr))
	case fileErr != nil:
		return fail(results.StatusFailed, fmt.Errorf("point %s: %w", pt.Name, fileErr))
	case watchErr != nil:
		return fail(results.StatusFailed, fmt.Errorf("point %s: the hosts' telemetry: %w", pt.Name, watchErr))
	}
	fleetRes := &results.FioFleet{LeftOut: slices.Clone(fr.leftOut)}
	var seconds [][]fioformat.Second
	var usr, sys float64
	for _, h := range fr.hosts {
		srv := fr.sess.Server(h.Name)
		var g *fioformat.Group
		for i := range parsed.Groups {
			if parsed.Groups[i].Host == srv.Address {
				if g != nil {
					return fail(results.StatusFailed, fmt.Errorf("point %s: fio reported several groups for host %s, want 1", pt.Name, h.Name))
				}
				g = &parsed.Groups[i]
			}
		}
		switch {
		case g == nil:
			return fail(results.StatusFailed, fmt.Errorf("point %s: fio's client reported nothing for host %s (%s)", pt.Name, h.Name, srv.Arg))
		case g.Error != 0:
			return fail(results.StatusFailed, fmt.Errorf("point %s: fio on host %s reported error %d (%s)", pt.Name, h.Name, g.Error, syscall.Errno(g.Error)))
		case g.Total == nil:
			return fail(results.StatusFailed, fmt.Errorf("point %s: fio on host %s did no I/O", pt.Name, h.Name))
		}
		dir := filepath.Join(stepDir, HostsDir, h.Name)
		logs, err := fioformat.ReadLogs(dir)
		if err != nil {
			return fail(results.StatusFailed, fmt.Errorf("point %s: host %s's per-second logs: %w", pt.Name, h.Name, err))
		}
		// The host's seconds on this machine's clock, before the window is
		// drawn: the window then pairs seconds measured at the same time.
		merged, _ := fioformat.MergeSeconds(logs)
		secs := onThisClock(merged, fr.offsets[h.Name])
		if err := fioformat.CompressHistLogs(dir); err != nil {
			return fail(results.StatusFailed, fmt.Errorf("point %s: %w", pt.Name, err))
		}
		seconds = append(seconds, secs)
		usr += g.UsrCPU / float64(len(fr.hosts))
		sys += g.SysCPU / float64(len(fr.hosts))
		res.ElapsedS = max(res.ElapsedS, g.ElapsedS)
		pl := fr.places[h.Name][0]
		host := results.FioHost{HostTelemetry: results.HostTelemetry{Host: h.Name}, Server: srv.Arg, Dir: filepath.Join(HostsDir, h.Name), Engine: pl.Engine, Direct: pl.Direct && !pt.Buffered, FioIOPS: g.Total.IOPS}
		if len(secs) > 0 {
			host.FirstSecond, host.LastSecond = secs[0].Time.UTC(), secs[len(secs)-1].Time.UTC()
		}
		fleetRes.Hosts = append(fleetRes.Hosts, host)
	}
	figs, err := Fleet(seconds)
	if err != nil {
		var logged []string
		for i, h := range fr.hosts {
			logged = append(logged, h.Name+" "+describeSeconds(seconds[i]))
		}
		return fail(results.StatusFailed, fmt.Errorf("point %s: %w (%s)", pt.Name, err, strings.Join(logged, "; ")))
	}
	fleetRes.WindowStart, fleetRes.WindowEnd, fleetRes.Seconds = figs.Start, figs.End, figs.Seconds
	if figs.Unbinned {
		warning := fmt.Sprintf("point %s: no second had every host's latency histogram (fio logs one when an I/O completes, so a host whose I/Os stalled logs it late): its throughput is over the %d s all hosts logged, its mean latency over those of them whose latency fio logged, and it has no percentiles", pt.Name, figs.Seconds)
		r.say("warning: %s", warning)
		if uerr := r.sink.UpdateRun(func(run *results.Run) { run.Warnings = append(run.Warnings, warning) }); uerr != nil {
			return fail(results.StatusFailed, uerr)
		}
	}
	earliest, latest := fleetRes.Hosts[0].FirstSecond, fleetRes.Hosts[0].FirstSecond
	for _, h := range fleetRes.Hosts[1:] {
		if h.FirstSecond.Before(earliest) {
			earliest = h.FirstSecond
		}
		if h.FirstSecond.After(latest) {
			latest = h.FirstSecond
		}
	}
	fleetRes.StartSpreadMS = latest.Sub(earliest).Milliseconds()
	measured := res.Started.Add(time.Duration(pt.RampS) * time.Second)
	var noTelemetry []string
	for i := range fleetRes.Hosts {
		fh := &fleetRes.Hosts[i]
		fh.FioDirections = figs.Hosts[i]
		fh.HostTelemetry = watch.hostTelemetry(fh.Host, figs.Start, figs.End, measured)
		if fh.System == nil {
			why := fr.record[fh.Host].Telemetry
			if why == "" {
				why = "no sample of its node exporter during the point"
			}
			noTelemetry = append(noTelemetry, fh.Host+": "+why)
		}
	}
	fleetRes.System = fleetSystem(fleetRes.Hosts, noTelemetry)
	res.FioDirections = figs.Fleet
	res.UsrCPU, res.SysCPU, res.Fleet = usr, sys, fleetRes
	if res.Total == nil {
		return fail(results.StatusFailed, fmt.Errorf("point %s: the hosts did no I/O in the seconds all of them were measuring", pt.Name))
	}
	if err := r.fleetSeries(&res, seconds, figs); err != nil {
		return fail(results.StatusFailed, err)
	}
	res.Status = results.StatusCompleted
	if err := r.writeStep(res, histograms(res.FioDirections)); err != nil {
		return res, err
	}
	all := fmt.Sprintf("all %d hosts", len(fleetRes.Hosts))
	if len(fleetRes.Hosts) == 2 {
		all = "both hosts"
	}
	r.say("  fleet: %s, over the %d s %s were measuring (their first seconds %d ms apart)", headline(res), figs.Seconds, all, fleetRes.StartSpreadMS)
	if s := fleetRes.System; s != nil {
		whose := fmt.Sprintf("the mean of %d hosts' shares", len(s.Hosts))
		if len(s.Hosts) == 1 {
			whose = "host " + s.Hosts[0] + " alone"
		}
		r.say("         %s (CPU: %s)", systemLine(s.HostSystem), whose)
	}
	for _, h := range fleetRes.Hosts {
		r.say("    %-12s %s", h.Host, hostLine(h))
	}
	for _, l := range fleetRes.LeftOut {
		r.say("    left out: %s", l)
	}
	return res, nil
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

// fileHosts puts each live host's part of the client's output in the host's
// directory: its logs (which fio's client writes here, named
// <log>.<server address>) under their own names, and its entries of the
// json+ report, in a report of its own.
func (fr *fleetRun) fileHosts(stepDir string, report []byte) error {
	entries, err := os.ReadDir(stepDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range fr.hosts {
		srv := fr.sess.Server(h.Name)
		suffix := "." + srv.Address
		dir := filepath.Join(stepDir, HostsDir, srv.Host.Name)
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), suffix)
			if !ok || !e.Type().IsRegular() || !strings.Contains(name, ".log") {
				continue
			}
			if err := os.Rename(filepath.Join(stepDir, e.Name()), filepath.Join(dir, name)); err != nil {
				errs = append(errs, err)
			}
		}
		part, err := fioformat.HostReport(report, srv.Address)
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

// fleetSeries appends the fleet's seconds to series.csv: IOPS and MB/s
// summed over the hosts, p99 from their merged bins, for the seconds of
// the common window.
func (r *runner) fleetSeries(res *results.FioPoint, hosts [][]fioformat.Second, figs FleetFigures) error {
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
		if err := r.sink.AppendSeries(results.SeriesRow{Time: figs.clock.time(w), Step: res.Name, Phase: "measure", Values: vals}); err != nil {
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
