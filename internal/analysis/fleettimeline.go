package analysis

import (
	"fmt"
	"math"
	"slices"
	"time"

	"dbio/internal/fioformat"
	"dbio/internal/results"
)

// A fleet run's timelines: each host's figure second by second and the
// fleet's, the per-second sum over the seconds every host measured, on one
// time axis. They are drawn from the results directory alone: a device
// fleet's per-host fio logs in each point's hosts/ directory, a tenants
// run's hosts' own series.csv. Each host's seconds are put on this
// machine's clock by the offset the run measured for the host (its clock
// minus this machine's), so that a host whose clock is ahead is not drawn
// ahead, then on one grid by fleetGrid, the rule the fleet's figures of a
// tenants run are summed by.

// FleetSecond is one second of a host's (or the fleet's) line.
type FleetSecond struct {
	// Time is when the second ended, on the coordinator's clock.
	Time  time.Time
	Value float64
}

// FleetLine is one line of a fleet timeline, one step after another.
type FleetLine struct {
	// Name is the host's, or "fleet".
	Name string
	// Steps hold each step's seconds, in the order the steps ran; a step
	// the line has no second of is empty.
	Steps [][]FleetSecond
}

// FleetMark is a moment of a host worth pointing at on a fleet timeline:
// a backup a noisy neighbour of the host took.
type FleetMark struct {
	Host    string
	What    string
	From    time.Time
	Seconds float64
}

// FleetTimeline is one figure of a fleet run over its steps.
type FleetTimeline struct {
	Figure results.FigureDef
	// Steps are the steps drawn, in order; each line's Steps follow them.
	Steps []string
	Fleet FleetLine
	Hosts []FleetLine
	// OffsetsMS are the clock offsets applied, by host; a host absent had
	// none recorded, and is placed by its own clock.
	OffsetsMS map[string]float64
	Marks     []FleetMark
}

// hostSeconds is one host's part of one step: its seconds on the
// coordinator's clock. A second whose Value is NaN was measured without
// the figure: it is no point of the host's line, and adds nothing to the
// fleet's, as it adds nothing to the fleet's figures.
type hostSeconds struct {
	host    string
	seconds []FleetSecond
}

// FleetTimelines are a fleet run's timelines: for a device fleet, IOPS and
// MB/s per second of every point; for tenants, each throughput figure per
// second of every step. Nil for a run on one machine.
func FleetTimelines(r *Recorded) ([]FleetTimeline, error) {
	if r.Run.Tenants != nil {
		return tenantTimelines(r)
	}
	return deviceTimelines(r)
}

// clockOffsets are the hosts' offsets the run measured at its start (at
// its end for a host measured only then), in ms.
func clockOffsets(run results.Run) map[string]float64 {
	out := map[string]float64{}
	for _, h := range run.Hosts {
		for _, c := range h.Clock {
			if _, ok := out[h.Name]; !ok || c.At == "start" {
				out[h.Name] = c.OffsetMS
			}
		}
	}
	return out
}

// deviceTimelines read each fleet point's hosts' fio logs.
func deviceTimelines(r *Recorded) ([]FleetTimeline, error) {
	iops := FleetTimeline{Figure: results.FigureIOPS.Def(), OffsetsMS: clockOffsets(r.Run)}
	mbs := FleetTimeline{Figure: results.FigureMBPerSec.Def(), OffsetsMS: iops.OffsetsMS}
	for _, p := range r.Fio {
		f := p.Fio.Fleet
		if f == nil || !Completed(p) {
			continue
		}
		var hostIOPS, hostMBs []hostSeconds
		for _, h := range f.Hosts {
			// Inside the point's directory, reached without a link.
			dir, err := results.Within(results.StepPath(r.Path, p.Index, p.Name), h.Dir)
			if err != nil {
				return nil, fmt.Errorf("point %s: host %s: %w", p.Name, h.Host, err)
			}
			logs, err := fioformat.ReadAveragedLogs(dir)
			if err != nil {
				return nil, fmt.Errorf("point %s: host %s's per-second logs: %w", p.Name, h.Host, err)
			}
			is, ms := jobSeconds(logs)
			off := msDuration(iops.OffsetsMS[h.Host])
			is, ms = onCoordinatorClock(is, off), onCoordinatorClock(ms, off)
			hostIOPS = append(hostIOPS, hostSeconds{h.Host, is})
			hostMBs = append(hostMBs, hostSeconds{h.Host, ms})
		}
		iops.addStep(p.Name, hostIOPS)
		mbs.addStep(p.Name, hostMBs)
	}
	if len(iops.Steps) == 0 {
		return nil, nil
	}
	return []FleetTimeline{iops, mbs}, nil
}

