package runner

import (
	"fmt"
	"math"
	"time"

	"dbio/internal/fio"
	"dbio/internal/goal"
	"dbio/internal/replay"
	"dbio/internal/workload"
)

// Expectation is what a run is expected to take, part by part: what every
// dry run prints and the live line starts from, worked out here once for
// every command and suite. Each part has a ceiling (ramp-ups and
// measurements that may end early run to their longest) and a typical
// length (a measurement until precise ending when a figure of the
// workload's usual second-to-second variation would be precise).
type Expectation struct {
	Parts []TimePart
}

// TimePart is one part of a run's time.
type TimePart struct {
	// What names the part: "load", "reset", "ramp-ups", "measurements"...
	What string
	// Ceiling is the longest the part lasts; Typical what it usually
	// lasts, the ceiling unless the part may end early.
	Ceiling, Typical time.Duration
	// How says what the figures rest on.
	How string
}

// Ceiling is the run's time with every part at its longest.
func (e Expectation) Ceiling() time.Duration {
	var d time.Duration
	for _, p := range e.Parts {
		d += p.Ceiling
	}
	return d
}

// Typical is the run's time with every part at its typical length.
func (e Expectation) Typical() time.Duration {
	var d time.Duration
	for _, p := range e.Parts {
		d += p.Typical
	}
	return d
}

// Bounded says some part may end before its ceiling.
func (e Expectation) Bounded() bool { return e.Typical() < e.Ceiling() }

// Add appends the parts of another expectation (a suite's next run).
func (e *Expectation) Add(o Expectation) {
	for _, p := range o.Parts {
		e.add(p)
	}
}

// add appends p, summed into the part of the same name when there is one,
// so that a suite's or a repeat set's parts read as one table.
func (e *Expectation) add(p TimePart) {
	if p.Ceiling <= 0 && p.Typical <= 0 && p.How == "" {
		return
	}
	for i := range e.Parts {
		if e.Parts[i].What == p.What {
			e.Parts[i].Ceiling += p.Ceiling
			e.Parts[i].Typical += p.Typical
			if e.Parts[i].How != p.How {
				e.Parts[i].How = "" // several runs' reasons: none is the whole part's
			}
			return
		}
	}
	e.Parts = append(e.Parts, p)
}

// ExpectInputs are what a plan alone does not say of its time.
type ExpectInputs struct {
	// Load is one database's load on the plan's engine, with the
	// workload's usual variation (its Estimate).
	Load workload.Estimate
	// Repeats is how many times the plan runs (--repeat); 0 counts as 1.
	Repeats int
	// Kept says a pristine copy of this data is there before the run
	// starts (a suite's earlier run on the same target loaded it): a --data
	// reset run restores it instead of loading.
	Kept bool
	// Layout is the working files' layout: the fio pass's, or a replay's.
	Layout time.Duration
}

// KeepBytesPerSecond and ResetBytesPerSecond are the rates a --data
// reset run is taken to copy a database at: keeping the pristine copy
// after a load, and restoring it before a later run. Measured as
// run.json's pristine_copy and reset phases of dbio tpcc --repeat 2 --data
// reset at 1 and 4 warehouses on each engine, by file copies on ext4, on
// the project's 2-core machine at a load average of 7 to 9 (other tests
// running): keeping 40 to 380 MB/s (median 106: PostgreSQL 79 and 139,
// MariaDB 40 and 106, SQLite 378), restoring 70 to 500 MB/s (median 270:
// PostgreSQL 70 and 270, MariaDB 203 and 325, SQLite 504); the larger
// databases copied faster, a copy's fixed costs (a server's stop and
// start, its files synced) weighing less. A reflink clone takes well
// under a second at any size, so the estimate errs long where the file
// system offers them.
const (
	KeepBytesPerSecond  = 100e6
	ResetBytesPerSecond = 250e6
)

