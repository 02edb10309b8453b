package analysis

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/grid"
	"dbio/internal/metrics"
	"dbio/internal/results"
)

// TenantHost is one host's part of a step of database tenants run on
// several hosts at once: what its own results directory recorded.
type TenantHost struct {
	Host string
	// Step is the host's step directory, relative to the fleet run's.
	Step string
	// Seconds are the step's measured seconds, in order.
	Seconds []TenantSecond
	// Latency is the host's histogram of every transaction of the step
	// (its types merged).
	Latency *hdrhistogram.Histogram
}

// TenantSecond is one per-second row of a host's series.
type TenantSecond struct {
	Time   time.Time
	Values map[results.FigureName]float64
}

// TenantSeconds reads a step's measured seconds from a host's series: the
// rows of the step in its measurement, with the named figures that have a
// value. A row's time is started (the run's start, which its elapsed time
// counts from) plus its elapsed time: series.csv writes the time of day to
// the second only, which would put hosts a few milliseconds apart a whole
// second apart whenever a second's boundary fell between them. Given the
// host's start on the coordinator's clock (its own less its clock's
// offset), the seconds are on the coordinator's clock too. The fleet's
// figures and the fleet timelines both read a host's seconds here.
func TenantSeconds(s results.Series, started time.Time, step string, names []results.FigureDef) []TenantSecond {
	var out []TenantSecond
	for _, r := range s.Rows {
		if r.Step != step || r.Phase != "measure" {
			continue
		}
		at := started.Add(time.Duration(math.Round(r.ElapsedS*1e3)) * time.Millisecond)
		sec := TenantSecond{Time: at, Values: map[results.FigureName]float64{}}
		for _, n := range names {
			if c := s.Column(string(n.Name)); c >= 0 && c < len(r.Values) && !math.IsNaN(r.Values[c]) {
				sec.Values[n.Name] = r.Values[c]
			}
		}
		out = append(out, sec)
	}
	return out
}

// TenantFigures are the throughput figures a fleet of tenants sums: the
// workload's (TPM and NOPM, or TPS) and TPS.
func TenantFigures(steps []results.Step) []results.FigureDef {
	out := Throughput(steps)
	if !slices.ContainsFunc(out, func(f results.FigureDef) bool { return f.Name == results.FigureTPS }) {
		out = append(out, results.FigureTPS.Def())
	}
	return out
}

// TenantFleet computes a fleet step from its hosts' records.
//
// Throughput is summed over the common window only: the seconds every host
// recorded, placed on one grid by fleetGrid (the fleet timeline's line
// sums over the same seconds). The hosts' seconds must be on one clock:
// TenantSeconds puts them there. Each host's figure is the mean of its per-second values
// over the window, and the fleet's is their sum, so the host rows add up to
// the fleet row. A host that started late or stopped early adds no second
// in which the others were not measuring.
//
// Latency percentiles are those of the hosts' histograms merged: the
// fleet's p99 is the latency 99 % of the fleet's transactions met, never
// an average of the hosts' p99s.
func TenantFleet(hosts []TenantHost, names []results.FigureDef) (results.TenantFleet, []results.Figure, *hdrhistogram.Histogram, error) {
	var rec results.TenantFleet
	if len(hosts) == 0 {
		return rec, nil, nil, errors.New("no hosts")
	}
	var firsts []time.Time
	times := make([][]time.Time, len(hosts))
	for i, h := range hosts {
		if len(h.Seconds) == 0 {
			return rec, nil, nil, fmt.Errorf("host %s recorded no measured second in step %s", h.Host, h.Step)
		}
		firsts = append(firsts, h.Seconds[0].Time)
		for _, s := range h.Seconds {
			times[i] = append(times[i], s.Time)
		}
	}
	origin, slots, window := fleetGrid(times)
	// Each host's seconds by their slots on the common clock.
	index := make([]map[int]TenantSecond, len(hosts))
	for i, h := range hosts {
		index[i] = map[int]TenantSecond{}
		for j, k := range slots[i] {
			index[i][k] = h.Seconds[j]
		}
	}
	if len(window) == 0 {
		return rec, nil, nil, fmt.Errorf("the hosts share no measured second: their steps did not overlap (first seconds %s)", describeFirsts(hosts, firsts))
	}
	rec.WindowStart = origin.Add(time.Duration(window[0]) * time.Second)
	rec.WindowEnd = origin.Add(time.Duration(window[len(window)-1]) * time.Second)
	rec.Seconds = len(window)
	earliest, latest := slices.MinFunc(firsts, time.Time.Compare), slices.MaxFunc(firsts, time.Time.Compare)
	rec.StartSpreadMS = results.Round6(float64(latest.Sub(earliest)) / float64(time.Millisecond))

	fleet := make([]float64, len(names))
	var merged *hdrhistogram.Histogram
	for i, h := range hosts {
		row := results.TenantHostStep{Host: h.Host, Step: h.Step}
		for j, n := range names {
			sum := 0.0
			for _, k := range window {
				sum += index[i][k].Values[n.Name] // a second without the figure counted nothing
			}
			v := sum / float64(len(window))
			fleet[j] += v
			row.Figures = append(row.Figures, n.Name.With(results.Round6(v)))
		}
		row.Latency = metrics.Summarize(h.Latency)
		rec.Hosts = append(rec.Hosts, row)
		if h.Latency == nil {
			continue
		}
		if merged == nil {
			merged = hdrhistogram.New(h.Latency.LowestTrackableValue(), h.Latency.HighestTrackableValue(), int(h.Latency.SignificantFigures()))
		}
		if dropped := merged.Merge(h.Latency); dropped > 0 {
			return rec, nil, nil, fmt.Errorf("host %s: %d latencies outside the fleet histogram's range", h.Host, dropped)
		}
	}
	rec.Latency = metrics.Summarize(merged)
	var figs []results.Figure
	for j, n := range names {
		figs = append(figs, n.Name.With(results.Round6(fleet[j])))
	}
	if merged != nil && merged.TotalCount() > 0 {
		figs = append(figs, results.FigureLatencyP99.With(float64(rec.Latency.P99US)/1000))
	}
	return rec, figs, merged, nil
}

// fleetGrid puts several hosts' seconds (each host's in order, on one
// clock) on one grid of whole seconds counted from origin, the earliest
// host's first second: slots[i][j] is host i's second j's place on it,
// and window the places every host has a second in, in order. The fleet's
// figures of a tenants run and the fleet's line of a fleet timeline both
// sum over the window, so that the line's mean over a step is the step's
// figure.
func fleetGrid(hosts [][]time.Time) (origin time.Time, slots [][]int, window []int) {
	for _, h := range hosts {
		if len(h) > 0 && (origin.IsZero() || h[0].Before(origin)) {
			origin = h[0]
		}
	}
	count := map[int]int{}
	slots = make([][]int, len(hosts))
	for i, h := range hosts {
		slots[i] = grid.Slots(h, origin)
		for _, k := range slots[i] {
			count[k]++
		}
	}
	for k, n := range count {
		if n == len(hosts) {
			window = append(window, k)
		}
	}
	slices.Sort(window)
	return origin, slots, window
}

func describeFirsts(hosts []TenantHost, firsts []time.Time) string {
	var s string
	for i, h := range hosts {
		if i > 0 {
			s += ", "
		}
		s += h.Host + " " + firsts[i].UTC().Format("15:04:05.000")
	}
	return s
}
