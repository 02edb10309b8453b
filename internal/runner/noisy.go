package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/target"
)

// Noisy is a run's body of the noisy-neighbour study: Tenants servers of
// the plan's engine on its data target, each with its workload's database
// and Users users, measured quiet, then while BackupTenants of them back
// up Cycles times, Interval apart.
type Noisy struct {
	Tenants       int
	BackupTenants int
	Interval      time.Duration
	Cycles        int
	Users         int
	// RampUp is each phase's ramp-up, Quiet the quiet baseline's
	// measurement (the interference lasts as long as the backups, and at
	// least Quiet); run.json records them as the run's timing.
	RampUp time.Duration
	Quiet  time.Duration
}

// needs: each tenant's own server, started by the study itself in a
// directory of its own on the data target.
func (n Noisy) needs() needs {
	out := needs{servers: n.Tenants, users: []int{n.Users}, steps: 2, stepTime: n.RampUp + n.Quiet}
	for i := 1; i <= n.Tenants; i++ {
		out.subdirs = append(out.subdirs, tenantSubdir(i))
	}
	return out
}

func (n Noisy) describe(p Setup) string {
	return fmt.Sprintf("%s on %s: %s", p.Workload.Name(), p.Engine.Name(), describeNoisy(n))
}

func (n Noisy) configure(c *results.RunConfig) {
	c.Noisy = &results.NoisyConfig{Tenants: n.Tenants, BackupTenants: n.BackupTenants, Interval: n.Interval, Cycles: n.Cycles, Users: n.Users}
}

// run starts and prepares the tenants, runs the study and checks every
// tenant; the servers share the setup's memory cap.
func (n Noisy) run(ctx context.Context, ss *session) error {
	steps, checks, err := runNoisy(ctx, ss, n)
	ss.out.Steps, ss.out.Checks = steps, checks
	if uerr := ss.dir.UpdateRun(func(r *results.Run) {
		r.Checks = checks
		for i := range r.Engines {
			r.Engines[i].MemoryLimit = ss.memory // the tenants share the one cap
		}
	}); err == nil {
		err = uerr
	}
	return err
}

// describeNoisy says what a noisy-neighbour run does, for the plan line.
func describeNoisy(n Noisy) string {
	working := n.Tenants - n.BackupTenants
	verb := "back up"
	if n.BackupTenants == 1 {
		verb = "backs up"
	}
	s := fmt.Sprintf("%s at %s each, the %d working ones measured quiet, then while %s %s %s",
		count(n.Tenants, "tenant"), count(n.Users, "user"), working, count(n.BackupTenants, "neighbour"), verb, count(n.Cycles, "time"))
	if n.Cycles > 1 {
		s += fmt.Sprintf(", %s apart", n.Interval)
	}
	return s
}

// checkTenantsFit refuses a noisy-neighbour plan without tenants, or whose
// tenants' databases would not fit on the data target. Their memory is
// judged by preflight (tenantsMemoryProblems), before anything is written.
func checkTenantsFit(n Noisy, spacePerTenant uint64, data *target.Target) error {
	if n.Tenants < 1 {
		return fmt.Errorf("noisy neighbour needs at least one tenant")
	}
	if data != nil && spacePerTenant > 0 {
		need := uint64(n.Tenants) * spacePerTenant
		if n.BackupTenants > 0 {
			need += uint64(n.BackupTenants) * spacePerTenant
		}
		if err := data.EnsureSpace(need, fmt.Sprintf("%d tenants and their backups", n.Tenants)); err != nil {
			return err
		}
	}
	return nil
}

// memAvailable reads MemAvailable from /proc/meminfo under procRoot (0 when unknown).
func memAvailable(procRoot string) uint64 {
	f, err := os.Open(filepath.Join(procRoot, "meminfo"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil || kb > math.MaxUint64/1024 {
				return 0 // a figure no machine has: unknown rather than wrapped
			}
			return kb * 1024
		}
	}
	return 0
}

