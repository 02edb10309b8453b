package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/fleet"
	"dbio/internal/remote"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/units"
)

// Tenants is a run's body that runs a database workload on several hosts
// at once: dbio itself on each host, over the user's ssh, starting the
// managed engine on that host's target and driving it there. Every host
// loads, then waits at a start barrier until the coordinator releases them
// all at one instant; their results directories come back under the run's
// own, and the run's steps are the fleet's. The plan's own targets and
// engine are unused here.
type Tenants struct {
	Shell remote.Shell
	// Binary is this dbio, copied to a host that lacks it.
	Binary remote.Binary
	Hosts  []TenantHost
	// Workload names the workload every host runs.
	Workload string
	// Each is the body every host's dbio runs, as its command line asks.
	Each Body
	// Args is the command line a host's dbio runs: the workload's, on the
	// host's target, writing its results directory under results with
	// the given name, and waiting at the start barrier.
	Args func(h TenantHost, results, name string) []string
	// Margin is how long after the last host said it was ready the start
	// instant is: time for it to reach every host before it comes.
	Margin time.Duration
	// CreateTargets lets each host's dbio make its target (--create-target);
	// otherwise a target missing on its host is refused before the run.
	CreateTargets bool
}

// needs: nothing of this machine but the results; every host's target is
// checked over ssh before anything is written.
func (t Tenants) needs() needs {
	n := needs{elsewhere: t.checkTargets}
	for _, h := range t.Hosts {
		n.targets = append(n.targets, results.TargetInfo{Role: target.RoleData, Path: h.Target, Host: h.Host.Name})
	}
	return n
}

func (t Tenants) describe(Setup) string {
	names := make([]string, len(t.Hosts))
	for i, h := range t.Hosts {
		names[i] = fmt.Sprintf("%s (%s)", h.Host.Name, h.Target)
	}
	what := t.Workload
	if n, ok := t.Each.(Noisy); ok {
		what = "noisy neighbours (" + describeNoisy(n) + ")"
	}
	return fmt.Sprintf("%s on %d hosts at once, dbio on each driving its own server: %s", what, len(t.Hosts), strings.Join(names, ", "))
}

// configure records what every host runs.
func (t Tenants) configure(c *results.RunConfig) {
	if t.Each != nil {
		t.Each.configure(c)
	}
}

func (t Tenants) run(ctx context.Context, ss *session) error {
	_, noisy := t.Each.(Noisy)
	return (&tenantRun{t: t, name: ss.Name, noisy: noisy, env: ss.env, dir: ss.dir}).execute(ctx, ss.out)
}

// TenantHost is a host and the target its tenant runs on.
type TenantHost struct {
	Host   fleet.Host
	Target string
}

// DefaultTenantMargin is the start barrier's margin when none is given.
const DefaultTenantMargin = time.Second

// checkTargets checks every host's target over ssh, all at once,
// before anything is written: the targets' problems are bad input (each
// host's dbio checks the rest itself); a host not reached is an error.
func (t Tenants) checkTargets(ctx context.Context) error {
	if len(t.Hosts) == 0 || t.Args == nil {
		return errors.New("a tenants run needs hosts and their command line")
	}
	errs := make([]error, len(t.Hosts))
	var wg sync.WaitGroup
	for i, h := range t.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = t.Shell.CheckTarget(ctx, h.Host, h.Target, t.CreateTargets)
		}()
	}
	wg.Wait()
	var bad, other []error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, remote.ErrTarget):
			bad = append(bad, err)
		default:
			other = append(other, err)
		}
	}
	if len(other) > 0 {
		return errors.Join(append(other, bad...)...)
	}
	return problems(bad)
}

// tenantRun is one run of tenants being executed.
type tenantRun struct {
	t Tenants
	// name is the run's, which each host's is named after; noisy says the
	// hosts run the noisy-neighbour study.
	name  string
	noisy bool
	env   Env
	dir   *results.Dir

	rec results.Tenants
	// offsets are the hosts' clocks against the coordinator's, at the
	// start (zero for a clock that could not be read).
	offsets []time.Duration
	bins    []remote.Installed
	remotes []remote.ResultsDir
	tenants []*remote.Tenant
}

