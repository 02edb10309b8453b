package sysbench

import (
	"sync"

	"dbio/internal/engine"
	"dbio/internal/workload/txerr"
)

func init() { registerDialect("sqlite", newSQLiteDialect) }

// sqliteWriters holds one writer queue per SQLite database: SQLite admits one
// writer at a time, and a queue in dbio hands the lock over at once where
// SQLite's busy handler would sleep and retry.
var sqliteWriters sync.Map // DSN -> *sync.Mutex

func newSQLiteDialect(inst engine.Instance) *dialect {
	lock, _ := sqliteWriters.LoadOrStore(inst.DSN(), &sync.Mutex{})
	return &dialect{
		// INTEGER PRIMARY KEY is SQLite's rowid: ids are assigned automatically.
		columns:     "id INTEGER NOT NULL PRIMARY KEY, k INTEGER DEFAULT 0 NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL",
		beginRead:   "BEGIN",
		beginWrite:  "BEGIN IMMEDIATE",
		writeLock:   lock.(*sync.Mutex),
		analyze:     func(table string) string { return "ANALYZE " + table },
		loadWorkers: 1, // one writer: parallel loaders would only queue
		classify:    txerr.For(inst),
		notes: []string{
			"SQLite writers serialized: transactions that write start with BEGIN IMMEDIATE after queueing on one in-process lock per database; read-only ones run concurrently on WAL snapshots. Latency includes the wait for the write lock.",
			"sysbench has no SQLite driver: the sbtest tables use SQLite's types (id is the rowid).",
		},
	}
}