// Expect works out p's time. A plan without a body is its fio pass alone.
func Expect(p Plan, in ExpectInputs) Expectation {
	var e Expectation
	runs := max(in.Repeats, 1)
	if p.Fio != nil {
		cfg := p.Fio.Config
		if len(cfg.Targets) == 0 {
			cfg.Targets = []string{p.DataPath} // the pass's target, as the run gives it
		}
		fioParts(&e, cfg, runs, in.Layout)
	} else if _, ok := p.Body.(Replay); ok && in.Layout > 0 {
		// Laid out again by every repeat: the replay removes it as it ends.
		l := time.Duration(runs) * in.Layout
		e.add(TimePart{What: "layout", Ceiling: l, Typical: l, How: "the replay's working file written in full, at the rate disk --dry-run assumes"})
	}
	if p.Body == nil {
		return e
	}
	dbs := DatabasesLoaded(p.Body)
	load := time.Duration(dbs) * in.Load.Load
	bytes := float64(p.SpaceNeeded) * float64(dbs)
	keepTime := time.Duration(bytes / KeepBytesPerSecond * float64(time.Second)).Round(time.Second)
	keepHow := fmt.Sprintf("the database's %d MB copied at %d MB/s (measured keeping copies on a 2-core machine)", p.SpaceNeeded*uint64(dbs)/1e6, int(KeepBytesPerSecond/1e6))
	resetTime := time.Duration(bytes / ResetBytesPerSecond * float64(time.Second)).Round(time.Second)
	resetHow := fmt.Sprintf("the database's %d MB restored at %d MB/s (measured restoring copies on a 2-core machine)", p.SpaceNeeded*uint64(dbs)/1e6, int(ResetBytesPerSecond/1e6))
	switch dataPolicy(p) {
	case workload.DataReuse:
		e.add(TimePart{What: "load", How: "none if the data is there to reuse, else " + roundDuration(load)})
	case workload.DataReset:
		loads, resets := 1, runs-1
		if in.Kept {
			loads, resets = 0, runs
		}
		if loads > 0 {
			e.add(TimePart{What: "load", Ceiling: load, Typical: load, How: in.Load.How + "; none when a pristine copy of this data is there already"})
			e.add(TimePart{What: "pristine copy", Ceiling: keepTime, Typical: keepTime, How: keepHow})
		}
		r := time.Duration(resets) * resetTime
		e.add(TimePart{What: "resets", Ceiling: r, Typical: r, How: fmt.Sprintf("%d restore(s): %s", resets, resetHow)})
	default:
		l := time.Duration(runs) * load
		e.add(TimePart{What: "load", Ceiling: l, Typical: l, How: in.Load.How})
	}
	for i := 0; i < runs; i++ {
		bodyParts(&e, p.Body, in.Load)
	}
	e.add(checkPart(p, in.Load, runs))
	return e
}

// checkPart is the consistency checks after each of runs runs of p,
// where the workload knows how long they take: the user steps and a goal
// search check the database as they end, unless the user skipped it.
func checkPart(p Plan, est workload.Estimate, runs int) TimePart {
	switch p.Body.(type) {
	case Steps, Goal:
	default:
		return TimePart{}
	}
	if p.SkipChecks || est.Check <= 0 {
		return TimePart{}
	}
	d := time.Duration(runs) * est.Check
	return TimePart{What: "checks", Ceiling: d, Typical: d, How: fmt.Sprintf("%d × %s: %s", runs, est.Check, est.CheckHow)}
}

// ExpectDisk works out a disk run's time, repeated runs times: its fio
// points, and the layout of its working files (laid out once, reused by
// every later repeat).
func ExpectDisk(p DiskPlan, layout time.Duration, runs int) Expectation {
	var e Expectation
	fioParts(&e, p.Fio.Config, max(runs, 1), layout)
	return e
}

