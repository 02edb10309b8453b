package results

import (
	"errors"
	"fmt"
	"strings"
)

// The figure catalogue: every figure dbio records, defined once. A writer
// records a figure in its catalogue unit (FigureName.With); analysis,
// the reports, a suite's expectations and the steady-state criteria read
// its title, unit, better direction and how it adds up here, never from
// a table of their own or from the shape of its name. The catalogue's
// test fails when the tree writes or reads a figure it does not define.
//
// Over repeats of one configuration every figure is read the same way, as
// its median with an interval (analysis.Repeated), so a definition says
// only how a figure adds up over parts measured side by side.

// Better says which way a figure improves.
type Better int

// The directions of improvement.
const (
	// NeitherBetter is a figure shown, never called better or worse: a
	// setting, a count, or a share that falls for good and bad reasons
	// alike (CPU iowait).
	NeitherBetter Better = 0
	// HigherBetter is work done: throughput of any kind.
	HigherBetter Better = 1
	// LowerBetter is time taken or work lost: latency, durations, errors.
	LowerBetter Better = -1
)

// Combine says how the figures of parts measured side by side (the hosts of
// a fleet, the tenants of one storage) make the whole's.
type Combine int

// The ways figures combine.
const (
	// Apart is a figure each part keeps as its own: a setting, a
	// duration of one part's event, a ratio to the part's own baseline.
	Apart Combine = iota
	// Summed is a rate over one window: the parts' add up (throughput
	// summed over the seconds every part was measuring).
	Summed
	// Weighted is a mean over operations: the parts' means weighted by
	// their operations (fio's mean latency over every host's I/Os).
	Weighted
	// Mean is the plain mean of the parts' figures (fio's CPU per job).
	Mean
	// Merged is a percentile or a maximum: drawn from the parts'
	// histograms merged, never from the parts' figures.
	Merged
	// Largest is the largest part's (a point's elapsed time on the host
	// that ran longest).
	Largest
)

// Recorded says where a figure is recorded; a figure may be in several.
type Recorded uint8

// The records a figure is in.
const (
	// InStep is a step's figures (its summary.json).
	InStep Recorded = 1 << iota
	// InRun is the run's own figures, drawn from all its steps (run.json).
	InRun
	// InSecond is a per-second value of the run's series (series.csv),
	// under the figure's name. A phase of several tenants writes each
	// tenant's again under "<tenant>_".
	InSecond
)

// FigureDef is a figure's definition.
type FigureDef struct {
	// Name is the figure's name. In a family of figures "*" stands for
	// the part that varies: a device ("*_latency_mean"), a tenant and its
	// backup cycle, or another figure ("*_at_max_users", see Of).
	Name FigureName
	// Title is the figure in words, as a report heads it: "NOPM", "p99
	// latency". In a family, "*" stands for the part that varies.
	Title string
	// Short is the heading of a narrow table's column where it differs
	// from Title ("TPM/user"), empty otherwise: see Heading.
	Short string
	// Unit is the unit the figure is recorded in: "tx/min", "µs". Empty
	// for a count or a figure in another figure's unit (Of).
	Unit string
	// Better is which way the figure improves.
	Better Better
	// Across is how the figure adds up over hosts and tenants.
	Across Combine
	// In says where the figure is recorded; 0 for a name a criterion
	// reads but dbio never records (fio's bw).
	In Recorded
	// Steady says a steady-state criterion may judge the figure's
	// per-second (or, for fio, per-round) values: "tps_slope:1%".
	Steady bool
	// Of says "*" is another figure's name: the family's figures are in
	// that figure's unit, and their titles name it.
	Of bool
}

// Throughput says the figure is work done per unit of time, which adds up
// over parts measured side by side: summed, and better higher.
func (d FigureDef) Throughput() bool { return d.Across == Summed && d.Better == HigherBetter }

// Heading is the figure's column heading in a narrow table: Short, or
// the title.
func (d FigureDef) Heading() string {
	if d.Short != "" {
		return d.Short
	}
	return d.Title
}

