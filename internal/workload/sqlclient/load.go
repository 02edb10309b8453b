package sqlclient

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"dbio/internal/progress"
	"dbio/internal/units"
)

// Table is one table a workload creates and fills.
type Table struct {
	Name string
	// Create is its DDL (see Dialect.CreateTable).
	Create string
	// Columns are the columns each row fills, in the order Row appends them.
	Columns []string
	// Rows is how many rows it gets.
	Rows int
	// Row appends the values of row i (1..Rows) to args and returns it.
	Row func(args []any, i int) []any
	// Indexes are built after the rows are in.
	Indexes []Index
	// AfterLoad is anything else the loaded table needs before its
	// statistics are refreshed (a sequence moved past the ids loaded
	// explicitly); nil when nothing.
	AfterLoad func(ctx context.Context, conn *sql.Conn) error
	// BatchRows is how many rows one INSERT sends, TxRows how many one
	// transaction commits.
	BatchRows, TxRows int
}

// Index is a secondary index on one column.
type Index struct{ Name, Column string }

// DropTables drops the named tables where they exist.
func DropTables(ctx context.Context, db *sql.DB, names ...string) error {
	for _, t := range names {
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return fmt.Errorf("drop %s: %w", t, err)
		}
	}
	return nil
}

// LoadTables loads tables, at most workers at once (0: the dialect's
// choice), each on a connection of its own. A meter says how many of all
// the tables' rows are in, at what rate and how long is left: redrawn on
// a terminal, a line every tenth of the rows in a log (a line per table
// would be hundreds at sysbench's larger counts, and silent within a big
// one); then one line says the whole load. name names the load: "loading
// sysbench".
func (d *Dialect) LoadTables(ctx context.Context, db *sql.DB, name string, tables []Table, workers int, start time.Time, log io.Writer) error {
	if workers == 0 {
		workers = d.LoadWorkers
	}
	var total int64
	for _, t := range tables {
		total += int64(t.Rows)
	}
	var rows atomic.Int64
	meter := progress.StartMeter(log, "loading "+name, float64(total), "rows", "rows", start)
	committed := func(n int) {
		done := float64(rows.Add(int64(n)))
		meter.Update(done, done, time.Now())
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, min(workers, len(tables))))
	for _, t := range tables {
		g.Go(func() error {
			if err := d.loadTable(gctx, db, t, committed); err != nil {
				return fmt.Errorf("load %s: %w", t.Name, err)
			}
			return nil
		})
	}
	err := g.Wait()
	meter.Finish()
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Fprintf(log, "loaded %s: %s rows in %.1f s (%s rows/s)\n", count(len(tables), "table"), units.GroupThousands(total),
		took.Seconds(), units.GroupThousands(int64(float64(total)/max(took.Seconds(), 0.001))))
	return nil
}

// count is n with its noun, plural when n is not one: "1 table", "8 tables".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// loadTable creates and fills t on a connection of its own, then builds its
// indexes and refreshes its statistics.
func (d *Dialect) loadTable(ctx context.Context, db *sql.DB, t Table, committed func(rows int)) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, t.Create); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	defer d.LockWrites()()
	if err := d.insertRows(ctx, conn, t, committed); err != nil {
		return err
	}
	for _, ix := range t.Indexes {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", ix.Name, t.Name, ix.Column)); err != nil {
			return fmt.Errorf("index %s: %w", ix.Name, err)
		}
	}
	if t.AfterLoad != nil {
		if err := t.AfterLoad(ctx, conn); err != nil {
			return err
		}
	}
	// ANALYZE TABLE answers with a result set in MariaDB: read and drop it.
	rows, err := conn.QueryContext(ctx, d.analyze(t.Name))
	if err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	for rows.Next() {
	}
	return errors.Join(rows.Err(), rows.Close())
}