// jobSeconds sums a host's jobs second by second, as a point's own
// figures are (fioformat.MergeSeconds): its IOPS (reads and writes) and
// MB/s, each second drawn when it was logged.
func jobSeconds(jobs []fioformat.JobLogs) (iops, mbs []FleetSecond) {
	secs, _ := fioformat.MergeSeconds(jobs)
	for _, s := range secs {
		iops = append(iops, FleetSecond{Time: s.Logged, Value: s.IOPS()})
		mbs = append(mbs, FleetSecond{Time: s.Logged, Value: s.MBPerSec})
	}
	return iops, mbs
}

// onCoordinatorClock moves a host's seconds by its clock's offset.
func onCoordinatorClock(secs []FleetSecond, offset time.Duration) []FleetSecond {
	out := make([]FleetSecond, len(secs))
	for i, s := range secs {
		out[i] = FleetSecond{Time: s.Time.Add(-offset), Value: s.Value}
	}
	return out
}

// addStep adds one step's hosts' seconds to the timeline, and the fleet's
// sum over the seconds all of them have, placed by fleetGrid as a tenants
// run's fleet figures are. A device fleet's figures were drawn by fio's own
// window (fio.Fleet), which also leaves out a second some host logged
// without its latency bins; these logs carry no bins, so such a second is
// on the line though not in the point's figures.
func (tl *FleetTimeline) addStep(step string, hosts []hostSeconds) {
	tl.Steps = append(tl.Steps, step)
	tl.Fleet.Name = "fleet"
	times := make([][]time.Time, len(hosts))
	for i, h := range hosts {
		for _, s := range h.seconds {
			times[i] = append(times[i], s.Time)
		}
	}
	origin, slots, window := fleetGrid(times)
	sums := map[int]float64{}
	for i, h := range hosts {
		line := tl.host(h.host)
		var drawn []FleetSecond
		for j, s := range h.seconds {
			if math.IsNaN(s.Value) {
				continue
			}
			drawn = append(drawn, s)
			sums[slots[i][j]] += s.Value
		}
		line.Steps = append(line.Steps, drawn)
	}
	var fleet []FleetSecond
	for _, k := range window {
		fleet = append(fleet, FleetSecond{Time: origin.Add(time.Duration(k) * time.Second), Value: sums[k]})
	}
	tl.Fleet.Steps = append(tl.Fleet.Steps, fleet)
}

// host is the host's line, added (with an empty step for each step before
// this one) the first time the host appears.
func (tl *FleetTimeline) host(name string) *FleetLine {
	for i := range tl.Hosts {
		if tl.Hosts[i].Name == name {
			for len(tl.Hosts[i].Steps) < len(tl.Steps)-1 {
				tl.Hosts[i].Steps = append(tl.Hosts[i].Steps, nil)
			}
			return &tl.Hosts[i]
		}
	}
	tl.Hosts = append(tl.Hosts, FleetLine{Name: name, Steps: make([][]FleetSecond, len(tl.Steps)-1)})
	return &tl.Hosts[len(tl.Hosts)-1]
}