// catalogue is every definition, in the order reports list them. Exact
// names are found before families.
var catalogue = []FigureDef{
	// A transaction workload's steps.
	{Name: FigureTPM, Title: "TPM", Unit: "tx/min", Better: HigherBetter, Across: Summed, In: InStep | InSecond, Steady: true},
	{Name: FigureNOPM, Title: "NOPM", Unit: "new-orders/min", Better: HigherBetter, Across: Summed, In: InStep | InSecond, Steady: true},
	// Kept apart: MariaDB counts for its whole server, which tenants may share.
	{Name: FigureEngineTPM, Title: "engine TPM", Unit: "tx/min", Better: HigherBetter, Across: Apart, In: InStep},
	{Name: FigureTPMPerUser, Title: "TPM per user", Short: "TPM/user", Unit: "tx/min/user", Better: HigherBetter, Across: Apart, In: InStep},
	{Name: FigureTPS, Title: "TPS", Unit: "tx/s", Better: HigherBetter, Across: Summed, In: InStep | InSecond, Steady: true},
	{Name: FigureQPS, Title: "QPS", Unit: "queries/s", Better: HigherBetter, Across: Summed, In: InStep | InSecond, Steady: true},
	{Name: FigureLatencyP99, Title: "p99 latency", Unit: "ms", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureLatencyP99Corrected, Title: "p99 latency from intended start", Unit: "ms", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureLatencyMean, Title: "mean latency", Unit: "ms", Better: LowerBetter, Across: Weighted, In: InStep | InSecond},
	{Name: FigureLatencyP95, Title: "p95 latency", Unit: "ms", Better: LowerBetter, Across: Merged, In: InStep | InSecond},
	{Name: FigureErrorsPerSec, Title: "errors per second", Unit: "errors/s", Better: LowerBetter, Across: Summed, In: InStep | InSecond},
	{Name: FigureReconnectsPerSec, Title: "reconnects per second", Unit: "reconnects/s", Better: LowerBetter, Across: Summed, In: InStep | InSecond},
	{Name: FigureInteractiveTPS, Title: "interactive TPS", Unit: "tx/s", Better: HigherBetter, Across: Summed, In: InStep | InSecond},
	{Name: FigureInteractiveLatencyMean, Title: "interactive mean latency", Unit: "ms", Better: LowerBetter, Across: Weighted, In: InStep | InSecond},
	{Name: FigureInteractiveLatencyP95, Title: "interactive p95 latency", Unit: "ms", Better: LowerBetter, Across: Merged, In: InStep | InSecond},
	{Name: FigureInteractiveLatencyP99, Title: "interactive p99 latency", Unit: "ms", Better: LowerBetter, Across: Merged, In: InStep | InSecond},
	{Name: FigureBatchTPS, Title: "batch TPS", Unit: "tx/s", Better: HigherBetter, Across: Summed, In: InStep | InSecond},
	{Name: FigureBatchRowsPerSec, Title: "batch rows per second", Unit: "rows/s", Better: HigherBetter, Across: Summed, In: InStep | InSecond},
	{Name: FigureBatchLatencyMean, Title: "batch mean latency", Unit: "ms", Better: LowerBetter, Across: Weighted, In: InStep | InSecond},

	// Every transaction workload's seconds, and an open-loop step's.
	{Name: FigureSecondErrors, Title: "failed transactions", Unit: "tx", Better: LowerBetter, Across: Summed, In: InSecond},
	{Name: FigureSecondLatencyP50, Title: "p50 latency", Unit: "ms", Better: LowerBetter, Across: Merged, In: InSecond},
	{Name: FigureSecondLatencyP99, Title: "p99 latency", Unit: "ms", Better: LowerBetter, Across: Merged, In: InSecond},
	{Name: SeriesOfferedTPS, Title: "offered TPS", Unit: "tx/s", Better: NeitherBetter, Across: Summed, In: InSecond},
	{Name: SeriesAchievedTPS, Title: "achieved TPS", Unit: "tx/s", Better: HigherBetter, Across: Summed, In: InSecond},
	{Name: SeriesLate, Title: "late starts", Unit: "tx", Better: LowerBetter, Across: Summed, In: InSecond},
	{Name: SeriesLatencyP50Corrected, Title: "p50 latency from intended start", Unit: "ms", Better: LowerBetter, Across: Merged, In: InSecond},
	{Name: SeriesLatencyP99Corrected, Title: "p99 latency from intended start", Unit: "ms", Better: LowerBetter, Across: Merged, In: InSecond},

	// A fio point, from fio's own report.
	{Name: FigureIOPS, Title: "IOPS", Unit: "I/O per s", Better: HigherBetter, Across: Summed, In: InStep, Steady: true},
	{Name: FigureIOPSStdev, Title: "IOPS standard deviation", Short: "IOPS σ", Unit: "I/O per s", Better: NeitherBetter, Across: Apart, In: InStep},
	{Name: FigureReadIOPS, Title: "read IOPS", Unit: "I/O per s", Better: HigherBetter, Across: Summed, In: InStep | InSecond},
	{Name: FigureWriteIOPS, Title: "write IOPS", Unit: "I/O per s", Better: HigherBetter, Across: Summed, In: InStep | InSecond},
	{Name: FigureMBPerSec, Title: "MB/s", Unit: "MB/s", Better: HigherBetter, Across: Summed, In: InStep},
	{Name: FigureBandwidth, Title: "bandwidth", Unit: "bytes/s", Better: HigherBetter, Across: Summed, Steady: true},
	{Name: FigureLatMeanUS, Title: "mean latency", Short: "mean", Unit: "µs", Better: LowerBetter, Across: Weighted, In: InStep},
	{Name: FigureLatP50US, Title: "p50 latency", Short: "p50", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureLatP95US, Title: "p95 latency", Short: "p95", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureLatP99US, Title: "p99 latency", Short: "p99", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureLatP999US, Title: "p99.9 latency", Short: "p99.9", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureLatMaxUS, Title: "max latency", Short: "max", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureFioUsrCPU, Title: "fio's user CPU", Short: "usr", Unit: "% of a CPU per job", Better: NeitherBetter, Across: Mean, In: InStep},
	{Name: FigureFioSysCPU, Title: "fio's system CPU", Short: "sys", Unit: "% of a CPU per job", Better: NeitherBetter, Across: Mean, In: InStep},
	{Name: FigureRateTargetIOPS, Title: "IOPS rate limit", Short: "rate limit", Unit: "I/O per s", Better: NeitherBetter, Across: Apart, In: InStep},
	{Name: FigureSteadyAttained, Title: "steady state attained", Unit: "bool", Better: NeitherBetter, Across: Apart, In: InStep},
	{Name: FigureSteadyElapsedS, Title: "elapsed until steady or stopped", Unit: "s", Better: NeitherBetter, Across: Largest, In: InStep},
	{Name: FigureSteadyWindow, Title: "IOPS over the steady window", Unit: "I/O per s", Better: HigherBetter, Across: Apart, In: InStep},

	// A run stepped up to a response-time ceiling.
	{Name: FigureMaxUsersUnderCeiling, Title: "users under the ceiling", Unit: "users", Better: HigherBetter, Across: Apart, In: InRun},
	{Name: FigureCeiling, Title: "ceiling", Better: NeitherBetter, Across: Apart, In: InRun},
	{Name: FigureCeilingReached, Title: "ceiling reached", Unit: "bool", Better: NeitherBetter, Across: Apart, In: InRun},
	{Name: AtMaxUsers("*"), Title: "* at the most users under the ceiling", Better: NeitherBetter, Across: Apart, In: InRun, Of: true},

	// A backup or restore step, and its copy's seconds.
	{Name: FigureCopySeconds, Title: "duration", Unit: "s", Better: LowerBetter, Across: Apart, In: InStep},
	{Name: FigureCopyMB, Title: "size", Unit: "MB", Better: NeitherBetter, Across: Apart, In: InStep},
	{Name: FigureCopyMBPerSec, Title: "MB/s", Unit: "MB/s", Better: HigherBetter, Across: Apart, In: InStep},
	{Name: FigureBackupMBPerSec, Title: "backup MB/s", Unit: "MB/s", Better: HigherBetter, Across: Apart, In: InSecond},
	{Name: FigureRestoreMBPerSec, Title: "restore MB/s", Unit: "MB/s", Better: HigherBetter, Across: Apart, In: InSecond},
	{Name: FigureBackupActive, Title: "backup running", Better: NeitherBetter, Across: Apart, In: InSecond},
	// A capture's and a replay's: a replay offers the captured load, so
	// its rates are neither better nor worse, its latencies are.
	{Name: FigureSyncsPerSec, Title: "syncs per second", Short: "syncs/s", Unit: "syncs/s", Better: NeitherBetter, Across: Summed, In: InStep | InSecond},
	{Name: FigureReadP50US, Title: "read p50 latency", Short: "read p50", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureReadP99US, Title: "read p99 latency", Short: "read p99", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep | InSecond},
	{Name: FigureReadP999US, Title: "read p99.9 latency", Short: "read p99.9", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureWriteP50US, Title: "write p50 latency", Short: "write p50", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureWriteP99US, Title: "write p99 latency", Short: "write p99", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep | InSecond},
	{Name: FigureWriteP999US, Title: "write p99.9 latency", Short: "write p99.9", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureSyncP50US, Title: "sync p50 latency", Short: "sync p50", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureSyncP99US, Title: "sync p99 latency", Short: "sync p99", Unit: "µs", Better: LowerBetter, Across: Merged, In: InStep},
	{Name: FigureRequestsS, Title: "time the requests took", Short: "seconds", Unit: "s", Better: LowerBetter, Across: Largest, In: InStep},
	{Name: FigureBehindS, Title: "behind the recorded pace", Short: "behind", Unit: "s", Better: LowerBetter, Across: Largest, In: InStep},
	{Name: FigureKeptUp, Title: "kept up with the recorded pace", Short: "kept up", Unit: "bool", Better: HigherBetter, Across: Apart, In: InStep},
	{Name: FigurePaceOfSource, Title: "pace against the source", Short: "pace", Unit: "×", Better: HigherBetter, Across: Apart, In: InStep},
	{Name: DeviceLatency("*", "mean"), Title: "* mean latency", Unit: "ms", Better: LowerBetter, Across: Apart, In: InStep},
	{Name: DeviceLatency("*", "p99"), Title: "* p99 latency", Unit: "ms", Better: LowerBetter, Across: Apart, In: InStep},
	{Name: DeviceLatency("*", "peak"), Title: "* peak latency", Unit: "ms", Better: LowerBetter, Across: Apart, In: InStep},

	// A noisy-neighbour phase.
	{Name: FigureTenants, Title: "tenants", Better: NeitherBetter, Across: Summed, In: InStep},
	{Name: FigureTPMTotal, Title: "total TPM", Unit: "tx/min", Better: HigherBetter, Across: Summed, In: InStep},
	{Name: FigureNOPMTotal, Title: "total NOPM", Unit: "new-orders/min", Better: HigherBetter, Across: Summed, In: InStep},
	{Name: FigureTPMPerTenant, Title: "TPM per tenant", Unit: "tx/min", Better: HigherBetter, Across: Apart, In: InStep},
	{Name: FigureTPMVsQuiet, Title: "TPM against quiet", Unit: "%", Better: HigherBetter, Across: Apart, In: InStep},
	{Name: "backup_*_s", Title: "backup *", Unit: "s", Better: LowerBetter, Across: Apart, In: InStep},
}