// fioParts adds a fio pass's points, runs times, and its layout.
func fioParts(e *Expectation, cfg fio.Config, runs int, layout time.Duration) {
	if fp, err := fio.NewPlan(cfg, fio.BuiltinProfiles()); err == nil {
		d := time.Duration(runs) * fp.Duration()
		part := TimePart{What: "device pass", Ceiling: d, Typical: d, How: fmt.Sprintf("%d fio point(s), their ramps and runtimes", runs*len(fp.Points))}
		if b := cfg.Precision; b != nil {
			var typical time.Duration
			var how string
			for _, pt := range fp.Points {
				t, why := TypicalFioMeasurement(*b, time.Duration(pt.RuntimeS)*time.Second)
				typical += time.Duration(pt.RampS)*time.Second + t
				how = why
			}
			part.Typical = time.Duration(runs) * typical
			part.How = fmt.Sprintf("%d fio point(s), each until precise (%s), its runtime at most: %s", runs*len(fp.Points), b, how)
		}
		e.add(part)
	}
	if layout > 0 {
		e.add(TimePart{What: "layout", Ceiling: layout, Typical: layout, How: "the working file laid out once, at the rate disk --dry-run assumes"})
	}
}

// bodyParts adds a body's parts once.
func bodyParts(e *Expectation, b Body, est workload.Estimate) {
	switch b := b.(type) {
	case Tenants:
		bodyParts(e, b.Each, est) // every host at once
	case Steps:
		n := time.Duration(len(b.Users))
		ramp := TimePart{What: "ramp-ups", Ceiling: n * b.RampUp, Typical: n * b.RampUp, How: fmt.Sprintf("%d × %s", len(b.Users), b.RampUp)}
		if b.Steady != nil {
			ramp.How = fmt.Sprintf("%d × until steady, %s at most", len(b.Users), b.RampUp)
		}
		e.add(ramp)
		m := TimePart{What: "measurements", Ceiling: n * b.Step, Typical: n * b.Step, How: fmt.Sprintf("%d × %s", len(b.Users), b.Step)}
		if b.Precision != nil {
			typical, how := TypicalMeasurement(*b.Precision, b.Step, est)
			m.Typical = n * typical
			m.How = fmt.Sprintf("%d × until precise, %s at most; typically %s (%s)", len(b.Users), b.Step, typical, how)
		}
		if b.StopWhen != nil {
			m.How += ", fewer steps when the run stops early"
		}
		e.add(m)
	case Goal:
		n := probes(b.Search)
		d := time.Duration(n) * (b.RampUp + b.Step)
		e.add(TimePart{What: "probes", Ceiling: d, Typical: d, How: fmt.Sprintf("up to %d × (%s ramp-up + %s measured)", n, b.RampUp, b.Step)})
	case Backups:
		copies := 1
		what := "backup"
		if b.Restore {
			copies, what = 2, "backup and restore"
		}
		// A backup (and a restore) copies the database about twice as fast
		// as the load wrote it; the cycles start --interval apart.
		d := time.Duration(b.Cycles) * (b.Interval + time.Duration(copies)*est.Load/2)
		e.add(TimePart{What: "backups", Ceiling: d, Typical: d, How: fmt.Sprintf("%d %s cycle(s) %s apart, each copy about half the load's time", b.Cycles, what, b.Interval)})
	case Replay:
		d := replay.Lead + b.expected()
		how := fmt.Sprintf("fio's %s lead, then the capture's span at the recorded pace (speed %g); longer on storage that falls behind", replay.Lead, b.Speed)
		if b.Pace == replay.Max {
			how = fmt.Sprintf("fio's %s lead, then the capture's span: as fast as possible takes less where the storage keeps up, more where it does not", replay.Lead)
		}
		e.add(TimePart{What: "replay", Ceiling: d, Typical: d, How: how})
	case Noisy:
		inter := max(b.Quiet, time.Duration(b.Cycles)*b.Interval)
		d := b.RampUp + b.Quiet + b.RampUp + inter
		e.add(TimePart{What: "phases", Ceiling: d, Typical: d, How: fmt.Sprintf("the quiet baseline (%s ramp-up, %s), then the interference (%s ramp-up, %s: %d backup(s) %s apart)", b.RampUp, b.Quiet, b.RampUp, inter, b.Cycles, b.Interval)})
	}
}

