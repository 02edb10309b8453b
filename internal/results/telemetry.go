package results

import (
	"math"
	"strings"
)

// DBWaitKind is a kind of I/O a database engine times itself, as the
// database saw it (PostgreSQL's track_io_timing and track_wal_io_timing,
// MariaDB's performance_schema file waits), named as the recorded names
// spell it: "sync" in db_sync_await_ms. This is the one list of them: the
// engines name their counters by it, analysis reads the recorded figures
// by it.
type DBWaitKind string

// The kinds of database-seen I/O waits.
const (
	// DBWaitRead is reads of data files.
	DBWaitRead DBWaitKind = "read"
	// DBWaitWrite is writes of data files.
	DBWaitWrite DBWaitKind = "write"
	// DBWaitLogWrite is writes of the WAL / redo log.
	DBWaitLogWrite DBWaitKind = "log_write"
	// DBWaitSync is syncs of the WAL / redo log: what a commit waits for.
	DBWaitSync DBWaitKind = "sync"
	// DBWaitDataSync is syncs of data files, when written pages are made
	// durable (a checkpoint, InnoDB's page flushing).
	DBWaitDataSync DBWaitKind = "data_sync"
)

// DBWaitKinds are the kinds, in the order they are shown.
func DBWaitKinds() []DBWaitKind {
	return []DBWaitKind{DBWaitRead, DBWaitWrite, DBWaitLogWrite, DBWaitSync, DBWaitDataSync}
}

// Counters are the names of the engine's cumulative counters of the kind:
// how many operations there were (db_<kind>_ops) and the milliseconds
// spent waiting for them (db_<kind>_wait_ms). The sampler turns each pair
// into the second's mean wait per operation (Await) and records both as
// rates (Rates).
func (k DBWaitKind) Counters() (ops, waitMs string) {
	return "db_" + string(k) + "_ops", "db_" + string(k) + "_wait_ms"
}

// Await is the per-second metric of the kind: the second's mean wait per
// operation in ms, absent in a second without such operations.
func (k DBWaitKind) Await() string { return "db_" + string(k) + "_await_ms" }

// Rates are the per-second metrics of the kind's counters, whose step
// means give the step's mean wait.
func (k DBWaitKind) Rates() (opsPerS, waitMsPerS string) {
	ops, wait := k.Counters()
	return "engine_" + ops + "_per_s", "engine_" + wait + "_per_s"
}

// The server's memory cgroup (--server-memory): levels in MB (10^6 bytes)
// at each second, and the rates of the counters that show its cap binding.
const (
	MetricMemcgLimit       = "memcg_limit_mb"
	MetricMemcgUsage       = "memcg_usage_mb"
	MetricMemcgCache       = "memcg_cache_mb"
	MetricMemcgAnon        = "memcg_anon_mb"
	MetricMemcgLimitHits   = "memcg_limit_hits_per_s"
	MetricMemcgRefaults    = "memcg_refaults_per_s"
	MetricMemcgMajorFaults = "memcg_major_faults_per_s"
	MetricMemcgOOMKills    = "memcg_oom_kills_per_s"
	MetricMemcgPressure    = "memcg_pressure_some_pct"
)

// TelemetrySummary is the telemetry of one step, as the sampler recorded
// it: every metric summarized over the step's per-second samples, then the
// bottleneck verdict and the CPU and memory of the load generator and the
// server, drawn from those metrics.
type TelemetrySummary struct {
	// Samples is the number of per-second samples in the step.
	Samples int `json:"samples"`
	// CPUs is the number of online CPUs, the "100 %" of the cpu_* and proc_* metrics.
	CPUs int `json:"cpus"`
	// Devices are the watched block devices as they appear in metric names
	// (disk_<device>_…).
	Devices []string `json:"devices,omitempty"`
	// InProcessEngine says the engine ran inside dbio (SQLite), so dbio's
	// CPU (proc_dbio_*) includes the engine's.
	InProcessEngine bool `json:"in_process_engine,omitempty"`
	// ServerUnknown says the engine is a server dbio could not see (the
	// user's, on another host or not found on this one): its CPU and
	// memory are unknown, not zero, and the CPU of other processes is not
	// told apart from it.
	ServerUnknown bool `json:"server_unknown,omitempty"`
	// Metrics are keyed by metric name (see the telemetry package).
	Metrics map[string]TelemetryStat `json:"metrics"`
	Verdict Verdict                  `json:"verdict"`
	// Driver is dbio itself: the load generator (and the engine, for SQLite).
	Driver *Share `json:"driver,omitempty"`
	// Server is the database server's processes, when the engine is a server.
	Server *Share `json:"server,omitempty"`
	// CPU is whose the CPUs were: the server's, dbio's, other processes',
	// idle, iowait and steal; nil where other processes' CPU was not
	// sampled (a run recorded before it was, a host read through its node
	// exporter).
	CPU *CPUSplit `json:"cpu_split,omitempty"`
	// Warnings say which sources could not be read, and how often.
	Warnings []string `json:"warnings,omitempty"`
	// Hosts are the machines dbio does not run on that were read through
	// their node exporters over the same seconds (the database host of a
	// server driven from here by its DSN); the metrics above are this
	// machine's.
	Hosts []HostTelemetry `json:"hosts,omitempty"`
}

