package tpcc

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"dbio/internal/engine"
)

func init() { registerBackend("sqlite", func() backend { return sqliteBackend{} }) }

// sqliteWriters serializes TPC-C write transactions per SQLite database file:
// SQLite admits one writer at a time, and an in-process queue hands the lock
// over at once where SQLite's busy handler would sleep and retry.
var sqliteWriters sync.Map // DSN -> *sync.Mutex

type sqliteBackend struct{}

func sqliteTypes(generic string) string {
	switch {
	case generic == "int":
		return "INTEGER"
	case generic == "ts":
		return "TIMESTAMP"
	case strings.HasPrefix(generic, "dec"):
		return "NUMERIC"
	default:
		return "TEXT"
	}
}

func (sqliteBackend) createSchema(ctx context.Context, inst engine.Instance) error {
	db := inst.DB()
	for _, t := range append([]string{metaTable}, Tables...) {
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return err
		}
	}
	for _, t := range schema {
		if _, err := db.ExecContext(ctx, t.createSQL(sqliteTypes, " WITHOUT ROWID")); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	return nil
}

func (sqliteBackend) newSink(ctx context.Context, inst engine.Instance) (rowSink, error) {
	return newInsertSink(ctx, inst.DB(), nil, "BEGIN IMMEDIATE", 100)
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

func (sqliteBackend) newExecutor(ctx context.Context, inst engine.Instance) (executor, error) {
	lock, _ := sqliteWriters.LoadOrStore(inst.DSN(), &sync.Mutex{})
	return newSQLExecutor(ctx, inst.DB(), sqlDialect{
		beginWrite: "BEGIN IMMEDIATE",
		beginRead:  "BEGIN",
		writeLock:  lock.(*sync.Mutex),
	})
}

func (sqliteBackend) notes() []string {
	return []string{
		"SQLite writers serialized: write transactions (New-Order, Payment, Delivery) queue on one in-process lock per database and start with BEGIN IMMEDIATE; read-only transactions (Order-Status, Stock-Level) run concurrently on WAL snapshots. Latency includes the wait for the write lock.",
		"SQLite has no SELECT ... FOR UPDATE; the write lock taken at BEGIN IMMEDIATE isolates writers instead.",
	}
}
