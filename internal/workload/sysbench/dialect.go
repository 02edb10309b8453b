package sysbench

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"dbio/internal/engine"
	"dbio/internal/workload"
	"dbio/internal/workload/txerr"
)

// dialect is how sysbench's statements reach one engine. The statements are
// the same everywhere; the table definition, placeholders, how transactions
// begin and which errors are worth retrying differ.
type dialect struct {
	// columns is the body of CREATE TABLE sbtest<N> (...), after which
	// tableSuffix follows the closing parenthesis.
	columns, tableSuffix string
	// placeholder writes the n-th (1-based) parameter; nil means "?".
	placeholder func(n int) string
	// beginRead and beginWrite start a transaction that only reads, or that
	// writes (SQLite takes its write lock at once with BEGIN IMMEDIATE).
	beginRead, beginWrite string
	// writeLock queues writers inside dbio where the engine admits one
	// writer at a time (SQLite); nil elsewhere.
	writeLock *sync.Mutex
	// analyze refreshes the optimizer's statistics of a table after loading.
	analyze func(table string) string
	// afterLoad is anything else a loaded table needs (a sequence moved past
	// the ids loaded explicitly); nil when nothing.
	afterLoad func(ctx context.Context, conn *sql.Conn, table string, rows int) error
	// loadWorkers is how many tables load at once by default.
	loadWorkers int
	// classify says what an error means for the session.
	classify txerr.Classifier
	// tooManyPrepared reports the engine refusing another prepared
	// statement; the session then sends that statement unprepared.
	tooManyPrepared func(error) bool
	// notes explain engine-specific choices, for the results.
	notes []string
}

var dialects = workload.NewPerEngine[func(engine.Instance) *dialect]("sysbench")

// registerDialect makes a dialect available for instances whose Info().Engine is name.
func registerDialect(name string, d func(engine.Instance) *dialect) { dialects.Register(name, d) }

func dialectFor(inst engine.Instance) (*dialect, error) {
	d, err := dialects.For(inst)
	if err != nil {
		return nil, err
	}
	return d(inst), nil
}

// bind writes a statement with the dialect's placeholders for its "?" marks.
func (d *dialect) bind(query string) string { return workload.Rebind(query, d.placeholder) }

func (d *dialect) createTable(table string) string {
	return "CREATE TABLE " + table + " (" + d.columns + ")" + d.tableSuffix
}

func tableName(n int) string { return fmt.Sprintf("sbtest%d", n) }