// runNoisy starts one managed instance per tenant on the data target,
// prepares each, runs the noisy-neighbour phases, checks every tenant and
// stops them all, whatever happens.
func runNoisy(ctx context.Context, ss *session, n Noisy) (steps []results.Step, checks []results.Check, err error) {
	p, env, dir, pl := ss.Setup, ss.env, ss.dir, ss.pl
	if err := checkTenantsFit(n, p.SpaceNeeded, pl.Data); err != nil {
		return nil, nil, err
	}
	var tenants []tenant
	var dests []string
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		for _, t := range tenants {
			if serr := t.Instance.Stop(stopCtx); serr != nil {
				fmt.Fprintf(env.Out, "warning: stopping %s: %v\n", t.Name, serr)
				if err == nil {
					err = serr
				}
			}
		}
	}()
	var pids []func() []int
	for i := 1; i <= n.Tenants; i++ {
		name := fmt.Sprintf("t%d", i)
		// Each tenant's target is a marked directory of dbio's own, so that
		// nothing there is taken for dbio's that dbio did not make.
		root, err := pl.Data.Sub(tenantSubdir(i))
		if err != nil {
			return nil, nil, err
		}
		tt, err := target.Open(root)
		if err != nil {
			return nil, nil, err
		}
		tpl := engine.Placement{Data: tt, Backup: pl.Backup}
		opts := ss.opts
		opts.LogDir = filepath.Join(dir.Path, "tenant-"+strconv.Itoa(i))
		if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(env.Out, "starting tenant %s (%s)\n", name, p.Engine.Name())
		inst, err := p.Engine.Start(ctx, tpl, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("start tenant %s: %w", name, err)
		}
		tenants = append(tenants, tenant{Name: name, Instance: inst, Workload: p.Workload, Users: n.Users})
		info := inst.Info()
		info.Database = name + ": " + info.Database
		_ = dir.UpdateRun(func(r *results.Run) {
			r.Engines = append(r.Engines, info)
			r.Environment.Versions[info.Engine] = info.Version
		})
		fmt.Fprintf(env.Out, "preparing %s on tenant %s\n", p.Workload.Name(), name)
		if _, err := p.Workload.Prepare(ctx, inst, env.Progress.Messages(env.Out)); err != nil {
			return nil, nil, fmt.Errorf("prepare tenant %s: %w", name, err)
		}
		bt := tpl.Backup
		if bt == nil {
			bt = tt
		}
		d, err := bt.Sub("backups-" + name)
		if err != nil {
			return nil, nil, err
		}
		dests = append(dests, d)
		if ps, ok := inst.(engine.Processes); ok {
			pids = append(pids, ps.PIDs)
		}
	}
	// One sampler for the shared storage and every tenant's server processes.
	nz := &noisyStudy{
		Noisy: n, dbs: tenants, BackupDest: func(i int) string { return dests[i] }, Barrier: p.Barrier,
		recording: ss.newRecording(pl, multiProcess(tenants[0].Instance, pids)),
	}
	steps, err = nz.Run(ctx)
	if err != nil || p.SkipChecks {
		return steps, nil, err
	}
	for _, t := range tenants {
		cs, cerr := p.Workload.Check(ctx, t.Instance)
		for _, c := range cs {
			checks = append(checks, results.Check{Name: t.Name + " " + c.Name, Passed: c.Passed, Detail: c.Detail})
		}
		if cerr != nil {
			return steps, checks, fmt.Errorf("consistency check of %s: %w", t.Name, cerr)
		}
	}
	return steps, checks, nil
}

// tenantSubdir is tenant i's directory in dbio's directory on the data target.
func tenantSubdir(i int) string { return "tenant-" + strconv.Itoa(i) }

// multiProcess presents every tenant's server processes as one instance's, for the sampler.
func multiProcess(inst engine.Instance, pids []func() []int) engine.Instance {
	if len(pids) == 0 {
		return inst
	}
	return tenantsProcs{Instance: inst, pids: pids}
}

type tenantsProcs struct {
	engine.Instance
	pids []func() []int
}

func (t tenantsProcs) PIDs() []int {
	var out []int
	for _, f := range t.pids {
		out = append(out, f()...)
	}
	return out
}

// noisyStudy is the noisy-neighbour study: the working tenants (all but the last
// BackupTenants) run their workload at once on the shared storage while the
// backup tenants sit idle (the quiet baseline); then the same working
// tenants run again while the backup tenants take a backup every Interval,
// Cycles times. The two phases differ only in the neighbours' backups, so
// the working tenants' figures against the baseline are what the backups
// cost them.
type noisyStudy struct {
	Noisy
	// dbs are the tenants' databases, the backup tenants last.
	dbs []tenant
	// BackupDest gives tenant i's backup directory (dbio's own).
	BackupDest func(i int) string
	// Barrier, when set, is waited at before each phase's load starts: the
	// start barrier of a run on several hosts, which starts every host's
	// phase at one instant (see Tenants).
	Barrier func(ctx context.Context) error
	recording
}

