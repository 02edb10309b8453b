package tpcc

import (
	"context"
	"fmt"

	"dbio/internal/engine"
	"dbio/internal/workload/sqlclient"
)

// sqliteBackend runs TPC-C as client-side SQL. Its writers serialize write
// transactions per SQLite database file: SQLite admits one writer at a time,
// and an in-process queue hands the lock over at once where SQLite's busy
// handler would sleep and retry.
type sqliteBackend struct{ writers *sqlclient.Writers }

// sqliteQueues are the writer queues of the SQLite databases a Workload
// writes to, shared by its sessions.
type sqliteQueues struct{ writers sqlclient.Writers }

// sqliteTypes are SQLite's type affinities: it keeps no lengths or precisions.
var sqliteTypes = columnTypes{integer: "INTEGER", timestamp: "TIMESTAMP", decimal: "NUMERIC",
	text: func(string) string { return "TEXT" }}

func (sqliteBackend) createSchema(ctx context.Context, inst engine.Instance) error {
	return recreate(execOn(ctx, inst.DB()), append([]string{metaTable}, Tables...),
		func(t table) string { return t.createSQL(sqliteTypes, " WITHOUT ROWID") })
}

func (b sqliteBackend) newSink(ctx context.Context, inst engine.Instance) (rowSink, error) {
	d, err := sqlclient.For("tpcc", inst, b.writers)
	if err != nil {
		return nil, err
	}
	return newInsertSink(ctx, inst.DB(), d, 100)
}

func (sqliteBackend) finishLoad(ctx context.Context, inst engine.Instance) error {
	db := inst.DB()
	for _, ix := range secondaryIndexes {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", ix.name, ix.table, ix.cols)); err != nil {
			return fmt.Errorf("index %s: %w", ix.name, err)
		}
	}
	_, err := db.ExecContext(ctx, "ANALYZE")
	return err
}

// loadWorkers is one: SQLite has a single writer, so parallel loaders would only queue.
func (sqliteBackend) loadWorkers() int { return 1 }

func (sqliteBackend) newExecutor(ctx context.Context, inst engine.Instance, d *sqlclient.Dialect) (executor, error) {
	return newSQLExecutor(ctx, inst.DB(), d)
}

// sharesProcs: SQLite's sessions keep a P each: they wait in cgo calls,
// which hold their P as a blocking system call does.
func (sqliteBackend) sharesProcs() bool { return false }

func (sqliteBackend) notes() []string {
	return []string{
		"SQLite writers serialized: write transactions (New-Order, Payment, Delivery) queue on one in-process lock per database and start with BEGIN IMMEDIATE; read-only transactions (Order-Status, Stock-Level) run concurrently on WAL snapshots. Latency includes the wait for the write lock.",
		"SQLite has no SELECT ... FOR UPDATE; the write lock taken at BEGIN IMMEDIATE isolates writers instead.",
	}
}
