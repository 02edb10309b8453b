package fio

import (
	"errors"
	"maps"
	"math"
	"slices"
	"time"

	"dbio/internal/fioformat"
	"dbio/internal/grid"
	"dbio/internal/results"
)

// Fleet figures. A point run on several hosts at once is read from each
// host's per-second logs, which fio stamps with wall time (log_unix_epoch),
// so the hosts' seconds line up. Two totals that peer tools get wrong are
// computed here once:
//
//   - throughput is summed over the window in which every host was
//     measuring: a host that started late or stopped early would otherwise
//     add seconds in which the others were idle (or count the busy seconds
//     of some hosts as the fleet's);
//   - latency percentiles come from the hosts' latency bins merged over that
//     window: the fleet's p99 is the latency 99 % of the fleet's I/Os met,
//     which no average of the hosts' p99s gives when the hosts differ.

// FleetPercentiles are the percentiles a window's latency summary gives:
// fio's default list.
var FleetPercentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// FleetFigures are a fleet point's figures over its common window.
type FleetFigures struct {
	// Start and End are the first and last second of the window.
	Start, End time.Time
	Seconds    int
	// Hosts are each host's figures over the window, in the order given.
	Hosts []results.FioDirections
	// Fleet sums the hosts' throughput and merges their latency bins.
	Fleet results.FioDirections
	// Unbinned says no second had every host's latency bins, so the window
	// is the seconds every host logged and the figures have no percentiles.
	Unbinned bool

	clock fleetClock
}

// ErrNoCommonWindow is returned when the hosts' measured seconds do not overlap.
var ErrNoCommonWindow = errors.New("the hosts' measured seconds do not overlap: no second in which all of them were measuring")

// fleetClock numbers the hosts' logged seconds on one clock: whole
// seconds from the earliest first second any host logged. fio logs each
// host's seconds from that host's own start, so hosts that started a
// fraction of a second apart log at different fractions of a wall second;
// counting from one reference puts seconds less than half a second apart
// in the same slot, where rounding each to its own nearest wall second
// would split hosts a few milliseconds apart whenever a half second falls
// between them.
type fleetClock struct{ refMS int64 }

func newFleetClock(hosts [][]fioformat.Second) fleetClock {
	ref := int64(math.MaxInt64)
	for _, secs := range hosts {
		if len(secs) > 0 {
			ref = min(ref, secs[0].Time.UnixMilli())
		}
	}
	return fleetClock{refMS: ref}
}

// slot is the second t falls in.
func (c fleetClock) slot(t time.Time) int64 {
	return int64(math.Round(float64(t.UnixMilli()-c.refMS) / 1000))
}

// slots are the slots of one host's seconds, by the fleet's one rule
// (grid.Slots): a late tick goes back to its own second instead of taking,
// and overwriting, the next one's.
func (c fleetClock) slots(secs []fioformat.Second) []int64 {
	times := make([]time.Time, len(secs))
	for j, s := range secs {
		times[j] = s.Time
	}
	out := make([]int64, len(secs))
	for j, w := range grid.Slots(times, time.UnixMilli(c.refMS)) {
		out[j] = int64(w)
	}
	return out
}

// time is the start of slot w: the reference second's time plus w seconds.
func (c fleetClock) time(w int64) time.Time { return time.UnixMilli(c.refMS + w*1000).UTC() }

// onThisClock is a host's seconds on this machine's clock: fio stamps them
// with the host's, which is offset ahead of this machine's (the host's
// clock minus this one's, fleet.ClockReading.Offset). The seconds are
// copied; the host's own are kept.
func onThisClock(secs []fioformat.Second, offset time.Duration) []fioformat.Second {
	out := slices.Clone(secs)
	for i := range out {
		out[i].Time = out[i].Time.Add(-offset)
	}
	return out
}

// binned says whether a second's I/Os are all in its latency bins: fio
// sometimes logs a job's last interval without its histogram, and such a
// second would leave its I/Os out of the percentiles.
func binned(s fioformat.Second) bool {
	return (s.ReadIOPS == 0 || s.ReadBins != nil) && (s.WriteIOPS == 0 || s.WriteBins != nil)
}

