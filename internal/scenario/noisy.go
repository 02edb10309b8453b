package scenario

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/engine"
	"dbio/internal/results"
)

// Noisy is the noisy-neighbour study: the working tenants (all but the last
// BackupTenants) run their workload at once on the shared storage while the
// backup tenants sit idle (the quiet baseline); then the same working
// tenants run again while the backup tenants take a backup every Interval,
// Cycles times. The two phases differ only in the neighbours' backups, so
// the working tenants' figures against the baseline are what the backups
// cost them.
type Noisy struct {
	Tenants       []Tenant
	BackupTenants int
	Interval      time.Duration
	Cycles        int
	RampUp        time.Duration
	// Quiet is the measured time of the baseline; the interference phase
	// lasts until every backup cycle is done, and at least Quiet.
	Quiet time.Duration
	// BackupDest gives tenant i's backup directory (dbio's own).
	BackupDest func(i int) string
	// Barrier, when set, is waited at before each phase's load starts: the
	// start barrier of a run on several hosts, which starts every host's
	// phase at one instant (see runner.Tenants).
	Barrier func(ctx context.Context) error
	Recording
}

// Run executes both phases and returns the steps written.
func (n *Noisy) Run(ctx context.Context) ([]results.Step, error) {
	n.Recording.defaults()
	if len(n.Tenants) == 0 {
		return nil, errors.New("noisy neighbour needs at least one tenant")
	}
	if n.BackupTenants < 0 || n.BackupTenants >= len(n.Tenants) {
		return nil, fmt.Errorf("backup tenants must be between 0 and %d", len(n.Tenants)-1)
	}
	index := n.FirstIndex
	busy := len(n.Tenants) - n.BackupTenants
	if n.Cycles == 0 {
		busy = len(n.Tenants)
	}
	fmt.Fprintf(n.Log, "noisy neighbour: %d tenants working, %d idle, quiet baseline\n", busy, len(n.Tenants)-busy)
	quietSteps, quiet, err := n.phase(ctx, "quiet", n.Tenants[:busy], nil, &index, nil)
	if err != nil || n.BackupTenants == 0 || n.Cycles == 0 {
		return quietSteps, err
	}
	fmt.Fprintf(n.Log, "noisy neighbour: the same %d tenants with %d backing up every %s, %d cycles\n", busy, n.BackupTenants, n.Interval, n.Cycles)
	steps, _, err := n.phase(ctx, "interference", n.Tenants[:busy], n.Tenants[busy:], &index, quiet)
	return append(quietSteps, steps...), err
}

// phase runs the workload tenants (and the backup tenants' schedule), then
// writes one step per tenant and an aggregate step for the phase.
func (n *Noisy) phase(ctx context.Context, name string, running, backingUp []Tenant, index *int, baseline map[string]float64) ([]results.Step, map[string]float64, error) {
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
	exits := watchExits(n.Tenants)
	rampEnd := n.Now().Add(n.RampUp)
	measuring := n.RampUp <= 0
	var start time.Time
	if measuring {
		start = n.Now()
		n.StartStep()
	}
	var (
		mu      sync.Mutex
		backups []results.NoisyBackup
		active  int
		wg      sync.WaitGroup
	)
	scheduleBackups := func() {
		for i, t := range backingUp {
			bk, ok := t.Instance.(engine.Backuper)
			if !ok {
				continue
			}
			wg.Add(1)
			go func(ti int, t Tenant) {
				defer wg.Done()
				first := n.Now()
				for c := 1; c <= n.Cycles; c++ {
					if wait := first.Add(time.Duration(c-1) * n.Interval).Sub(n.Now()); wait > 0 {
						select {
						case <-ctx.Done():
							return
						case <-time.After(wait):
						}
					}
					dest := filepath.Join(n.BackupDest(len(running)+ti), fmt.Sprintf("cycle-%d", c))
					os.RemoveAll(dest)
					mu.Lock()
					active++
					mu.Unlock()
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
					mu.Lock()
					active--
					backups = append(backups, run)
					mu.Unlock()
					if ctx.Err() != nil {
						return
					}
				}
			}(i, t)
		}
	}
	allDone := make(chan struct{})
	ticker := time.NewTicker(n.Tick)
	defer ticker.Stop()
	var runErr error
	started := false
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
		mu.Lock()
		act := active
		mu.Unlock()
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
		row.Values = append(row.Values, results.Sample{Name: "backups_active", Value: float64(act)})
		n.AppendRow(row)
		if !measuring && !now.Before(rampEnd) {
			l.reset()
			n.StartStep()
			measuring, start = true, now
		}
		if measuring && !started && len(backingUp) > 0 {
			started = true
			scheduleBackups()
			go func() { wg.Wait(); close(allDone) }()
		}
		if measuring && now.Sub(start) >= n.Quiet {
			if len(backingUp) == 0 {
				break
			}
			select {
			case <-allDone:
				break loop
			default:
			}
		}
	}
	end := n.Now()
	l.tick(n.Now())
	totals := l.totals()
	if !measuring {
		return nil, nil, runErr
	}
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
	mu.Lock()
	detail.Backups = append(detail.Backups, backups...)
	mu.Unlock()
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