// Catalogue is every figure's definition, families with "*" in their names.
func Catalogue() []FigureDef { return append([]FigureDef(nil), catalogue...) }

// Defined says whether the catalogue defines the figure, by its name or
// as one of a family.
func (n FigureName) Defined() bool {
	_, ok := n.lookup()
	return ok
}

// Def is the figure's definition, named as asked. A figure the catalogue
// does not define (one an older dbio recorded, read back) is defined from
// its name alone: its title the name in words, neither better nor worse,
// kept apart.
func (n FigureName) Def() FigureDef {
	if d, ok := n.lookup(); ok {
		return d
	}
	return FigureDef{Name: n, Title: strings.ReplaceAll(string(n), "_", " "), Better: NeitherBetter, Across: Apart}
}

// With is the figure with value v, in its catalogue unit.
func (n FigureName) With(v float64) Figure {
	return Figure{Name: n, Value: v, Unit: n.Def().Unit}
}

func (n FigureName) lookup() (FigureDef, bool) {
	for _, d := range catalogue {
		if d.Name == n {
			return d, true
		}
	}
	for _, d := range catalogue {
		part, ok := d.match(n)
		if !ok {
			continue
		}
		d.Name = n
		if d.Of {
			of, ok := FigureName(part).lookup()
			if !ok {
				continue
			}
			d.Title, d.Unit = strings.ReplaceAll(d.Title, "*", of.Title), of.Unit
			return d, true
		}
		d.Title = strings.ReplaceAll(d.Title, "*", part)
		return d, true
	}
	return FigureDef{}, false
}

