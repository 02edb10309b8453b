package results

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// FigureName names a figure of a step (summary.json) or of a run
// (run.json). The names below are the ones more than one package writes or
// reads; every lookup of a figure goes through them.
type FigureName string

// Figures of a transaction step, written by the workloads and the runner.
const (
	// FigureTPM is committed transactions of every type per minute (TPC-C).
	FigureTPM FigureName = "tpm"
	// FigureNOPM is committed New-Order transactions per minute (TPC-C).
	FigureNOPM FigureName = "nopm"
	// FigureTPS is committed transactions per second, every workload.
	FigureTPS FigureName = "tps"
	// FigureQPS is queries per second (sysbench).
	FigureQPS FigureName = "qps"
	// FigureLatencyP99 is the 99th percentile of every transaction, in ms.
	FigureLatencyP99 FigureName = "latency_p99"
	// The interactive work of a workload that separates it from background
	// batch jobs (AS3AP): throughput and response times in ms.
	FigureInteractiveTPS         FigureName = "interactive_tps"
	FigureInteractiveLatencyMean FigureName = "interactive_latency_mean"
	FigureInteractiveLatencyP95  FigureName = "interactive_latency_p95"
	FigureInteractiveLatencyP99  FigureName = "interactive_latency_p99"
)

// PerUser names the figure that is name divided by the step's virtual
// users ("tpm" → "tpm_per_user").
func PerUser(name FigureName) FigureName { return name + "_per_user" }

// FigureTPMPerUser is TPM divided by the step's users (PerUser(FigureTPM)):
// what each added user gets.
const FigureTPMPerUser FigureName = "tpm_per_user"

// Figures of a fio point, read from fio's own report.
const (
	FigureIOPS           FigureName = "iops"
	FigureReadIOPS       FigureName = "read_iops"
	FigureWriteIOPS      FigureName = "write_iops"
	FigureMBPerSec       FigureName = "mb_s"
	FigureLatMeanUS      FigureName = "lat_mean_us"
	FigureLatP50US       FigureName = "lat_p50_us"
	FigureLatP95US       FigureName = "lat_p95_us"
	FigureLatP99US       FigureName = "lat_p99_us"
	FigureLatP999US      FigureName = "lat_p99_9_us"
	FigureLatMaxUS       FigureName = "lat_max_us"
	FigureFioUsrCPU      FigureName = "fio_usr_cpu_pct"
	FigureFioSysCPU      FigureName = "fio_sys_cpu_pct"
	FigureRateTargetIOPS FigureName = "rate_target_iops"
	// FigureIOPSStdev is the standard deviation of the point's per-second
	// IOPS, from fio's per-second logs.
	FigureIOPSStdev      FigureName = "iops_stdev"
	FigureSteadyAttained FigureName = "steady_attained"
	FigureSteadyElapsedS FigureName = "steady_elapsed_s"
	FigureSteadyWindow   FigureName = "steady_window_iops"
)

// Figures of a run that stepped its users up to a response-time ceiling.
const (
	FigureMaxUsersUnderCeiling FigureName = "max_users_under_ceiling"
	FigureCeiling              FigureName = "ceiling"
	FigureCeilingReached       FigureName = "ceiling_reached"
)

// AtMaxUsers names a ceiling figure's value at the largest load kept under it.
func AtMaxUsers(name FigureName) FigureName { return name + "_at_max_users" }

// Round6 keeps six significant digits: the precision dbio stores the
// figures it derives at, so that the stored JSON shows 37.8333 rather than
// 37.833333333333336.
func Round6(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// LatencyStat names a latency statistic of a fio point: "mean" (fio's mean
// completion latency) or a percentile such as "p99".
type LatencyStat string

// The latency statistics dbio reads from fio's report.
const (
	StatMean LatencyStat = "mean"
	StatP50  LatencyStat = "p50"
	StatP95  LatencyStat = "p95"
	StatP99  LatencyStat = "p99"
	StatP999 LatencyStat = "p99.9"
)

// DefaultLatencyMax is the latency bound of a fio run that named none: the
// line past which the SQLIO study called a disk subsystem too slow for a
// database, 20 ms of mean completion latency.
const DefaultLatencyMax = 20 * time.Millisecond

// Percentile returns the percentile a statistic names, 0 for the mean ("" is the mean).
func (s LatencyStat) Percentile() (float64, error) {
	switch s {
	case "", StatMean:
		return 0, nil
	case StatP50, StatP95, StatP99, StatP999:
		return strconv.ParseFloat(string(s[1:]), 64)
	}
	return 0, fmt.Errorf("%q: use mean, p50, p95, p99 or p99.9", string(s))
}

// Ceiling is a stepping run's response-time ceiling: users are added step
// by step until a step's Figure passes Max. A workload that steps to a
// ceiling says which figure and how high; analysis.Ceiling stops the steps
// and draws the run's figures from it.
type Ceiling struct {
	// Figure names the step figure compared, e.g. "interactive_latency_mean".
	Figure FigureName
	Max    float64
	// Unit is the figure's unit, for messages and run.json.
	Unit string
	// Stat names the figure's statistic in words ("mean", "p95").
	Stat string
}
