package results

// DBTimeClass is a class of database time: what the database's active
// sessions (and its own writers) were doing, as the database accounts for
// it (PostgreSQL's wait events sampled from pg_stat_activity, MariaDB's
// performance_schema waits). This is the one list of them: the engines
// name their counters by it, the sampler turns those counters into the
// per-second figures named below, analysis and the reports read them by it.
type DBTimeClass string

// The classes of database time, in the order they are shown.
const (
	// DBTimeCPU is active time with no wait: on a CPU, or waiting for one.
	DBTimeCPU DBTimeClass = "cpu"
	// DBTimeIORead is waiting for data file reads.
	DBTimeIORead DBTimeClass = "io_read"
	// DBTimeIOWrite is waiting for data file and log writes (the write
	// system call, not its durability).
	DBTimeIOWrite DBTimeClass = "io_write"
	// DBTimeIOSync is waiting for data to be durable: log and data file
	// syncs, and sessions waiting for another one's log flush (a group
	// commit), which is the same wait seen from behind.
	DBTimeIOSync DBTimeClass = "io_sync"
	// DBTimeLock is waiting for row, table or internal locks held by other
	// sessions.
	DBTimeLock DBTimeClass = "lock"
	// DBTimeOther is every other wait (inter-process signalling, the
	// client inside a statement, timeouts, extensions).
	DBTimeOther DBTimeClass = "other"
)

// DBTimeClasses are the classes, in the order they are shown.
func DBTimeClasses() []DBTimeClass {
	return []DBTimeClass{DBTimeCPU, DBTimeIORead, DBTimeIOWrite, DBTimeIOSync, DBTimeLock, DBTimeOther}
}

// IO says whether the class is a wait for storage.
func (c DBTimeClass) IO() bool {
	return c == DBTimeIORead || c == DBTimeIOWrite || c == DBTimeIOSync
}

// Counter is the name of the engine's cumulative counter of the class:
// active-session seconds spent in it since the engine's account began
// (dbtime_<class>_s). An engine's StatsSource reports it beside its other
// counters; the sampler turns it into Sessions and Share.
func (c DBTimeClass) Counter() string { return "dbtime_" + string(c) + "_s" }

// Sessions is the per-second figure of the class: the mean number of
// sessions in it over the second (db_aas_<class>, "average active
// sessions": one session busy the whole second is 1).
func (c DBTimeClass) Sessions() string { return "db_aas_" + string(c) }

// Share is the per-second figure of the class's share of database time,
// in % (db_time_<class>_pct); the classes of a second add up to 100.
// Absent in a second without database time.
func (c DBTimeClass) Share() string { return "db_time_" + string(c) + "_pct" }

// MetricDBActiveSessions is the mean number of active sessions over a
// second, all classes together: database time per second of wall time.
const MetricDBActiveSessions = "db_aas"

// The kernel's account of block-I/O waits (delay accounting), for every
// engine: the time a group's threads spent waiting for the block layer,
// summed over its threads, in % of one thread's wall time (100 is one
// thread waiting the whole second). It does not tell reads from writes or
// syncs. The server's group is the server's processes and threads; dbio's
// includes SQLite, which runs inside it.
const (
	MetricServerBlkioWait = "proc_server_blkio_wait_pct"
	MetricDBIOBlkioWait   = "proc_dbio_blkio_wait_pct"
)

// MetricOtherCPU is the machine's CPU used by processes that are neither
// dbio nor the database server, in % of all CPUs: what the CPU's busy time
// leaves once dbio's and the server's are taken out.
const MetricOtherCPU = "cpu_other_pct"

// IOCapKind is one of a block-I/O limit's caps (--limit, a storage class):
// I/Os or bytes per second, per direction.
type IOCapKind string

// The caps a block-I/O limit can set.
const (
	IOCapReadIOPS  IOCapKind = "r_iops"
	IOCapWriteIOPS IOCapKind = "w_iops"
	IOCapReadBPS   IOCapKind = "r_bps"
	IOCapWriteBPS  IOCapKind = "w_bps"
)

// IOCapKinds are the caps, in the order they are shown.
func IOCapKinds() []IOCapKind {
	return []IOCapKind{IOCapReadIOPS, IOCapWriteIOPS, IOCapReadBPS, IOCapWriteBPS}
}

// Served is the per-second figure of what the limited group was served of
// the cap's kind, on its busiest limited device: I/Os per second, or MB per
// second (10^6 bytes) for the byte caps (iocap_<kind>_served).
func (k IOCapKind) Served() string { return "iocap_" + string(k) + "_served" }

// Used is the per-second figure of the cap's use: what was served over the
// cap, in %, on the device closest to its cap (iocap_<kind>_used_pct).
func (k IOCapKind) Used() string { return "iocap_" + string(k) + "_used_pct" }

// AtCap is the per-second figure that is 100 in a second when the group
// was served at least IOCapBindingPct of the cap (for an I/O-count cap,
// within one I/O of it), else 0: its step mean is the share of seconds the
// cap bound (iocap_<kind>_at_cap_pct).
func (k IOCapKind) AtCap() string { return "iocap_" + string(k) + "_at_cap_pct" }

// IOCapBindingPct is the use of a cap from which a second counts as bound
// by it: throttling smooths the I/Os over the second, so a group held back
// by its cap is served just under it.
const IOCapBindingPct = 90