// match is the part of name that a family's "*" stands for; false when d
// is no family or name is not one of it.
func (d FigureDef) match(name FigureName) (string, bool) {
	prefix, suffix, family := strings.Cut(string(d.Name), "*")
	n := string(name)
	if !family || len(n) <= len(prefix)+len(suffix) || !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, suffix) {
		return "", false
	}
	return n[len(prefix) : len(n)-len(suffix)], true
}

// SteadyFigures are the figures a steady-state criterion may judge, in
// the catalogue's order.
func SteadyFigures() []FigureName {
	var out []FigureName
	for _, d := range catalogue {
		if d.Steady {
			out = append(out, d.Name)
		}
	}
	return out
}

// CheckFigures says what of figures, recorded where in says, the
// catalogue does not define: a figure it has no definition of, one it
// does not record there, or one in another unit than its own (a series
// records no units). Every writer's tests ask it of what the writer wrote.
func CheckFigures(in Recorded, figs ...Figure) error {
	var problems []string
	for _, f := range figs {
		d, ok := f.Name.lookup()
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%q is not in the figure catalogue", f.Name))
		case d.In&in == 0:
			problems = append(problems, fmt.Sprintf("%q is not recorded there by the catalogue", f.Name))
		case in != InSecond && d.Unit != "" && f.Unit != d.Unit:
			problems = append(problems, fmt.Sprintf("%q is in %q, the catalogue's unit is %q", f.Name, f.Unit, d.Unit))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}