// Fleet computes a fleet point's figures from each host's measured seconds
// (MergeSeconds of its logs, put on one clock by onThisClock): the window is
// the seconds that every host logged, with their latency bins, between the
// latest first second and the earliest last one.
//
// fio writes a latency histogram when an I/O completes a second or more
// after the last one, so a host whose I/Os stalled logs its seconds with
// their histograms late or not at all. When that leaves no second with every
// host's bins, the window is the seconds every host logged, without bins:
// the throughput and mean latency are still measured, the percentiles are
// absent (Unbinned says so) rather than drawn from the seconds that did not
// stall.
func Fleet(hosts [][]fioformat.Second) (FleetFigures, error) {
	if len(hosts) == 0 {
		return FleetFigures{}, ErrNoCommonWindow
	}
	clock := newFleetClock(hosts)
	bySec := make([]map[int64]fioformat.Second, len(hosts))
	var from, to int64 = math.MinInt64, math.MaxInt64
	for i, secs := range hosts {
		if len(secs) == 0 {
			return FleetFigures{}, ErrNoCommonWindow
		}
		bySec[i] = make(map[int64]fioformat.Second, len(secs))
		first, last := int64(math.MaxInt64), int64(math.MinInt64)
		slots := clock.slots(secs)
		for j, s := range secs {
			w := slots[j]
			bySec[i][w] = s
			first, last = min(first, w), max(last, w)
		}
		from, to = max(from, first), min(to, last)
	}
	common := func(keep func(fioformat.Second) bool) []int64 {
		var window []int64
		for w := from; w <= to; w++ {
			all := true
			for _, m := range bySec {
				if s, ok := m[w]; !ok || !keep(s) {
					all = false
					break
				}
			}
			if all {
				window = append(window, w)
			}
		}
		return window
	}
	window, unbinned := common(binned), false
	if len(window) == 0 {
		window, unbinned = common(func(fioformat.Second) bool { return true }), true
	}
	if len(window) == 0 {
		return FleetFigures{}, ErrNoCommonWindow
	}
	out := FleetFigures{Start: clock.time(window[0]), End: clock.time(window[len(window)-1]), Seconds: len(window), Unbinned: unbinned, clock: clock}
	var fleet [3]sums
	for _, m := range bySec {
		var host [3]sums
		for _, w := range window {
			s := m[w]
			if unbinned {
				s.ReadBins, s.WriteBins = nil, nil
			}
			host[0].add(s.ReadIOPS, s.ReadMBPerSec, s.ReadLatMeanUS, s.ReadBins)
			host[1].add(s.WriteIOPS, s.WriteMBPerSec, s.WriteLatMeanUS, s.WriteBins)
		}
		host[2].plus(host[0])
		host[2].plus(host[1])
		for d := range 3 {
			fleet[d].plus(host[d])
		}
		out.Hosts = append(out.Hosts, figuresOf(host, len(window)))
	}
	out.Fleet = figuresOf(fleet, len(window))
	return out, nil
}

// PercentilesFromReports gives an unbinned window's figures (Unbinned)
// the percentiles fio's final reports hold: each host's json+ completion
// bins (ns → count) over its whole measured time, reports in the hosts'
// order, merged for the fleet. The hosts start each point together (the
// start barrier) and measure for the same runtime, so their whole
// measurements cover the window but for their first and last moments,
// where stalled seconds' late histograms leave the window no percentile
// at all. A direction some host did I/O in without bins keeps none; ok
// says whether any direction got its percentiles.
func (f *FleetFigures) PercentilesFromReports(reports []results.FioDirections) (ok bool) {
	if !f.Unbinned || len(reports) != len(f.Hosts) {
		return false
	}
	type pick func(*results.FioDirections) *results.FioDirection
	for _, dir := range []pick{
		func(d *results.FioDirections) *results.FioDirection { return d.Read },
		func(d *results.FioDirections) *results.FioDirection { return d.Write },
	} {
		fleet := map[int64]int64{}
		complete := true
		for i := range reports {
			rep := dir(&reports[i])
			if dir(&f.Hosts[i]) == nil {
				continue
			}
			if rep == nil || len(rep.Bins) == 0 {
				complete = false
				break
			}
			for ns, n := range rep.Bins {
				fleet[ns] += n
			}
		}
		d := dir(&f.Fleet)
		if !complete || d == nil || len(fleet) == 0 {
			continue // no host's percentiles either: the rows agree
		}
		for i := range reports {
			if host := dir(&f.Hosts[i]); host != nil {
				withBins(host, dir(&reports[i]).Bins)
			}
		}
		withBins(d, fleet)
		ok = true
	}
	if !ok {
		return false
	}
	// The totals: reads' and writes' bins together, as the binned window's
	// are.
	total := func(d *results.FioDirections) {
		if d.Total == nil {
			return
		}
		merged := map[int64]int64{}
		for _, part := range []*results.FioDirection{d.Read, d.Write} {
			if part == nil {
				continue
			}
			if len(part.Bins) == 0 {
				return
			}
			for ns, n := range part.Bins {
				merged[ns] += n
			}
		}
		withBins(d.Total, merged)
	}
	for i := range f.Hosts {
		total(&f.Hosts[i])
	}
	total(&f.Fleet)
	return true
}

