package analysis

import (
	"math"

	"dbio/internal/results"
)

// DBWaitKind is one kind of I/O a database engine times itself: what it
// waited for, as the database saw it, before and beyond what the device
// reports.
type DBWaitKind struct {
	// Key is the kind in the recorded names: "sync" for db_sync_await_ms,
	// engine_db_sync_ops_per_s and engine_db_sync_wait_ms_per_s.
	Key string
	// Title names it for a reader: "log sync".
	Title string
	// What says what the engines time under it.
	What string
}

// dbWaitTitles name each kind of results.DBWaitKinds for a reader and
// say what the engines time under it.
var dbWaitTitles = map[results.DBWaitKind][2]string{
	results.DBWaitRead:     {"read", "data file reads (pages not in the engine's cache)"},
	results.DBWaitWrite:    {"write", "data file writes (InnoDB: the time to submit its asynchronous writes, not their completion)"},
	results.DBWaitLogWrite: {"log write", "WAL / redo log writes"},
	results.DBWaitSync:     {"log sync", "WAL / redo log syncs, what a commit waits for"},
	results.DBWaitDataSync: {"data sync", "data file syncs (InnoDB: with the few other file operations performance_schema counts with them)"},
}

// DBWaitKinds are the kinds of database-seen I/O waits (results.DBWaitKinds),
// in the order they are shown, with their titles.
func DBWaitKinds() []DBWaitKind {
	var out []DBWaitKind
	for _, k := range results.DBWaitKinds() {
		t := dbWaitTitles[k]
		out = append(out, DBWaitKind{Key: string(k), Title: t[0], What: t[1]})
	}
	return out
}

// DBWait is a step's mean wait per operation of a kind, in ms, as the
// database measured it: the step's total wait over its operations (the
// ratio of the two counters' per-second means), or, for a step that kept
// only the per-second means, their mean. NaN when the engine did not time
// that kind or the step had no such operation.
func DBWait(s results.Step, kind string) float64 {
	k := results.DBWaitKind(kind)
	opsRate, waitRate := k.Rates()
	ops := s.Telemetry.Mean(opsRate)
	wait := s.Telemetry.Mean(waitRate)
	if ops > 0 && !math.IsNaN(wait) {
		return wait / ops
	}
	return s.Telemetry.Mean(k.Await())
}

// DBWaitRecorded says which kinds any of the steps has a figure for.
func DBWaitRecorded(steps []results.Step) []DBWaitKind {
	var out []DBWaitKind
	for _, k := range DBWaitKinds() {
		for _, s := range steps {
			if !math.IsNaN(DBWait(s, k.Key)) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// dbWaitMetrics compare runs by the database-seen waits: ids db-read-wait,
// db-write-wait, db-log-write-wait, db-sync-wait, db-data-sync-wait.
func dbWaitMetrics() []Metric {
	var out []Metric
	for _, k := range DBWaitKinds() {
		out = append(out, Metric{ID: DBWaitMetricID(k.Key), Title: "database-seen " + k.Title + " latency", Unit: "ms per operation",
			Better: results.LowerBetter, Floor: diskLatencyFloorMS, Value: func(s results.Step) float64 { return DBWait(s, k.Key) }})
	}
	return out
}

// DBWaitMetricID is the id of the compared metric of a kind ("sync" →
// "db-sync-wait"), for expectations that name it.
func DBWaitMetricID(kind string) string {
	id := "db-"
	for _, r := range kind {
		if r == '_' {
			r = '-'
		}
		id += string(r)
	}
	return id + "-wait"
}