func (r *tenantRun) execute(ctx context.Context, out *Outcome) (err error) {
	// The hosts' lines and the coordinator's own come from several goroutines.
	r.env.Out = &lockedWriter{w: r.env.Out}
	n := len(r.t.Hosts)
	r.rec = results.Tenants{Workload: r.t.Workload, Driver: "host", Hosts: make([]results.TenantHost, n)}
	for i, h := range r.t.Hosts {
		r.rec.Hosts[i] = results.TenantHost{Host: h.Host.Name, Destination: h.Host.Destination, Target: h.Target, Status: results.StatusRunning}
	}
	// Whatever happens, run.json says how far each host got.
	defer func() {
		if uerr := r.dir.UpdateRun(func(run *results.Run) { run.Tenants = &r.rec }); uerr != nil && err == nil {
			err = uerr
		}
	}()
	if err := r.prepare(ctx); err != nil {
		r.discard(ctx)
		return err
	}
	r.measureClocks(ctx, "start")
	runErr := r.barrierAndRun(ctx)
	r.measureClocks(context.WithoutCancel(ctx), "end")
	// The tenants have ended (or were stopped): their results come back,
	// also from a run that failed or was interrupted.
	if cerr := r.collect(ctx); cerr != nil && runErr == nil {
		runErr = cerr
	}
	steps, checks, ferr := r.fleetSteps()
	out.Steps, out.Checks = steps, checks
	if uerr := r.dir.UpdateRun(func(run *results.Run) { run.Checks = checks }); uerr != nil && ferr == nil {
		ferr = uerr
	}
	if runErr != nil {
		return runErr
	}
	return ferr
}

// prepare copies dbio to every host that lacks this build and makes each
// host's results directory, all hosts at once.
func (r *tenantRun) prepare(ctx context.Context) error {
	n := len(r.t.Hosts)
	r.bins, r.remotes = make([]remote.Installed, n), make([]remote.ResultsDir, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, h := range r.t.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bin, err := r.t.Shell.Install(ctx, h.Host, r.t.Binary)
			if err != nil {
				errs[i] = err
				return
			}
			r.bins[i] = bin
			r.rec.Hosts[i].Binary, r.rec.Hosts[i].Copied = bin.Path, bin.Copied
			r.remotes[i], errs[i] = r.t.Shell.MakeResultsDir(ctx, h.Host, r.dir.Run().ID+"-"+h.Host.Name)
		}()
	}
	wg.Wait()
	for i, h := range r.t.Hosts {
		if errs[i] != nil {
			r.rec.Hosts[i].Status, r.rec.Hosts[i].Error = results.StatusFailed, errs[i].Error()
			continue
		}
		how := "present"
		if r.bins[i].Copied {
			how = "copied"
		}
		fmt.Fprintf(r.env.Out, "host %s: dbio %s (%s), results in %s while it runs\n", h.Host.Name, how, r.bins[i].Path, r.remotes[i].Path)
	}
	return errors.Join(errs...)
}

// barrierAndRun starts every host's dbio and holds each step of theirs at
// the start barrier: once every host is ready for the step (loaded, for the
// first; done with the one before, for the others), all are released at
// one instant. It returns once every host's run has ended, or at the first
// that failed. When ctx ends, the hosts are stopped in order: each keeps
// its results.
func (r *tenantRun) barrierAndRun(ctx context.Context) error {
	n := len(r.t.Hosts)
	r.tenants = make([]*remote.Tenant, n)
	defer r.stopAll()
	for i, h := range r.t.Hosts {
		name := r.name + "-" + h.Host.Name
		tn, err := r.t.Shell.Start(ctx, h.Host, r.bins[i].Path, r.t.Args(h, r.remotes[i].Path, name), r.env.Out)
		if err != nil {
			return err
		}
		r.tenants[i] = tn
	}
	fmt.Fprintf(r.env.Out, "start barrier: every host loads first; each step starts once all %d are ready for it\n", n)
	for k := 0; ; k++ {
		what := "was ready"
		if k > 0 {
			what = fmt.Sprintf("was ready for its step %d", k+1)
		}
		// A host whose run ended well before step k (a stop rule of its
		// own) has no such step; the others run it without it. The first
		// step is every host's.
		ready, err := r.waitAll(ctx, func(_ int, tn *remote.Tenant) <-chan struct{} { return tn.Ready(k) }, what, k > 0)
		if err != nil {
			return err
		}
		if !slices.Contains(ready, true) {
			return nil // every host's run has ended
		}
		if err := r.release(ctx, k, ready); err != nil {
			return err
		}
	}
}

