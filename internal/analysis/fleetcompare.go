package analysis

import (
	"fmt"
	"slices"
	"strings"

	"dbio/internal/metrics"
	"dbio/internal/results"
)

// Comparing fleet runs: a fleet's steps carry the fleet's figures (the
// hosts' summed over the window all of them measured), so the steps of two
// fleet runs compare as any two runs' do. Beside them, each host's row of
// a step is compared with the same host's in the other run: by name when
// both fleets have the same hosts, else host by host in the order each run
// named them.

// FleetHosts are the hosts a fleet run ran on, in the order it named them;
// nil for a run on one machine.
func FleetHosts(r *Recorded) []string {
	if r.Run.Tenants != nil {
		var out []string
		for _, h := range r.Run.Tenants.Hosts {
			out = append(out, h.Host)
		}
		return out
	}
	var out []string
	for _, p := range r.Fio {
		if p.Fio.Fleet == nil {
			continue
		}
		for _, h := range p.Fio.Fleet.Hosts {
			if !slices.Contains(out, h.Host) {
				out = append(out, h.Host)
			}
		}
	}
	return out
}

// fleetComparability says why a fleet run and a run on one machine cannot
// be compared, and what a reader should know about comparing two fleets.
func fleetComparability(a, b *Recorded, whoA, whoB string) (reason, warning string) {
	ha, hb := FleetHosts(a), FleetHosts(b)
	where := func(hosts []string) string {
		if len(hosts) == 0 {
			return "on one machine"
		}
		return fmt.Sprintf("on %s at once (%s)", plural(len(hosts), "host", "hosts"), strings.Join(hosts, ", "))
	}
	switch {
	case len(ha) == 0 && len(hb) == 0:
		return "", ""
	case len(ha)+len(hb) == 1:
		// A fleet of one host is one machine's figures: the placement of
		// its driver (on the host, or here over the network) is what the
		// two runs compare.
		return "", fmt.Sprintf("%s ran %s and %s %s: a fleet of one host is compared as one machine", whoA, where(ha), whoB, where(hb))
	case len(ha) == 0 || len(hb) == 0:
		return fmt.Sprintf("%s ran %s but %s ran %s: a fleet's figures are its hosts' summed, not one machine's; compare a fleet run with another fleet run (each host's rows are then compared too), or run the single machine as a fleet of one host",
			whoA, where(ha), whoB, where(hb)), ""
	case len(ha) != len(hb):
		return "", fmt.Sprintf("%s ran %s and %s %s: the fleets' figures are sums over different numbers of hosts; each host's rows are compared for the first %d hosts of each",
			whoA, where(ha), whoB, where(hb), min(len(ha), len(hb)))
	case !slices.Equal(sortedCopy(ha), sortedCopy(hb)):
		var pairs []string
		for i := range ha {
			pairs = append(pairs, ha[i]+" with "+hb[i])
		}
		return "", fmt.Sprintf("%s and %s ran on different hosts: each host's rows are compared in the order each run named its hosts (%s)", whoA, whoB, strings.Join(pairs, ", "))
	}
	return "", ""
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }

// FleetHostMetrics are the metrics a host's rows are compared by: fio's
// for a device fleet, the workload's throughput and response times for
// tenants.
func FleetHostMetrics(r *Recorded) []Metric {
	if r.Run.Tenants == nil {
		return FioMetrics()
	}
	var steps []results.Step
	for _, w := range r.Workloads {
		steps = append(steps, w.Steps...)
	}
	var out []Metric
	for _, f := range TenantFigures(steps) {
		out = append(out, FigureMetric(f))
	}
	return append(out, ResponseTime(results.StatMean), ResponseTime(results.StatP99))
}

// FleetHostRows match the hosts' rows of fleet runs: for each step (or
// fio point) the fleets share, one row per host of the baseline, labelled
// "step · host", each run's host read as a step of its own (its figures
// over the step's common window, its latency). A host is matched by name
// when every run ran on the baseline's hosts, else by its place in the
// order each run named its hosts. Nil unless the baseline ran on a fleet.
func FleetHostRows(runs []*Recorded) []Row {
	hosts := make([][]string, len(runs))
	byName := true
	for i, r := range runs {
		hosts[i] = FleetHosts(r)
		byName = byName && slices.Equal(sortedCopy(hosts[i]), sortedCopy(hosts[0]))
	}
	if len(hosts[0]) == 0 {
		return nil
	}
	var steps []Row
	if runs[0].Run.Tenants != nil {
		steps = RowsByName(runs, func(r *Recorded) []results.Step {
			var out []results.Step
			for _, w := range r.Workloads {
				out = append(out, w.Steps...)
			}
			return out
		})
	} else {
		steps = RowsByPoint(runs)
	}
	var out []Row
	for _, row := range steps {
		for place, name := range hosts[0] {
			hr := Row{Label: row.Label + " · " + name, Steps: make([]*results.Step, len(runs))}
			other := false
			for ri, s := range row.Steps {
				want := name
				if !byName {
					if place >= len(hosts[ri]) {
						continue
					}
					want = hosts[ri][place]
				}
				if s == nil {
					continue
				}
				if hs, ok := hostStep(*s, want); ok {
					hr.Steps[ri] = &hs
					other = other || ri > 0
				}
			}
			// A row is a comparison: the baseline's host and another run's.
			if hr.Steps[0] != nil && other {
				out = append(out, hr)
			}
		}
	}
	return out
}

// hostStep is a host's part of a fleet step as a step of its own: the
// figures compare metrics read. False when the host has no row in it.
func hostStep(s results.Step, host string) (results.Step, bool) {
	out := results.Step{Index: s.Index, Name: s.Name, Kind: s.Kind, Users: s.Users, Status: s.Status}
	if s.Fio != nil && s.Fio.Fleet != nil {
		for _, h := range s.Fio.Fleet.Hosts {
			if h.Host != host || h.Total == nil {
				continue
			}
			t := h.Total
			out.Figures = []results.Figure{{Name: results.FigureIOPS, Value: t.IOPS}, {Name: results.FigureMBPerSec, Value: t.MBPerSec()},
				{Name: results.FigureLatMeanUS, Value: t.Completion.MeanUS}}
			if p99, ok := t.Completion.At(99); ok {
				out.Figures = append(out.Figures, results.Figure{Name: results.FigureLatP99US, Value: p99})
			}
			return out, true
		}
		return out, false
	}
	if s.Fleet == nil {
		return out, false
	}
	for _, h := range s.Fleet.Hosts {
		if h.Host != host {
			continue
		}
		out.Figures = h.Figures
		out.Total = &metrics.TxSummary{Name: "all", Committed: h.Latency.Count, Latency: h.Latency}
		return out, true
	}
	return out, false
}