// tenantTimelines read each host's own results directory: its series of
// every fleet step's measured seconds, and the backups its steps recorded.
func tenantTimelines(r *Recorded) ([]FleetTimeline, error) {
	offsets := tenantClockOffsets(r.Run.Tenants)
	type host struct {
		name string
		run  *results.Loaded
		// started is the host's run's start on the coordinator's clock.
		started time.Time
	}
	var hosts []host
	for _, h := range r.Run.Tenants.Hosts {
		if h.Dir == "" {
			continue
		}
		// Inside the run's directory, reached without a link.
		dir, err := results.Within(r.Path, h.Dir)
		if err != nil {
			return nil, fmt.Errorf("host %s: %w", h.Host, err)
		}
		l, err := results.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("host %s: %w", h.Host, err)
		}
		hosts = append(hosts, host{h.Host, l, l.Run.Started.Add(-msDuration(offsets[h.Host]))})
	}
	var steps []results.Step
	for _, w := range r.Workloads {
		steps = append(steps, w.Steps...)
	}
	slices.SortStableFunc(steps, func(a, b results.Step) int { return a.Index - b.Index })
	figs := TenantFigures(steps)
	// Each fleet step's hosts' seconds, read as the fleet's figures were.
	type fleetStep struct {
		name    string
		seconds [][]TenantSecond
	}
	var fleetSteps []fleetStep
	for _, s := range steps {
		if s.Fleet == nil {
			continue
		}
		fs := fleetStep{name: s.Name}
		for _, h := range hosts {
			fs.seconds = append(fs.seconds, TenantSeconds(h.run.Series, h.started, s.Name, figs))
		}
		fleetSteps = append(fleetSteps, fs)
	}
	if len(fleetSteps) == 0 {
		return nil, nil
	}
	var out []FleetTimeline
	for _, fig := range figs {
		tl := FleetTimeline{Figure: fig, OffsetsMS: offsets}
		drawn := false
		for _, fs := range fleetSteps {
			var hs []hostSeconds
			for i, h := range hosts {
				var line []FleetSecond
				for _, sec := range fs.seconds[i] {
					v, ok := sec.Values[fig.Name]
					if !ok {
						v = math.NaN()
					} else {
						drawn = true
					}
					line = append(line, FleetSecond{Time: sec.Time, Value: v})
				}
				hs = append(hs, hostSeconds{h.name, line})
			}
			tl.addStep(fs.name, hs)
		}
		if !drawn {
			continue
		}
		for _, h := range hosts {
			tl.Marks = append(tl.Marks, hostBackups(h.name, h.run.Steps, offsets[h.name])...)
		}
		out = append(out, tl)
	}
	return out, nil
}

// tenantClockOffsets are the hosts' offsets a tenants run measured at its
// start, in ms: the ones it put the hosts' starts, steps and seconds on the
// coordinator's clock by. A host without one (a run before dbio measured
// them, or a clock that could not be read) is absent: the run took its
// clock as it was.
func tenantClockOffsets(t *results.Tenants) map[string]float64 {
	out := map[string]float64{}
	for _, h := range t.Hosts {
		for _, c := range h.Clock {
			if c.At == "start" {
				out[h.Host] = c.OffsetMS
			}
		}
	}
	return out
}

func msDuration(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

// hostBackups are the backups a host's noisy-neighbour phases recorded,
// on the coordinator's clock.
func hostBackups(host string, steps []results.Step, offsetMS float64) []FleetMark {
	var out []FleetMark
	for _, s := range steps {
		if s.Noisy == nil {
			continue
		}
		for _, b := range s.Noisy.Backups {
			if b.Start.IsZero() {
				continue
			}
			what := "backup of " + b.Tenant
			if b.Error != "" {
				what += " (failed)"
			}
			out = append(out, FleetMark{Host: host, What: what, From: b.Start.Add(-msDuration(offsetMS)), Seconds: b.Seconds})
		}
	}
	return out
}
