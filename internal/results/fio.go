package results

import (
	"slices"
	"time"
)

// FioPoint is a fio step's detail: the point as planned and placed, how
// fio reached the target, and fio's own figures. internal/fio fills it in
// as each point ends; reading a run returns it as Step.Fio.
type FioPoint struct {
	// Step is the step index the point ran as.
	Step int `json:"step"`
	FioPlan
	Profile string `json:"profile"`
	// Engine and Direct are how fio reached the target (after any fallback).
	Engine  string    `json:"engine"`
	Direct  bool      `json:"direct"`
	Status  Status    `json:"status"`
	Error   string    `json:"error,omitempty"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// FioDirections are fio's figures.
	FioDirections
	// UsrCPU and SysCPU are fio's own CPU use, per job, in % of one CPU.
	UsrCPU   float64 `json:"fio_usr_cpu_pct"`
	SysCPU   float64 `json:"fio_sys_cpu_pct"`
	ElapsedS int     `json:"elapsed_s"`
	// Steady is fio's steady-state verdict, for points that asked for one.
	Steady *FioSteadyState `json:"steady,omitempty"`
	// Rounds is dbio's verdict on the rounds up to this one, for a point
	// that is a round (FioPlan.Round).
	Rounds *FioRounds `json:"rounds,omitempty"`
	// Seconds is how many per-second rows went to series.csv; SecondsDropped
	// how many fio logged for some jobs only.
	Seconds        int `json:"seconds"`
	SecondsDropped int `json:"seconds_dropped,omitempty"`
	// HistsWrapped counts the interval histograms fio logged with a bin
	// count past 2^63 (an unsigned difference that wrapped), left out of
	// the per-second percentiles.
	HistsWrapped int `json:"hists_wrapped,omitempty"`
	// IOPSStdev is the standard deviation of those seconds' IOPS around
	// their mean (population, as DiskSpd reports it); absent from points
	// recorded before dbio kept it.
	IOPSStdev float64  `json:"iops_stdev,omitempty"`
	FioNotes  []string `json:"fio_notes,omitempty"`
	JobFile   string   `json:"job_file"`
	Output    string   `json:"output"`
	// Fleet is a point run on several hosts at once: the window in which
	// every host was measuring and each host's figures over it. Read, Write
	// and Total are then the fleet's figures over that window.
	Fleet *FioFleet `json:"fleet,omitempty"`
}

// FioFleet is how a point ran on a fleet of hosts. The fleet's IOPS and
// MB/s are the sums of the hosts' over the window in which all of them were
// measuring; its latency percentiles are those of the hosts' latency bins
// merged over that window (never an average of the hosts' percentiles).
type FioFleet struct {
	// WindowStart and WindowEnd are the first and last second of the common
	// window: the seconds for which every host logged (with its latency
	// bins), on one clock counted from the earliest second any host logged
	// (fio's Unix-epoch logs).
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	// Seconds is the window's length in logged seconds.
	Seconds int `json:"seconds"`
	// StartSpreadMS is how far apart the hosts' first logged seconds were:
	// the skew of their starts, as fio's logs show it.
	StartSpreadMS int64 `json:"start_spread_ms"`
	// Hosts are each host's figures over the same window, in the order the
	// hosts were given.
	Hosts []FioHost `json:"hosts"`
	// LeftOut are the hosts of the run that are not in the figures, each
	// with why ("h2: its fio server ended during the point").
	LeftOut []string `json:"left_out,omitempty"`
	// System is the fleet's CPU, disks and memory during the point, from
	// the hosts' node exporters; nil when none was read.
	System *FleetSystem `json:"system,omitempty"`
}

// FioHost is one host's part of a fleet point.
type FioHost struct {
	// HostTelemetry names the host and holds its CPU, disks and memory
	// over the window, and every metric its node exporter gave, summarized
	// over the same seconds (series.csv in the host's directory holds them
	// second by second); System and Telemetry are nil when its exporter
	// was not read.
	HostTelemetry
	// Server is the fio server the host ran the point on (fio's --client).
	Server string `json:"server"`
	// Dir is the host's directory in the step (its job file, json+ report and logs).
	Dir    string `json:"dir"`
	Engine string `json:"engine"`
	Direct bool   `json:"direct"`
	// FirstSecond and LastSecond are the host's first and last measured
	// seconds, on the coordinating machine's clock (the host's offset taken off).
	FirstSecond time.Time `json:"first_second"`
	LastSecond  time.Time `json:"last_second"`
	// FioDirections are the host's figures over the fleet's window, from
	// its per-second logs.
	FioDirections
	// FioIOPS is what fio itself reported for the host over its own whole
	// run, for comparison with the window's figure.
	FioIOPS float64 `json:"fio_iops"`
}

// FioPlan is what a point asks of fio, and where: internal/fio plans it
// and records it as it ran.
type FioPlan struct {
	Name string `json:"name"`
	// Series groups the points of one table row or curve (e.g. "randread").
	Series string `json:"series"`
	// RW is fio's rw: randread, randwrite, read, write, randrw or rw.
	RW string `json:"rw"`
	// BS is the block size in bytes.
	BS int64 `json:"bs"`
	// ReadPct is fio's rwmixread for mixed patterns.
	ReadPct int `json:"read_pct,omitempty"`
	IODepth int `json:"iodepth"`
	Jobs    int `json:"jobs"`
	// RuntimeS is the time-based length; 0 with Loops for whole-file passes.
	RuntimeS int `json:"runtime_s"`
	RampS    int `json:"ramp_s"`
	// Loops counts whole-file passes, for points that are not time-based.
	Loops int `json:"loops,omitempty"`
	// Split gives each job its own slice of the file, so that sequential
	// jobs do not read or write the same blocks one after the other.
	Split bool `json:"split,omitempty"`
	// RateOf names the earlier point whose measured IOPS is 100 %; RatePct
	// is this point's share; RateIOPS is the resulting total limit, filled
	// in just before the point runs.
	RateOf   string  `json:"rate_of,omitempty"`
	RatePct  float64 `json:"rate_pct,omitempty"`
	RateIOPS int64   `json:"rate_iops,omitempty"`
	// SteadyState is fio's steady-state criterion: the point ends when it
	// holds over SteadyWindowS seconds, or after RuntimeS.
	SteadyState   string `json:"steady_state,omitempty"`
	SteadyWindowS int    `json:"steady_window_s,omitempty"`
	// Buffered asks for I/O through the page cache (no O_DIRECT), and
	// WriteThrough for writes that complete only once stable (O_DSYNC):
	// the caching a translated DiskSpd or SQLIO line asks for. BlockAlign
	// aligns random offsets to other than the block size.
	Buffered     bool  `json:"buffered,omitempty"`
	WriteThrough bool  `json:"write_through,omitempty"`
	BlockAlign   int64 `json:"block_align,omitempty"`
	// SteadyRampS is fio's steadystate_ramp_time: the seconds the point
	// runs before its first window is collected.
	SteadyRampS int `json:"steady_ramp_s,omitempty"`
	// Round numbers the points of a series that repeats, one round after
	// the other, until its rounds are steady (1-based; 0 for other points).
	Round int `json:"round,omitempty"`
	// Label names the target ("nvme") or "group" for a drive group.
	Label   string   `json:"label"`
	Targets []string `json:"targets"`
}

// Sequential says the point is read as MB/s rather than IOPS.
func (p FioPlan) Sequential() bool { return p.RW == "read" || p.RW == "write" || p.RW == "rw" }

// FioSeriesLogWrite is the series of the log-write points (four-corners,
// dbio quick): sequential writes, one at a time, each with O_DSYNC, as a
// database's log writer makes a commit durable.
const FioSeriesLogWrite = "log-write"

// LogWrite says the point is a log-write point: what a commit costs at
// the device, read by its latency percentiles rather than IOPS or MB/s.
func (p FioPlan) LogWrite() bool { return p.Series == FioSeriesLogWrite && p.WriteThrough }

// FioDirections are fio's figures for each data direction, wherever they
// come from (fio's report, or a window of its per-second logs): one record
// for a point, a fleet's host and fio's reporting group alike. Embedded, its
// fields sit in the enclosing record's JSON as if declared there.
type FioDirections struct {
	// Read and Write are each direction's figures, and Total those of
	// reads and writes counted together (fio's "mixed" section, from
	// unified_rw_reporting=both); a direction without I/O is nil.
	Read  *FioDirection `json:"read,omitempty"`
	Write *FioDirection `json:"write,omitempty"`
	Total *FioDirection `json:"total,omitempty"`
}

// FioDirection is one data direction's figures (reads, writes or both).
type FioDirection struct {
	IOs   int64 `json:"ios"`
	Bytes int64 `json:"bytes"`
	// BytesPerSec is fio's bw_bytes.
	BytesPerSec float64 `json:"bytes_per_sec"`
	IOPS        float64 `json:"iops"`
	RuntimeMS   int64   `json:"runtime_ms"`
	// Completion is fio's clat: from submission to the device until completion.
	Completion FioLatency `json:"completion"`
	// Submission (slat) and Total (lat = slat + clat) carry no percentiles by default.
	Submission FioLatency `json:"submission"`
	Total      FioLatency `json:"total"`
	// Bins is fio's json+ histogram of completions, value in ns → count.
	// It becomes the step's histogram files and is not part of the detail.
	Bins map[int64]int64 `json:"-"`
}

// MBPerSec is the throughput in MB/s (10^6 bytes per second), as storage is sold.
func (d *FioDirection) MBPerSec() float64 {
	if d == nil {
		return 0
	}
	return d.BytesPerSec / 1e6
}

// FioLatency is a latency summary in microseconds.
type FioLatency struct {
	N       int64   `json:"n"`
	MinUS   float64 `json:"min_us"`
	MaxUS   float64 `json:"max_us"`
	MeanUS  float64 `json:"mean_us"`
	StdevUS float64 `json:"stdev_us"`
	// Percentiles are fio's, ascending.
	Percentiles []FioPercentile `json:"percentiles,omitempty"`
}

// FioPercentile is one of fio's percentile figures.
type FioPercentile struct {
	P  float64 `json:"p"`
	US float64 `json:"us"`
}

// SplitPercentiles are the completion-latency percentiles shown for each
// direction of a point that mixes reads and writes: all of them in fio's
// default percentile list, so that every point recorded has them.
var SplitPercentiles = []float64{50, 90, 95, 99, 99.9, 99.99}

// Mixed says the point both read and wrote: its Read, Write and Total
// differ, and each is worth a row.
func (d FioDirections) Mixed() bool {
	return d.Read != nil && d.Write != nil && d.Read.IOs > 0 && d.Write.IOs > 0
}

// At returns fio's value for percentile p, and whether fio reported it.
func (l FioLatency) At(p float64) (float64, bool) {
	i := slices.IndexFunc(l.Percentiles, func(q FioPercentile) bool { return q.P == p })
	if i < 0 {
		return 0, false
	}
	return l.Percentiles[i].US, true
}

// FioRounds is the verdict after one round of a series repeated until
// steady: fio's steady-state tests applied to the rounds' IOPS (one value
// per round) over the last Window rounds.
type FioRounds struct {
	// Criteria are the tests, all of which must hold ("iops:10%",
	// "iops_slope:2.5%"), in fio's form with one value per round.
	Criteria []string `json:"criteria"`
	// Window is how many rounds are judged together; Max the most rounds run.
	Window int `json:"window_rounds"`
	Max    int `json:"max_rounds"`
	// Judged says the window was full; Steady that every test held.
	Judged bool `json:"judged"`
	Steady bool `json:"steady"`
	// Last says no round follows: steady, or Max reached.
	Last bool `json:"last"`
	// WindowIOPS are the judged rounds' IOPS, oldest first, and their mean.
	WindowIOPS     []float64 `json:"window_iops,omitempty"`
	WindowIOPSMean float64   `json:"window_iops_mean,omitempty"`
	// Figures are what each test compared with its limit (in % of the
	// mean where the limit is a percentage), in the order of Criteria;
	// null where the figure is no number (a mean of zero).
	Figures []*float64 `json:"figures,omitempty"`
}

// FioSteadyState is fio's verdict on steady-state detection for a point.
type FioSteadyState struct {
	// Criterion is the setting, e.g. "iops_slope:0.300000%".
	Criterion string `json:"criterion"`
	// WindowS is the rolling window fio judged over.
	WindowS  int  `json:"window_s"`
	Attained bool `json:"attained"`
	// Value is what fio measured against the criterion at the end, e.g. "-0.12%".
	Value string `json:"value"`
	// WindowIOPSMean and WindowMBPerSec are the means over the last window only.
	WindowIOPSMean  float64 `json:"window_iops_mean"`
	WindowMBPerSec  float64 `json:"window_mb_per_sec"`
	WindowIOPS      []int64 `json:"window_iops,omitempty"`
	WindowBytesRate []int64 `json:"window_bytes_per_sec,omitempty"`
}