// measureClocks reads every host's clock against the coordinator's, at
// once, and records it under at ("start" or "end"). The start's offsets
// put the hosts on the coordinator's clock; a host further off than
// fleet.ClockWarnOffset, or whose clock cannot be read (it is then taken
// as it is), is a warning.
func (r *tenantRun) measureClocks(ctx context.Context, at string) {
	n := len(r.t.Hosts)
	if r.offsets == nil {
		r.offsets = make([]time.Duration, n)
	}
	hosts := make([]fleet.Host, n)
	for i, h := range r.t.Hosts {
		hosts[i] = h.Host
	}
	check := r.t.Shell.CheckClocks(ctx, hosts, at, r.env.Now)
	for i := range hosts {
		if rec, ok := check.Record(i); ok {
			r.rec.Hosts[i].Clock = append(r.rec.Hosts[i].Clock, rec)
			if at == "start" {
				r.offsets[i] = check.Readings[i].Offset
			}
		}
	}
	warnings := check.Warnings(", and is taken as it is",
		"dbio starts the hosts and lines their seconds up by this machine's clock, from the offsets at the start, so a clock that drifts during the run moves its host against the others; synchronize the clocks (chrony, systemd-timesyncd)")
	if line := check.Line(); line != "" {
		fmt.Fprintln(r.env.Out, line)
	}
	for _, w := range warnings {
		fmt.Fprintf(r.env.Out, "warning: %s\n", w)
	}
	if len(warnings) > 0 {
		_ = r.dir.UpdateRun(func(run *results.Run) { run.Warnings = append(run.Warnings, warnings...) })
	}
}

// release starts step k of the ready hosts at one instant, margin ahead,
// and records when each started.
func (r *tenantRun) release(ctx context.Context, k int, ready []bool) error {
	margin := r.t.Margin
	if margin <= 0 {
		margin = DefaultTenantMargin
	}
	at := r.env.Now().Add(margin)
	for i, tn := range r.tenants {
		if !ready[i] {
			continue
		}
		// The instant on the host's clock: all start at once by the
		// coordinator's, whatever their clocks' offsets.
		if err := tn.Release(at.Add(r.offsets[i])); err != nil {
			return err
		}
	}
	// A host not released needs no wait: its event is one that happened.
	happened := make(chan struct{})
	close(happened)
	if _, err := r.waitAll(ctx, func(i int, tn *remote.Tenant) <-chan struct{} {
		if !ready[i] {
			return happened
		}
		return tn.Started(k)
	}, fmt.Sprintf("started its step %d", k+1), false); err != nil {
		return err
	}
	b := results.TenantBarrier{At: at}
	var first, last time.Time
	var lates []string
	for i, tn := range r.tenants {
		if !ready[i] {
			continue
		}
		s := tn.StartedAt(k).Add(-r.offsets[i])
		late := results.Round6(float64(s.Sub(at)) / float64(time.Millisecond))
		b.Hosts = append(b.Hosts, results.TenantStart{Host: r.rec.Hosts[i].Host, Started: s, LateMS: late})
		if k == 0 {
			r.rec.Hosts[i].Started, r.rec.Hosts[i].LateMS = s, late
		}
		if first.IsZero() || s.Before(first) {
			first = s
		}
		if s.After(last) {
			last = s
		}
		lates = append(lates, fmt.Sprintf("%s %+.1f ms", r.t.Hosts[i].Host.Name, late))
	}
	b.SkewMS = results.Round6(float64(last.Sub(first)) / float64(time.Millisecond))
	r.rec.Steps = append(r.rec.Steps, b)
	if k == 0 {
		r.rec.BarrierAt, r.rec.SkewMS = at, b.SkewMS
		fmt.Fprintf(r.env.Out, "start barrier: every host started at %s (%s; skew %.1f ms)\n", at.Format("15:04:05.000"), strings.Join(lates, ", "), b.SkewMS)
	} else {
		fmt.Fprintf(r.env.Out, "start barrier: step %d: %d hosts started at %s (%s; skew %.1f ms)\n", k+1, len(lates), at.Format("15:04:05.000"), strings.Join(lates, ", "), b.SkewMS)
	}
	_ = r.dir.UpdateRun(func(run *results.Run) { run.Tenants = &r.rec })
	return nil
}