// withBins sets d's completion percentiles, count, least and greatest
// value from json+ bins (ns → count), and keeps the bins.
func withBins(d *results.FioDirection, bins map[int64]int64) {
	values := slices.Sorted(maps.Keys(bins))
	var count int64
	for _, v := range values {
		count += bins[v]
	}
	if count == 0 {
		return
	}
	d.Bins = maps.Clone(bins)
	d.Completion.N = count
	d.Completion.MinUS, d.Completion.MaxUS = float64(values[0])/1000, float64(values[len(values)-1])/1000
	d.Completion.Percentiles = nil
	for _, p := range FleetPercentiles {
		// The least value at or under which p % of the completions fall.
		rank := int64(math.Ceil(p / 100 * float64(count)))
		var seen int64
		for _, v := range values {
			if seen += bins[v]; seen >= rank {
				d.Completion.Percentiles = append(d.Completion.Percentiles, results.FioPercentile{P: p, US: float64(v) / 1000})
				break
			}
		}
	}
}

// sums accumulate a direction's seconds: each second's IOPS, MB/s and
// IOPS-weighted mean latency, and its latency bins, counted in one array of
// fio's bins (adding a host's bins to the fleet's costs the same whatever
// the fleet's size).
type sums struct {
	iops, mb, latW, lat float64
	bins                *[fioformat.HistBins]int64
}

func (s *sums) add(iops, mb, latUS float64, bins []fioformat.HistBin) {
	s.iops += iops
	s.mb += mb
	if iops > 0 && !math.IsNaN(latUS) {
		s.lat += latUS * iops
		s.latW += iops
	}
	for _, b := range bins {
		if b.Index < 0 || b.Index >= fioformat.HistBins {
			continue // ParseHistLog reads no such bin
		}
		if s.bins == nil {
			s.bins = new([fioformat.HistBins]int64)
		}
		s.bins[b.Index] += b.Count
	}
}

// plus adds o to s.
func (s *sums) plus(o sums) {
	s.iops, s.mb, s.lat, s.latW = s.iops+o.iops, s.mb+o.mb, s.lat+o.lat, s.latW+o.latW
	if o.bins == nil {
		return
	}
	if s.bins == nil {
		s.bins = new([fioformat.HistBins]int64)
	}
	for i, n := range o.bins {
		s.bins[i] += n
	}
}

func figuresOf(d [3]sums, seconds int) results.FioDirections {
	return results.FioDirections{Read: d[0].direction(seconds), Write: d[1].direction(seconds), Total: d[2].direction(seconds)}
}

// direction is the window's figures: per-second means of IOPS and MB/s,
// the IOPS-weighted mean latency, and the latency distribution of the
// merged bins (absent when some second's I/Os are not in them).
func (s sums) direction(seconds int) *results.FioDirection {
	if s.iops == 0 {
		return nil
	}
	n := float64(seconds)
	d := &results.FioDirection{
		IOs: int64(math.Round(s.iops)), Bytes: int64(math.Round(s.mb * 1e6)),
		IOPS: s.iops / n, BytesPerSec: s.mb * 1e6 / n, RuntimeMS: int64(seconds) * 1000,
	}
	if s.latW > 0 {
		d.Completion.MeanUS = s.lat / s.latW
	}
	if s.bins == nil {
		return d
	}
	var bins []fioformat.HistBin
	for i, n := range s.bins {
		if n > 0 {
			bins = append(bins, fioformat.HistBin{Index: i, Count: n})
		}
	}
	d.Completion.MinUS = fioformat.HistBinValue(bins[0].Index) / 1000
	d.Completion.MaxUS = fioformat.HistBinValue(bins[len(bins)-1].Index) / 1000
	var count int64
	var sum float64
	d.Bins = make(map[int64]int64, len(bins))
	for _, b := range bins {
		count += b.Count
		v := fioformat.HistBinValue(b.Index)
		sum += v * float64(b.Count)
		d.Bins[int64(math.Round(v))] += b.Count
	}
	d.Completion.N = count
	mean := sum / float64(count)
	var sq float64
	for _, b := range bins {
		dv := fioformat.HistBinValue(b.Index) - mean
		sq += dv * dv * float64(b.Count)
	}
	d.Completion.StdevUS = math.Sqrt(sq/float64(count)) / 1000
	for _, p := range FleetPercentiles {
		d.Completion.Percentiles = append(d.Completion.Percentiles, results.FioPercentile{P: p, US: fioformat.HistPercentile(bins, p) / 1000})
	}
	return d
}
