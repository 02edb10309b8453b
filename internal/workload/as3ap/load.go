package as3ap

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"dbio/internal/engine"
	"dbio/internal/workload"
)

// metaTable records what dbio loaded, so a later run can reuse the relations.
const metaTable = "dbio_as3ap_meta"

const (
	loadBatchRows = 200   // rows per INSERT statement
	loadTxRows    = 10000 // rows per load transaction
)

// Prepare implements workload.Workload: it creates the four relations with
// Rows rows each, then their indexes, or with Reuse keeps relations dbio
// loaded before at the same row count. Either way it notes the sum the
// consistency check starts from.
func (w *Workload) Prepare(ctx context.Context, inst engine.Instance, log io.Writer) (workload.LoadStats, error) {
	d, err := dialectFor(inst)
	if err != nil {
		return workload.LoadStats{}, err
	}
	db := inst.DB()
	if w.cfg.Reuse && readMeta(ctx, db)["rows"] == strconv.Itoa(w.cfg.Rows) {
		if err := w.setBaseline(ctx, db); err != nil {
			return workload.LoadStats{}, err
		}
		fmt.Fprintf(log, "reusing the AS3AP relations of %d rows already loaded\n", w.cfg.Rows)
		return workload.LoadStats{Scale: w.cfg.Rows, Reused: true}, nil
	}
	start := time.Now()
	for _, t := range append([]string{metaTable}, relations...) {
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return workload.LoadStats{}, fmt.Errorf("drop %s: %w", t, err)
		}
	}
	workers := w.cfg.LoadWorkers
	if workers == 0 {
		workers = d.loadWorkers
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, min(workers, len(relations))))
	gen := newGenerator(w.cfg.Rows, w.cfg.Seed)
	var logMu sync.Mutex
	for t := range relations {
		g.Go(func() error {
			if err := loadRelation(gctx, db, d, gen, t); err != nil {
				return fmt.Errorf("load %s: %w", relations[t], err)
			}
			logMu.Lock()
			fmt.Fprintf(log, "loaded %s: %d rows (%.1f s)\n", relations[t], w.cfg.Rows, time.Since(start).Seconds())
			logMu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return workload.LoadStats{}, err
	}
	if err := writeMeta(ctx, db, d, w.cfg); err != nil {
		return workload.LoadStats{}, err
	}
	if err := w.setBaseline(ctx, db); err != nil {
		return workload.LoadStats{}, err
	}
	return workload.LoadStats{Rows: int64(len(relations)) * int64(w.cfg.Rows), Scale: w.cfg.Rows, Duration: time.Since(start)}, nil
}

// setBaseline notes SUM(col_signed) of updates before the run.
func (w *Workload) setBaseline(ctx context.Context, db *sql.DB) error {
	var sum int64
	if err := db.QueryRowContext(ctx, "SELECT SUM(col_signed) FROM updates").Scan(&sum); err != nil {
		return fmt.Errorf("sum of updates.col_signed: %w", err)
	}
	w.mu.Lock()
	w.baseline, w.prepared = sum, true
	w.mu.Unlock()
	w.increments.Store(0)
	return nil
}

// loadRelation creates and fills relation t on a connection of its own, then
// builds its indexes and refreshes its statistics.
func loadRelation(ctx context.Context, db *sql.DB, d *dialect, gen *generator, t int) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	table := relations[t]
	if _, err := conn.ExecContext(ctx, createSQL(d, table)); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if d.writeLock != nil {
		d.writeLock.Lock()
		defer d.writeLock.Unlock()
	}
	full, err := conn.PrepareContext(ctx, insertSQL(d, table, loadBatchRows))
	if err != nil {
		return err
	}
	defer full.Close()
	r := gen.rng(t)
	args := make([]any, 0, len(columns)*loadBatchRows)
	inTx := false
	defer func() {
		if inTx {
			conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	for i := 1; i <= gen.rows; i++ {
		if !inTx {
			if _, err := conn.ExecContext(ctx, d.beginWrite); err != nil {
				return err
			}
			inTx = true
		}
		args = append(args, gen.row(t, r, i)...)
		rows := len(args) / len(columns)
		if rows < loadBatchRows && i < gen.rows {
			continue
		}
		if rows == loadBatchRows {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = conn.ExecContext(ctx, insertSQL(d, table, rows), args...)
		}
		if err != nil {
			return fmt.Errorf("insert rows up to %d: %w", i, err)
		}
		args = args[:0]
		if i%loadTxRows == 0 || i == gen.rows {
			if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
				return err
			}
			inTx = false
		}
	}
	for _, ix := range indexes {
		if ix.table != table {
			continue
		}
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", ix.name, ix.table, ix.column)); err != nil {
			return fmt.Errorf("index %s: %w", ix.name, err)
		}
	}
	// ANALYZE TABLE answers with a result set in MariaDB: read and drop it.
	rows, err := conn.QueryContext(ctx, d.analyze(table))
	if err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	for rows.Next() {
	}
	return errors.Join(rows.Err(), rows.Close())
}

func insertSQL(d *dialect, table string, rows int) string {
	names := make([]string, len(columns))
	marks := make([]string, len(columns))
	for i, c := range columns {
		names[i], marks[i] = c.name, "?"
	}
	one := "(" + strings.Join(marks, ", ") + ")"
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + strings.Join(names, ", ") + ") VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	return d.bind(b.String())
}

func readMeta(ctx context.Context, db *sql.DB) map[string]string {
	m := map[string]string{}
	rows, err := db.QueryContext(ctx, "SELECT k, v FROM "+metaTable)
	if err != nil {
		return m
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if rows.Scan(&k, &v) == nil {
			m[k] = v
		}
	}
	return m
}

// writeMeta records the load last, so an interrupted load is never reused.
func writeMeta(ctx context.Context, db *sql.DB, d *dialect, c Config) error {
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+metaTable+" (k VARCHAR(64) NOT NULL PRIMARY KEY, v VARCHAR(255) NOT NULL)"); err != nil {
		return fmt.Errorf("create %s: %w", metaTable, err)
	}
	for _, kv := range [][2]string{{"rows", strconv.Itoa(c.Rows)}, {"seed", strconv.FormatUint(c.Seed, 10)}} {
		if _, err := db.ExecContext(ctx, d.bind("INSERT INTO "+metaTable+" (k, v) VALUES (?, ?)"), kv[0], kv[1]); err != nil {
			return fmt.Errorf("record the load: %w", err)
		}
	}
	return nil
}