// Run executes both phases and returns the steps written.
func (n *noisyStudy) Run(ctx context.Context) ([]results.Step, error) {
	n.recording.defaults()
	if len(n.dbs) == 0 {
		return nil, errors.New("noisy neighbour needs at least one tenant")
	}
	if n.BackupTenants < 0 || n.BackupTenants >= len(n.dbs) {
		return nil, fmt.Errorf("backup tenants must be between 0 and %d", len(n.dbs)-1)
	}
	index := n.FirstIndex
	busy := len(n.dbs) - n.BackupTenants
	if n.Cycles == 0 {
		busy = len(n.dbs)
	}
	fmt.Fprintf(n.Log, "noisy neighbour: %d tenants working, %d idle, quiet baseline\n", busy, len(n.dbs)-busy)
	quietSteps, quiet, err := n.phase(ctx, "quiet", n.dbs[:busy], nil, &index, nil)
	if err != nil || n.BackupTenants == 0 || n.Cycles == 0 {
		return quietSteps, err
	}
	fmt.Fprintf(n.Log, "noisy neighbour: the same %d tenants with %d backing up every %s, %d cycles\n", busy, n.BackupTenants, n.Interval, n.Cycles)
	steps, _, err := n.phase(ctx, "interference", n.dbs[:busy], n.dbs[busy:], &index, quiet)
	return append(quietSteps, steps...), err
}

// phase runs the workload tenants (and the backup tenants' schedule), then
// writes one step per tenant and an aggregate step for the phase.
func (n *noisyStudy) phase(ctx context.Context, name string, running, backingUp []tenant, index *int, baseline map[string]float64) ([]results.Step, map[string]float64, error) {
	if n.Barrier != nil {
		if err := n.Barrier(ctx); err != nil {
			return nil, nil, err
		}
	}
	l, err := startLoad(ctx, running, n.Now())
	if err != nil {
		return nil, nil, err
	}
	defer l.finish()
	exits := watchExits(n.dbs)
	rampEnd := n.Now().Add(n.RampUp)
	measuring := n.RampUp <= 0
	var start time.Time
	if measuring {
		start = n.Now()
		n.StartStep()
	}
	// The neighbours' backups start with the measurement.
	var backups *neighbourBackups
	ticker := time.NewTicker(n.Tick)
	defer ticker.Stop()
	var runErr error
loop:
	for {
		select {
		case <-ctx.Done():
			runErr = ctx.Err()
			break loop
		case err := <-l.lost():
			runErr = err
			break loop
		case err := <-exits:
			runErr = err
			break loop
		case <-ticker.C:
		}
		now := n.Now()
		// The row's phase is the workload steps' (rampup, measure), so that
		// a host's seconds read as any step's when a fleet sums them. The
		// tick that ends the ramp-up is the ramp-up's, drained before the
		// counts are reset as a workload step's is: reset first, the first
		// measured second would be all but empty and pull the fleet's
		// window down.
		phase := "rampup"
		if measuring {
			phase = "measure"
		}
		row := results.SeriesRow{Time: now, Step: name, Phase: phase, Values: l.samples(now)}
		row.Values = append(row.Values, results.Sample{Name: "backups_active", Value: float64(backups.running())})
		n.AppendRow(row)
		if !measuring && !now.Before(rampEnd) {
			l.reset()
			n.StartStep()
			measuring, start = true, now
		}
		if measuring && backups == nil && len(backingUp) > 0 {
			backups = n.startBackups(ctx, backingUp, len(running))
		}
		if measuring && now.Sub(start) >= n.Quiet {
			if len(backingUp) == 0 {
				break
			}
			select {
			case <-backups.done:
				break loop
			default:
			}
		}
	}
	end := n.Now()
	l.tick(n.Now())
	if !measuring {
		return nil, nil, runErr
	}
	return n.writePhase(name, running, l.totals(), start, end, baseline, backups.taken(), index, runErr)
}

// neighbourBackups are the backups the backup tenants take during a
// phase, each tenant's on its own schedule, counted as they run.
type neighbourBackups struct {
	mu     sync.Mutex
	runs   []results.NoisyBackup
	active int
	// done is closed once every tenant's cycles are over.
	done chan struct{}
}