// waitAll waits until every tenant's event (event of its index and itself)
// has happened, or its run has ended, and says which had the event. A run
// that ended before it fails the wait, at once; one that ended without an
// error does not, when mayEnd.
func (r *tenantRun) waitAll(ctx context.Context, event func(i int, tn *remote.Tenant) <-chan struct{}, what string, mayEnd bool) ([]bool, error) {
	type result struct {
		i   int
		err error
	}
	happened := make([]bool, len(r.tenants))
	res := make(chan result, len(r.tenants))
	for i, tn := range r.tenants {
		ev := event(i, tn)
		go func() {
			select {
			case <-ev:
				happened[i] = true
				res <- result{i, nil}
			case <-tn.Ended():
				select {
				case <-ev: // it happened just before the end
					happened[i] = true
					res <- result{i, nil}
					return
				default:
				}
				err := tn.Err()
				if err == nil && mayEnd {
					res <- result{i, nil}
					return
				}
				if err == nil {
					err = errors.New("dbio there ended")
				}
				res <- result{i, fmt.Errorf("host %s ended before it %s: %w", tn.Host.Name, what, err)}
			case <-ctx.Done():
				res <- result{i, ctx.Err()}
			}
		}()
	}
	for range r.tenants {
		x := <-res
		if x.err != nil {
			if !errors.Is(x.err, ctx.Err()) || ctx.Err() == nil {
				r.rec.Hosts[x.i].Error = x.err.Error()
			}
			return nil, x.err
		}
	}
	return happened, nil
}

// stopAll stops every tenant still running, all at once: its input
// closes, it stops its run (keeping its results) and its server.
func (r *tenantRun) stopAll() {
	fleet.StopAll(r.tenants, func(tn *remote.Tenant) error { tn.Stop(); return nil })
}

// collect brings every host's results directory back into hosts/<name>
// and removes the copy dbio made on the host.
func (r *tenantRun) collect(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx) // an interrupted run keeps its hosts' results too
	var errs []error
	// notBack says, on the terminal and in the host's record, that its
	// results did not come back and where they are: the run's own error
	// may be another (an interrupted run's), which would hide it.
	notBack := func(i int, err error, where string) {
		err = fmt.Errorf("its results did not come back: %w; they are %s", err, where)
		fmt.Fprintf(r.env.Out, "warning: host %s: %v\n", r.t.Hosts[i].Host.Name, err)
		if h := &r.rec.Hosts[i]; h.Error == "" {
			h.Error = err.Error()
		} else {
			h.Error += "; " + err.Error()
		}
		errs = append(errs, fmt.Errorf("host %s: %w", r.t.Hosts[i].Host.Name, err))
	}
	for i, rd := range r.remotes {
		if rd.Path == "" {
			continue
		}
		h := r.t.Hosts[i].Host
		onHost := fmt.Sprintf("left on the host, in %s (ssh %s)", rd.Path, h.Destination)
		local := filepath.Join(r.dir.Path, "hosts", h.Name)
		if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil { // Fetch makes local, and removes it on any error
			notBack(i, err, onHost)
			continue
		}
		got, err := r.t.Shell.Fetch(ctx, rd, local)
		if err != nil {
			notBack(i, err, onHost)
			continue
		}
		if err := r.t.Shell.Remove(ctx, rd); err != nil {
			fmt.Fprintf(r.env.Out, "warning: host %s: %v\n", h.Name, err)
		}
		r.remotes[i] = remote.ResultsDir{}
		runs, _ := filepath.Glob(filepath.Join(local, "*", "run.json"))
		if len(runs) != 1 {
			notBack(i, fmt.Errorf("%d results directories came back, want 1", len(runs)), "what came back, in "+local)
			continue
		}
		rel, _ := filepath.Rel(r.dir.Path, filepath.Dir(runs[0]))
		r.rec.Hosts[i].Dir = rel
		fmt.Fprintf(r.env.Out, "host %s: results back in %s (%d files, %s)\n", h.Name, rel, got.Files, units.FormatBytes(uint64(got.Bytes)))
	}
	return errors.Join(errs...)
}