// DatabasesLoaded is how many databases the body loads: a tenant's each in a
// noisy-neighbour study, else one.
func DatabasesLoaded(b Body) int {
	switch b := b.(type) {
	case Noisy:
		return max(b.Tenants, 1)
	case Tenants:
		return DatabasesLoaded(b.Each)
	}
	return 1
}

// probes is the most probes a goal search runs.
func probes(s goal.Search) int {
	if s.MaxProbes > 0 {
		return s.MaxProbes
	}
	return goal.DefaultMaxProbes
}

// z95 is the normal quantile of a two-sided 95 % interval.
const z95 = 1.96

// TypicalMeasurement is how long a measurement until precise typically
// lasts: the seconds after which a mean of independent seconds varying as
// the workload's usually do (est's coefficients of variation) is within
// the tightest bound asked, (z·cv/p)², kept between the bound's minimum
// and the ceiling. Batch means allow for the seconds' memory, which only
// lengthens a measurement: this is the time when the seconds have none.
func TypicalMeasurement(b PrecisionBound, ceiling time.Duration, est workload.Estimate) (time.Duration, string) {
	need := 0.0
	var why string
	for _, t := range b.Precision.Targets {
		cv, what := est.ThroughputCV, "throughput"
		if t.TxType != "" {
			cv, what = est.LatencyCV, "percentile"
		}
		if cv <= 0 || t.Percent <= 0 {
			return ceiling, "no usual variation known for the workload: at its ceiling"
		}
		s := math.Pow(z95*cv/(t.Percent/100), 2)
		if s > need {
			need = s
			why = fmt.Sprintf("a %s varying %.0f %% from second to second is within ±%g %% after %s", what, 100*cv, t.Percent, roundDuration(time.Duration(s*float64(time.Second))))
		}
	}
	if len(b.Precision.Targets) == 0 {
		return ceiling, "no figure bound: at its ceiling"
	}
	d := time.Duration(need * float64(time.Second)).Round(time.Second)
	switch {
	case d >= ceiling:
		d, why = ceiling, why+", beyond the ceiling"
	case d <= b.Min:
		d, why = b.Min, why+", within the minimum"
	}
	return d, why + "; " + est.VariationHow
}

// FioIOPSCV is the usual second-to-second variation of an fio point's IOPS
// (and MB/s): the coefficient of variation of fio's per-second IOPS log in
// 30 s of 4 KiB random reads at queue depth 8 (libaio) on the project's
// 2-core development machine, shared with other work (load average 29-47):
// 0.22 on tmpfs, 0.32 on its disk with O_DIRECT. An idle machine varies
// less, so the typical length errs long.
const FioIOPSCV = 0.25

// TypicalFioMeasurement is how long a precision-bound fio point's
// measurement typically lasts, worked out as TypicalMeasurement does for a
// database step: the IOPS and MB/s vary as FioIOPSCV says; no usual
// variation of a latency figure was measured, so a bound that names one
// typically runs to its ceiling.
func TypicalFioMeasurement(b fio.PrecisionBound, ceiling time.Duration) (time.Duration, string) {
	var bound PrecisionBound
	bound.Min = b.Min
	for _, t := range b.Precision.Targets {
		switch t.Name() {
		case "", "iops", "mb_s":
		default:
			return ceiling, "no usual variation of fio's latency figures known: at the runtime"
		}
		t.Series = "" // every throughput target varies as the IOPS do
		bound.Precision.Targets = append(bound.Precision.Targets, t)
	}
	return TypicalMeasurement(bound, ceiling, workload.Estimate{ThroughputCV: FioIOPSCV,
		VariationHow: fmt.Sprintf("fio's IOPS taken to vary %.0f %% from second to second", 100*FioIOPSCV)})
}

// roundDuration is d to the second, or to the minute beyond an hour.
func roundDuration(d time.Duration) string {
	if d >= time.Hour {
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
}