// startBackups starts the cycles of each tenant of backingUp that can back
// up, the first now and the others Interval apart; the tenants' backup
// directories are BackupDest's from first on.
func (n *noisyStudy) startBackups(ctx context.Context, backingUp []tenant, first int) *neighbourBackups {
	nb := &neighbourBackups{done: make(chan struct{})}
	var wg sync.WaitGroup
	for i, t := range backingUp {
		bk, ok := t.Instance.(engine.Backuper)
		if !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := n.Now()
			for c := 1; c <= n.Cycles; c++ {
				if wait := began.Add(time.Duration(c-1) * n.Interval).Sub(n.Now()); wait > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
				}
				dest := filepath.Join(n.BackupDest(first+i), fmt.Sprintf("cycle-%d", c))
				os.RemoveAll(dest)
				nb.mu.Lock()
				nb.active++
				nb.mu.Unlock()
				t0 := n.Now()
				res, err := bk.Backup(ctx, dest)
				secs := n.Now().Sub(t0).Seconds()
				run := results.NoisyBackup{Tenant: t.Name, Cycle: c, Start: t0, Seconds: secs, Bytes: res.Bytes}
				if secs > 0 {
					run.MBPerS = float64(res.Bytes) / 1e6 / secs
				}
				if err != nil {
					run.Error = err.Error()
				}
				nb.mu.Lock()
				nb.active--
				nb.runs = append(nb.runs, run)
				nb.mu.Unlock()
				if ctx.Err() != nil {
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(nb.done) }()
	return nb
}

// running is how many backups are under way (none before they start).
func (nb *neighbourBackups) running() int {
	if nb == nil {
		return 0
	}
	nb.mu.Lock()
	defer nb.mu.Unlock()
	return nb.active
}

// taken are the backups taken so far (none before they start).
func (nb *neighbourBackups) taken() []results.NoisyBackup {
	if nb == nil {
		return nil
	}
	nb.mu.Lock()
	defer nb.mu.Unlock()
	return append([]results.NoisyBackup(nil), nb.runs...)
}

// writePhase writes a phase measured from start to end: each running
// tenant's step from its totals, against the quiet baseline when there is
// one, then the phase's aggregate step with the backups taken in it. It
// returns the steps, each tenant's TPM and what stopped the phase, or the
// first write that failed, or the first backup that did.
func (n *noisyStudy) writePhase(name string, running []tenant, totals [][]metrics.TxCounts, start, end time.Time,
	baseline map[string]float64, backups []results.NoisyBackup, index *int, runErr error) ([]results.Step, map[string]float64, error) {
	measured := end.Sub(start)
	var steps []results.Step
	detail := results.NoisyDetail{Phase: name}
	figures := map[string]float64{}
	var sumTPM, sumNOPM float64
	for i, t := range running {
		s := workloadStep(t, totals[i], measured)
		s.Index, s.Name, s.Started, s.Ended = *index, name+"-"+t.Name, start, end
		*index++
		tpm, _ := s.Figure(results.FigureTPM)
		nopm, _ := s.Figure(results.FigureNOPM)
		p99, _ := s.Figure(results.FigureLatencyP99)
		tf := results.NoisyTenant{Name: t.Name, TPM: tpm, NOPM: nopm, P99MS: p99}
		if q, ok := baseline[t.Name]; ok && q > 0 {
			tf.VsQuietPct = (tpm - q) / q * 100
			s.Figures = append(s.Figures, results.FigureTPMVsQuiet.With(tf.VsQuietPct))
		}
		figures[t.Name] = tpm
		detail.Tenants = append(detail.Tenants, tf)
		sumTPM += tpm
		sumNOPM += nopm
		if runErr != nil {
			s.Status, s.Error = results.StatusInterrupted, runErr.Error()
		}
		// Each tenant's latency histograms, by transaction type: a fleet of
		// noisy hosts merges them into the fleet's percentiles.
		hists := map[string]*hdrhistogram.Histogram{}
		for k, c := range totals[i] {
			if k < len(t.Workload.TxTypes()) && c.Latency != nil {
				hists[t.Workload.TxTypes()[k]] = c.Latency
			}
		}
		if err := n.Dir.WriteStep(s, hists); err != nil && runErr == nil {
			runErr = err
		}
		steps = append(steps, s)
	}
	detail.Backups = append(detail.Backups, backups...)
	agg := results.Step{Index: *index, Name: name, Kind: results.KindNoisyPrefix + name, Started: start, Ended: end, MeasureS: measured.Seconds(), Status: results.StatusCompleted,
		Figures: []results.Figure{results.FigureTenants.With(float64(len(running))), results.FigureTPMTotal.With(sumTPM),
			results.FigureNOPMTotal.With(sumNOPM), results.FigureTPMPerTenant.With(sumTPM / float64(len(running)))}}
	*index++
	for _, b := range detail.Backups {
		agg.Figures = append(agg.Figures, results.BackupSeconds(b.Tenant, b.Cycle).With(b.Seconds))
	}
	detail.Latency = n.concludeTelemetry(&agg, "peak", func(s results.LatencySpread) float64 { return s.Max })
	if runErr != nil {
		agg.Status, agg.Error = results.StatusInterrupted, runErr.Error()
	}
	agg.Noisy = &detail
	if err := n.Dir.WriteStep(agg, nil); err != nil && runErr == nil {
		runErr = err
	}
	steps = append(steps, agg)
	for _, b := range detail.Backups {
		if b.Error != "" && runErr == nil {
			runErr = fmt.Errorf("backup of %s, cycle %d: %s", b.Tenant, b.Cycle, b.Error)
		}
	}
	return steps, figures, runErr
}