// insertRows sends t's rows BatchRows to an INSERT (prepared once) and
// TxRows to a transaction, telling committed the rows of each commit.
func (d *Dialect) insertRows(ctx context.Context, conn *sql.Conn, t Table, committed func(rows int)) (err error) {
	full, err := conn.PrepareContext(ctx, d.InsertSQL(t.Name, t.Columns, t.BatchRows))
	if err != nil {
		return err
	}
	defer full.Close()
	args := make([]any, 0, len(t.Columns)*t.BatchRows)
	inTx := false
	inTxRows := 0
	defer func() {
		if inTx {
			conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	for i := 1; i <= t.Rows; i++ {
		if !inTx {
			if _, err := conn.ExecContext(ctx, d.BeginWrite); err != nil {
				return err
			}
			inTx = true
		}
		args = t.Row(args, i)
		rows := len(args) / len(t.Columns)
		if rows < t.BatchRows && i < t.Rows {
			continue
		}
		if rows == t.BatchRows {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = conn.ExecContext(ctx, d.InsertSQL(t.Name, t.Columns, rows), args...)
		}
		if err != nil {
			return fmt.Errorf("insert rows up to %d: %w", i, err)
		}
		args = args[:0]
		inTxRows += rows
		if i%t.TxRows == 0 || i == t.Rows {
			if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
				return err
			}
			inTx = false
			committed(inTxRows)
			inTxRows = 0
		}
	}
	return nil
}

// InsertSQL is a multi-row INSERT of rows rows into columns of table.
func (d *Dialect) InsertSQL(table string, columns []string, rows int) string {
	one := "(?" + strings.Repeat(", ?", len(columns)-1) + ")"
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	return d.Bind(b.String())
}

// ReadMeta reads the key-value table in which a workload recorded its last
// load; ok is false when there is none to read.
func ReadMeta(ctx context.Context, db *sql.DB, table string) (meta map[string]string, ok bool) {
	rows, err := db.QueryContext(ctx, "SELECT k, v FROM "+table)
	if err != nil {
		return map[string]string{}, false
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return map[string]string{}, false
		}
		m[k] = v
	}
	return m, rows.Err() == nil && len(m) > 0
}

// WriteMeta records a load in a new key-value table. Write it last, so that
// an interrupted load is never reused.
func (d *Dialect) WriteMeta(ctx context.Context, db *sql.DB, table string, kvs [][2]string) error {
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (k VARCHAR(64) NOT NULL PRIMARY KEY, v VARCHAR(255) NOT NULL)"); err != nil {
		return fmt.Errorf("create %s: %w", table, err)
	}
	for _, kv := range kvs {
		if _, err := db.ExecContext(ctx, d.Bind("INSERT INTO "+table+" (k, v) VALUES (?, ?)"), kv[0], kv[1]); err != nil {
			return fmt.Errorf("record the load: %w", err)
		}
	}
	return nil
}

// Load is what a workload loads and how it recognizes a load it may keep.
type Load struct {
	// MetaTable records each load, written last so that an interrupted
	// load is never kept; Record is what it records.
	MetaTable string
	Record    [][2]string
	// Reuse, when set, is asked of an earlier complete load's record: nil
	// keeps that load, an error refuses it and Prepare returns the error
	// having written nothing. Nil never keeps one.
	Reuse func(meta map[string]string) error
	// Stale lists the tables an earlier load left (as its record says)
	// beyond this load's own, to be dropped with them; nil when none.
	Stale func(meta map[string]string) []string
	// Tables are the tables to load, built only when they will be.
	Tables func() []Table
	// Workers is how many tables load at once; 0 lets the dialect choose.
	Workers int
	// Name names the load in its meter's line: "sysbench".
	Name string
}

// Prepare keeps an earlier load that l may reuse (reused is then true), or
// drops it and loads l's tables, its meter saying how far, then records
// the load; took is how long loading took. An earlier load l's Reuse
// refuses is its error, with nothing written.
func (d *Dialect) Prepare(ctx context.Context, db *sql.DB, l Load, log io.Writer) (reused bool, took time.Duration, err error) {
	meta := map[string]string{}
	if l.Reuse != nil || l.Stale != nil {
		var ok bool
		meta, ok = ReadMeta(ctx, db, l.MetaTable)
		if ok && l.Reuse != nil {
			if err := l.Reuse(meta); err != nil {
				return false, 0, err
			}
			return true, 0, nil
		}
	}
	start := time.Now()
	tables := l.Tables()
	drop := []string{l.MetaTable}
	for _, t := range tables {
		drop = append(drop, t.Name)
	}
	if l.Stale != nil {
		drop = append(drop, l.Stale(meta)...)
	}
	if err := DropTables(ctx, db, drop...); err != nil {
		return false, 0, err
	}
	if err := d.LoadTables(ctx, db, l.Name, tables, l.Workers, start, log); err != nil {
		return false, 0, err
	}
	if err := d.WriteMeta(ctx, db, l.MetaTable, l.Record); err != nil {
		return false, 0, err
	}
	return false, time.Since(start), nil
}