// discard removes the results directories dbio made on the hosts for a
// run that never started: they hold nothing.
func (r *tenantRun) discard(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	for i, rd := range r.remotes {
		if rd.Path == "" {
			continue
		}
		if err := r.t.Shell.Remove(ctx, rd); err != nil {
			fmt.Fprintf(r.env.Out, "warning: host %s: %v\n", r.t.Hosts[i].Host.Name, err)
		}
		r.remotes[i] = remote.ResultsDir{}
	}
}

// fleetSteps writes the run's steps, the fleet's, as analysis folds them
// from the hosts' results that came back, and gathers their checks; the
// hosts' records take how each host's own run ended.
func (r *tenantRun) fleetSteps() ([]results.Step, []results.Check, error) {
	fold, err := analysis.FoldTenants(r.dir.Path, r.rec, r.noisy)
	r.rec.Hosts = fold.Hosts
	var steps []results.Step
	for i, fs := range fold.Steps {
		if werr := r.dir.WriteStep(fs.Step, fs.Histograms); werr != nil {
			return steps, fold.Checks, werr
		}
		steps = append(steps, fs.Step)
		r.show(i, len(fold.Steps), fs.Step)
	}
	if err != nil {
		return steps, fold.Checks, err
	}
	r.showBackups()
	return steps, fold.Checks, nil
}

// showBackups prints the backups each noisy host's tenants took, when
// on the coordinator's clock, counted from the run's start.
func (r *tenantRun) showBackups() {
	for _, h := range r.rec.Hosts {
		var parts []string
		for _, b := range h.Backups {
			part := fmt.Sprintf("%s cycle %d at %.1f s, %.1f s", b.Tenant, b.Cycle, b.Start.Sub(r.dir.Run().Started).Seconds(), b.Seconds)
			if b.Error != "" {
				part += " (failed)"
			}
			parts = append(parts, part)
		}
		if len(parts) > 0 {
			fmt.Fprintf(r.env.Out, "    %s backups: %s\n", h.Host, strings.Join(parts, "; "))
		}
	}
}

// show prints a fleet step: the fleet's row, and each host's beneath it.
func (r *tenantRun) show(i, count int, s results.Step) {
	fleet := s.Fleet
	if fleet == nil {
		return
	}
	w := r.env.Out
	fmt.Fprintf(w, "[%d/%d] %s: fleet over the %d s all %d hosts were measuring (their first seconds %.0f ms apart): %s  p99 %s\n",
		i+1, count, s.Name, fleet.Seconds, len(fleet.Hosts), fleet.StartSpreadMS, tenantFigures(s.Figures), latencyMS(fleet.Latency.P99US))
	for _, h := range fleet.Hosts {
		fmt.Fprintf(w, "    %-10s %s  p99 %s\n", h.Host, tenantFigures(h.Figures), latencyMS(h.Latency.P99US))
	}
}

func tenantFigures(figs []results.Figure) string {
	var parts []string
	for _, f := range figs {
		if f.Name == results.FigureLatencyP99 {
			continue
		}
		v := units.GroupThousands(int64(math.Round(f.Value)))
		if f.Value < 100 {
			v = fmt.Sprintf("%.1f", f.Value)
		}
		parts = append(parts, v+" "+f.Name.Def().Heading())
	}
	return strings.Join(parts, "  ")
}

func latencyMS(us int64) string { return fmt.Sprintf("%.1f ms", float64(us)/1000) }

// lockedWriter serializes writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
