package analysis

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/metrics"
	"dbio/internal/results"
)

// TenantsFold is a run of tenants on several hosts read from its hosts'
// own results directories, as the run records it: how each host's run
// ended, their checks, and the fleet's steps.
type TenantsFold struct {
	// Hosts are the run's hosts, each with its status and error as its own
	// run.json says (its error only when the run's record had none), and,
	// in a noisy-neighbour run, the backups its tenants took, on the
	// coordinator's clock.
	Hosts []results.TenantHost
	// Checks are every host's consistency checks, each named after its host.
	Checks []results.Check
	// Steps are the fleet's, in order: step i of every host.
	Steps []FleetStep
}

// FleetStep is one step of the fleet and the latency histograms written
// beside it: every host's of each transaction type, merged.
type FleetStep struct {
	Step       results.Step
	Histograms map[string]*hdrhistogram.Histogram
}

// FoldTenants folds the hosts' results directories of a run of tenants
// (t.Hosts[i].Dir, inside runDir) into the fleet's steps: step i of the
// fleet is step i of every host, its instants on the coordinator's clock
// by the offsets the run measured at its start, its figures TenantFleet's,
// its telemetry each host's own with the fleet's drawn from them. In a
// noisy-neighbour run (noisy) a host's steps are its phases, each its
// working tenants' steps summed. The runner writes what it returns; the
// same call on a recorded run's directory (its run.json's Tenants, and
// noisy when its Config records the study) gives the steps it recorded.
//
// A host whose results did not come back, or do not load, fails the fold
// (no steps); a step the hosts did not all run ends it there, with the
// steps before it.
func FoldTenants(runDir string, t results.Tenants, noisy bool) (TenantsFold, error) {
	out := TenantsFold{Hosts: slices.Clone(t.Hosts)}
	offsets := tenantClockOffsets(&t)
	var loaded []*results.Loaded
	var errs []error
	for i, h := range out.Hosts {
		if h.Dir == "" {
			out.Hosts[i].Status = results.StatusFailed
			errs = append(errs, fmt.Errorf("host %s: no results came back: no fleet figures", h.Host))
			continue
		}
		l, err := loadHost(runDir, h.Dir)
		if err != nil {
			out.Hosts[i].Status = results.StatusFailed
			errs = append(errs, fmt.Errorf("host %s: %w", h.Host, err))
			continue
		}
		out.Hosts[i].Status = l.Run.Status
		if l.Run.Error != "" && out.Hosts[i].Error == "" {
			out.Hosts[i].Error = l.Run.Error
		}
		for _, c := range l.Run.Checks {
			c.Name = h.Host + ": " + c.Name
			out.Checks = append(out.Checks, c)
		}
		loaded = append(loaded, l)
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	hosts := make([]foldHost, len(loaded))
	count := math.MaxInt
	for j, l := range loaded {
		h := &out.Hosts[j]
		hosts[j] = foldHost{name: h.Host, run: l, offsetMS: offsets[h.Host]}
		hosts[j].steps = hostFoldSteps(l, noisy)
		count = min(count, len(hosts[j].steps))
		if noisy {
			h.Backups = noisyBackups(hosts[j].steps, offsets[h.Host])
		}
	}
	for i := 0; i < count; i++ {
		fs, err := fleetStep(runDir, hosts, i)
		if err != nil {
			return out, err
		}
		out.Steps = append(out.Steps, fs)
	}
	return out, nil
}

// loadHost loads a host's results directory, rel inside the run's, reached
// without a link.
func loadHost(runDir, rel string) (*results.Loaded, error) {
	dir, err := results.Within(runDir, rel)
	if err != nil {
		return nil, err
	}
	return results.Load(dir)
}

// foldHost is one host of the fold: its run, its steps as the fleet sums
// them, and its clock's offset at the start.
type foldHost struct {
	name     string
	run      *results.Loaded
	steps    []foldStep
	offsetMS float64
}

// foldStep is a step of a host's run as the fleet sums it, and the step
// directories holding its latency histograms.
type foldStep struct {
	results.Step
	dirs []string
	// backups are the backups its host's neighbours took in it, on the
	// host's clock.
	backups []results.NoisyBackup
}

// hostFoldSteps are a host's steps as the fleet sums them: a workload
// run's own; a noisy-neighbour run's phases, each its working tenants'
// steps summed (its series holds the phase's summed seconds under the
// figures' own names).
func hostFoldSteps(l *results.Loaded, noisy bool) []foldStep {
	var out []foldStep
	if !noisy {
		for _, s := range l.Steps {
			out = append(out, foldStep{Step: s, dirs: []string{results.StepPath(l.Path, s.Index, s.Name)}})
		}
		return out
	}
	for _, phase := range l.Steps {
		if !results.IsNoisyPhase(phase.Kind) {
			continue
		}
		hs := foldStep{Step: results.Step{Index: phase.Index, Name: phase.Name, Started: phase.Started, Ended: phase.Ended,
			MeasureS: phase.MeasureS, Status: phase.Status, Error: phase.Error, Telemetry: phase.Telemetry}}
		if phase.Noisy != nil {
			hs.backups = phase.Noisy.Backups
		}
		sums := map[results.FigureName]float64{}
		units := map[results.FigureName]string{}
		var names []results.FigureName
		total := metrics.TxSummary{Name: "all"}
		for _, s := range l.Steps {
			if s.Total == nil || !strings.HasPrefix(s.Name, phase.Name+"-") {
				continue
			}
			hs.Kind = s.Kind
			hs.Users += s.Users
			hs.dirs = append(hs.dirs, results.StepPath(l.Path, s.Index, s.Name))
			addTotals(&total, *s.Total)
			for _, f := range s.Figures {
				if f.Name.Def().Throughput() {
					if _, ok := sums[f.Name]; !ok {
						names = append(names, f.Name)
					}
					sums[f.Name] += f.Value
					units[f.Name] = f.Unit
				}
			}
		}
		for _, name := range names {
			hs.Figures = append(hs.Figures, results.Figure{Name: name, Value: sums[name], Unit: units[name]})
		}
		hs.Total = &total
		out = append(out, hs)
	}
	return out
}

// addTotals adds a step's transaction counts to total.
func addTotals(total *metrics.TxSummary, s metrics.TxSummary) {
	total.Committed += s.Committed
	total.RolledBack += s.RolledBack
	total.Errors += s.Errors
	total.Retries += s.Retries
	total.Reconnects += s.Reconnects
}

// noisyBackups are the backups a noisy host's tenants took, on the
// coordinator's clock.
func noisyBackups(steps []foldStep, offsetMS float64) []results.TenantBackup {
	var out []results.TenantBackup
	for _, s := range steps {
		for _, b := range s.backups {
			out = append(out, results.TenantBackup{Phase: s.Name, Tenant: b.Tenant, Cycle: b.Cycle, Start: b.Start.Add(-msDuration(offsetMS)),
				Seconds: b.Seconds, Bytes: b.Bytes, Error: b.Error})
		}
	}
	return out
}

// fleetStep is step i of every host, as the fleet's step.
func fleetStep(runDir string, hosts []foldHost, i int) (FleetStep, error) {
	first := hosts[0].steps[i]
	var hostSteps []results.Step
	for _, h := range hosts {
		hostSteps = append(hostSteps, h.steps[i].Step)
	}
	figs := TenantFigures(hostSteps)
	var parts []TenantHost
	hists := map[string]*hdrhistogram.Histogram{}
	s := results.Step{Index: i, Name: first.Name, Kind: first.Kind, Started: first.Started, Ended: first.Ended,
		RampUpS: first.RampUpS, Status: results.StatusCompleted}
	total := metrics.TxSummary{Name: "all"}
	for j, h := range hosts {
		hs := h.steps[i]
		if hs.Name != first.Name {
			return FleetStep{}, fmt.Errorf("step %d is %s on %s and %s on %s: the hosts did not run the same steps", i, first.Name, hosts[0].name, hs.Name, h.name)
		}
		s.Users += hs.Users
		// On the coordinator's clock, as every instant of the run's.
		offset := msDuration(h.offsetMS)
		started, ended := hs.Started.Add(-offset), hs.Ended.Add(-offset)
		if j == 0 || started.Before(s.Started) {
			s.Started = started
		}
		if j == 0 || ended.After(s.Ended) {
			s.Ended = ended
		}
		if hs.Status != results.StatusCompleted {
			s.Status = hs.Status
		}
		if hs.Total != nil {
			addTotals(&total, *hs.Total)
		}
		own, err := mergeStepHistograms(hs.dirs, hists)
		if err != nil {
			return FleetStep{}, fmt.Errorf("host %s: %w", h.name, err)
		}
		rel, _ := filepath.Rel(runDir, results.StepPath(h.run.Path, hs.Index, hs.Name))
		parts = append(parts, TenantHost{Host: h.name, Step: rel,
			Seconds: TenantSeconds(h.run.Series, h.run.Run.Started.Add(-offset), hs.Name, figs), Latency: own})
	}
	fleet, fleetFigs, _, err := TenantFleet(parts, figs)
	if err != nil {
		return FleetStep{}, fmt.Errorf("step %s: %w", first.Name, err)
	}
	var hostTels []results.HostTelemetry
	for _, h := range hosts {
		hostTels = append(hostTels, results.HostTelemetry{Host: h.name, Telemetry: h.steps[i].Telemetry})
	}
	s.Telemetry, fleet.System = tenantsTelemetry(hostTels)
	s.Figures = fleetFigs
	s.MeasureS = float64(fleet.Seconds)
	total.Latency = fleet.Latency
	if v, ok := s.Figure(results.FigureTPS); ok {
		total.PerMinute = results.Round6(v * 60)
	}
	s.Total = &total
	s.Fleet = &fleet
	s.Notes = append(s.Notes, fmt.Sprintf("the fleet's figures: throughput summed over the %d s all %d hosts were measuring, latency from every host's histograms merged; the transaction counts cover each host's whole measured step, summed, as its latency does, so they may hold more than the window's throughput", fleet.Seconds, len(parts)))
	return FleetStep{Step: s, Histograms: hists}, nil
}

// tenantsTelemetry is a fleet step's telemetry: each host's, as its own dbio
// sampled it over its measured step (hosts, Telemetry set, nil without
// any), under telemetry.hosts with its CPU, disks and memory drawn from it,
// as a run driving a database host from here records that host; and the
// fleet's CPU and disks over them. Both are nil when no host recorded
// telemetry: the coordinator's own metrics stay empty, its machine ran no
// tenant.
func tenantsTelemetry(hosts []results.HostTelemetry) (*results.TelemetrySummary, *results.FleetSystem) {
	sum := &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{}}
	var leftOut []string
	for _, h := range hosts {
		if h.Telemetry == nil || h.Telemetry.Samples == 0 {
			leftOut = append(leftOut, h.Host+": no telemetry recorded")
			continue
		}
		sys := results.HostSystemOf(*h.Telemetry)
		h.System = &sys
		sum.Hosts = append(sum.Hosts, h)
	}
	if len(sum.Hosts) == 0 {
		return nil, nil
	}
	return sum, results.FleetSystemOf(sum.Hosts, leftOut)
}

// mergeStepHistograms reads a host step's latency histograms (in each of
// its step directories): each type's is merged into fleet (by type), and
// own is every type's service time merged (the corrected latencies of an
// open-loop step are left out of it); nil when the step has none.
func mergeStepHistograms(dirs []string, fleet map[string]*hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	var own *hdrhistogram.Histogram
	for _, dir := range dirs {
		hists, err := results.StepHistograms(dir)
		if err != nil {
			return nil, err
		}
		for _, typ := range slices.Sorted(maps.Keys(hists)) {
			h := hists[typ]
			if fleet[typ] == nil {
				fleet[typ] = metrics.NewHistogram()
			}
			fleet[typ].Merge(h)
			if strings.HasSuffix(typ, results.CorrectedSuffix) {
				continue
			}
			if own == nil {
				own = metrics.NewHistogram()
			}
			own.Merge(h)
		}
	}
	return own, nil
}
