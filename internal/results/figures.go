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
	// FigureEngineTPM is the transactions the server itself counted as
	// committed or rolled back, per minute of the step: HammerDB's TPM,
	// beside dbio's own (FigureTPM). A server engine's step only.
	FigureEngineTPM FigureName = "engine_tpm"
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

// Figures of sysbench's steps beside QPS: its mean and 95th percentile
// (sysbench's default) and what failed, per second.
const (
	FigureLatencyMean      FigureName = "latency_mean"
	FigureLatencyP95       FigureName = "latency_p95"
	FigureErrorsPerSec     FigureName = "errors_per_s"
	FigureReconnectsPerSec FigureName = "reconnects_per_s"
)

// Figures of AS3AP's background batch jobs, apart from its interactive work.
const (
	FigureBatchTPS         FigureName = "batch_tps"
	FigureBatchRowsPerSec  FigureName = "batch_rows_per_s"
	FigureBatchLatencyMean FigureName = "batch_latency_mean"
)

// Per-second figures of every workload's series beside its own: the
// transactions that failed in the second and the latency over every type.
const (
	FigureSecondErrors     FigureName = "errors"
	FigureSecondLatencyP50 FigureName = "latency_p50_ms"
	FigureSecondLatencyP99 FigureName = "latency_p99_ms"
)

// Figures of a backup or restore step (a copy of the database's files),
// and the per-second series of the copy.
const (
	FigureCopySeconds     FigureName = "seconds"
	FigureCopyMB          FigureName = "mb"
	FigureCopyMBPerSec    FigureName = "mb_per_s"
	FigureBackupMBPerSec  FigureName = "backup_mb_per_s"
	FigureRestoreMBPerSec FigureName = "restore_mb_per_s"
	FigureBackupActive    FigureName = "backup_active"
)

// Figures of a noisy-neighbour phase: its tenants together, each working
// tenant against its quiet baseline, and each backup a tenant took in it
// (BackupSeconds).
const (
	FigureTenants      FigureName = "tenants"
	FigureTPMTotal     FigureName = "tpm_total"
	FigureNOPMTotal    FigureName = "nopm_total"
	FigureTPMPerTenant FigureName = "tpm_per_tenant"
	FigureTPMVsQuiet   FigureName = "tpm_vs_quiet"
)

// BackupSeconds names the figure of a noisy phase that is how long the
// backup cycle of a tenant took ("backup_t3_1_s").
func BackupSeconds(tenant string, cycle int) FigureName {
	return FigureName(fmt.Sprintf("backup_%s_%d_s", tenant, cycle))
}

// DeviceLatency names the figure of a device's latency over a scenario's
// step: its mean, or the spread's figure the scenario reads ("p99",
// "peak"), in ms ("nvme0n1_latency_p99").
func DeviceLatency(device, stat string) FigureName {
	return FigureName(device + "_latency_" + stat)
}

// Figures of a capture's or a replay's step, by direction (latencies in
// µs): the source's and the candidates' figures compared side by side. A
// capture's or replay's seconds (series.csv) hold read_iops, write_iops,
// syncs_per_s and the per-second p99s.
const (
	FigureSyncsPerSec FigureName = "syncs_per_s"
	FigureReadP50US   FigureName = "read_p50_us"
	FigureReadP99US   FigureName = "read_p99_us"
	FigureReadP999US  FigureName = "read_p99_9_us"
	FigureWriteP50US  FigureName = "write_p50_us"
	FigureWriteP99US  FigureName = "write_p99_us"
	FigureWriteP999US FigureName = "write_p99_9_us"
	FigureSyncP50US   FigureName = "sync_p50_us"
	FigureSyncP99US   FigureName = "sync_p99_us"
	FigureRequestsS   FigureName = "requests_s"
	FigureBehindS     FigureName = "behind_s"
	// FigureKeptUp is 1 when a replay at the recorded pace kept up with
	// it (BlockIO.KeptUp), 0 when it fell behind: a finding can say a
	// capture keeps up on one class and falls behind on another.
	FigureKeptUp       FigureName = "kept_up"
	FigurePaceOfSource FigureName = "pace_of_source"
)

// FigureBandwidth is fio's name for a point's bytes per second in a
// steady-state criterion (its ss=bw); dbio records the point's bandwidth
// as FigureMBPerSec.
const FigureBandwidth FigureName = "bw"

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