// HostTelemetry is one host's part of a step's telemetry, read from its
// node exporter: its CPU, disks and memory (nil without a sample) and every
// metric summarized, under the names this machine's have.
type HostTelemetry struct {
	Host      string            `json:"host"`
	System    *HostSystem       `json:"system,omitempty"`
	Telemetry *TelemetrySummary `json:"telemetry,omitempty"`
}

// TelemetryStat summarizes one metric over the per-second samples of a step.
type TelemetryStat struct {
	Mean float64 `json:"mean"`
	// P99 is the 99th percentile of the per-second values (nearest rank).
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
	// Samples is how many seconds had a value: await metrics skip seconds
	// without I/O.
	Samples int `json:"samples"`
}

// Share is the CPU and memory one group of processes used during a step.
type Share struct {
	// CPUPct is the mean share of the whole machine's CPU, in %.
	CPUPct float64 `json:"cpu_pct"`
	// Cores is the same share in CPUs' worth of time.
	Cores float64 `json:"cores"`
	// RSSMB is the largest resident memory seen, in MB (10^6 bytes).
	RSSMB float64 `json:"rss_mb"`
	// Text says it in a sentence: "the load generator used 6 % of the CPU …".
	Text string `json:"text"`
}

// VerdictKind names what limited a step.
type VerdictKind string

// Verdict kinds drawn from the database's own account of its time (or,
// for SQLite, from the kernel's account of its threads' block-I/O waits).
const (
	VerdictStorageSync  VerdictKind = "storage_sync"  // sessions mostly waited for syncs (log or data files)
	VerdictStorageRead  VerdictKind = "storage_read"  // … for data file reads
	VerdictStorageWrite VerdictKind = "storage_write" // … for writes (log or data files)
	VerdictStorage      VerdictKind = "storage"       // … for the block layer, the kind of I/O not told
	VerdictCPUServer    VerdictKind = "cpu_server"    // the CPUs are saturated, mostly by the database server
	VerdictCPUDBIO      VerdictKind = "cpu_dbio"      // … mostly by dbio (the load generator, or SQLite inside it)
	VerdictCPUOther     VerdictKind = "cpu_other"     // … mostly by other processes: the step measured its neighbours
	VerdictLock         VerdictKind = "lock"          // sessions mostly waited for locks
	VerdictMemory       VerdictKind = "memory"        // sessions waited for reads a memory cap made them do again
	VerdictClient       VerdictKind = "client"        // sessions spent most of their time outside the database
	VerdictNotSaturated VerdictKind = "not_saturated" // nothing above: more sessions would get more done
)

// Verdict kinds drawn from the OS's figures alone (CPU states, pressure,
// devices): every run recorded before the database's account, and every
// step without one.
const (
	VerdictIO       VerdictKind = "io"       // storage is the bottleneck
	VerdictCPU      VerdictKind = "cpu"      // the CPUs are saturated with work
	VerdictSteal    VerdictKind = "steal"    // the CPUs are saturated because the hypervisor takes them
	VerdictBalanced VerdictKind = "balanced" // CPU and storage are both close to their limits
	VerdictNone     VerdictKind = "none"     // neither is: the limit is elsewhere
	VerdictUnknown  VerdictKind = "unknown"  // nothing was sampled
)

// Verdict names what limited a step, with the figures that say so.
type Verdict struct {
	Kind VerdictKind `json:"kind"`
	// Text is the verdict for a reader, its head then the figures that
	// prove it: "storage-bound on log syncs: 61 % of database time waited
	// on log syncs; writes at the 3,000 IOPS cap in 88 % of seconds".
	Text string `json:"text"`
	// Evidence holds the figures the verdict used, keyed by metric name;
	// step means, or p99 where the key ends in _p99.
	Evidence map[string]float64 `json:"evidence,omitempty"`
}

// Head is the verdict's first clause: "storage-bound on log syncs", "I/O bound".
func (v Verdict) Head() string {
	head, _, _ := strings.Cut(v.Text, ":")
	return head
}

// stat is a sampled metric, false when the step has no value of it.
func (t *TelemetrySummary) stat(name string) (TelemetryStat, bool) {
	if t == nil {
		return TelemetryStat{}, false
	}
	s, ok := t.Metrics[name]
	if !ok || s.Samples == 0 {
		return TelemetryStat{}, false
	}
	return s, true
}

// Mean is the step mean of a metric, NaN when it was not sampled (or t is nil).
func (t *TelemetrySummary) Mean(name string) float64 {
	if s, ok := t.stat(name); ok {
		return s.Mean
	}
	return math.NaN()
}

// P99 is the 99th percentile of a metric's per-second values, NaN when absent.
func (t *TelemetrySummary) P99(name string) float64 {
	if s, ok := t.stat(name); ok {
		return s.P99
	}
	return math.NaN()
}

// Max is the largest per-second value of a metric, NaN when absent.
func (t *TelemetrySummary) Max(name string) float64 {
	if s, ok := t.stat(name); ok {
		return s.Max
	}
	return math.NaN()
}
