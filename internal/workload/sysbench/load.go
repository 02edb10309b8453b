package sysbench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"dbio/internal/engine"
	"dbio/internal/workload"
)

// metaTable records what dbio loaded, so a later run can reuse the tables.
const metaTable = "dbio_sysbench_meta"

const (
	loadBatchRows = 500   // rows per INSERT statement
	loadTxRows    = 10000 // rows per load transaction
)

// Prepare implements workload.Workload: it creates sbtest1..N with
// TableSize rows each, as sysbench's prepare does (ids 1..TableSize, k drawn
// from [1, TableSize] with the configured distribution, c and pad as random
// digit groups), then the secondary index k_<N> on k. With Reuse, tables
// dbio loaded before at the same count and size are kept.
func (w *Workload) Prepare(ctx context.Context, inst engine.Instance, log io.Writer) (workload.LoadStats, error) {
	d, err := dialectFor(inst)
	if err != nil {
		return workload.LoadStats{}, err
	}
	db := inst.DB()
	meta, haveMeta := readMeta(ctx, db)
	if w.cfg.Reuse && haveMeta && meta["tables"] == strconv.Itoa(w.cfg.Tables) && meta["table_size"] == strconv.Itoa(w.cfg.TableSize) {
		fmt.Fprintf(log, "reusing the %d sysbench tables of %d rows already loaded\n", w.cfg.Tables, w.cfg.TableSize)
		return workload.LoadStats{Scale: w.cfg.Tables, Reused: true}, nil
	}
	start := time.Now()
	// Drop what dbio loaded before (as many tables as it recorded) and what this run will create.
	drop := w.cfg.Tables
	if n, err := strconv.Atoi(meta["tables"]); err == nil && n > drop {
		drop = n
	}
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+metaTable); err != nil {
		return workload.LoadStats{}, fmt.Errorf("drop %s: %w", metaTable, err)
	}
	for n := 1; n <= drop; n++ {
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+tableName(n)); err != nil {
			return workload.LoadStats{}, fmt.Errorf("drop %s: %w", tableName(n), err)
		}
	}
	workers := w.cfg.LoadWorkers
	if workers == 0 {
		workers = d.loadWorkers
	}
	workers = max(1, min(workers, w.cfg.Tables))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	var logMu sync.Mutex
	for n := 1; n <= w.cfg.Tables; n++ {
		g.Go(func() error {
			if err := w.loadTable(gctx, db, d, n); err != nil {
				return fmt.Errorf("load %s: %w", tableName(n), err)
			}
			logMu.Lock()
			fmt.Fprintf(log, "loaded %s: %d rows (%.1f s)\n", tableName(n), w.cfg.TableSize, time.Since(start).Seconds())
			logMu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return workload.LoadStats{}, err
	}
	if err := w.writeMeta(ctx, db, d); err != nil {
		return workload.LoadStats{}, err
	}
	return workload.LoadStats{
		Rows:     int64(w.cfg.Tables) * int64(w.cfg.TableSize),
		Scale:    w.cfg.Tables,
		Duration: time.Since(start),
	}, nil
}

// loadTable creates and fills table n on a connection of its own, then
// indexes k and refreshes the statistics.
func (w *Workload) loadTable(ctx context.Context, db *sql.DB, d *dialect, n int) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	table := tableName(n)
	if _, err := conn.ExecContext(ctx, d.createTable(table)); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if d.writeLock != nil {
		d.writeLock.Lock()
		defer d.writeLock.Unlock()
	}
	full, err := conn.PrepareContext(ctx, insertRowsSQL(d, table, loadBatchRows))
	if err != nil {
		return err
	}
	defer full.Close()
	r := rand.New(rand.NewPCG(w.cfg.Seed, uint64(n)))
	ids := w.cfg.ids()
	size := w.cfg.TableSize
	args := make([]any, 0, 4*loadBatchRows)
	inTx := false
	defer func() {
		if inTx {
			conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	for id := 1; id <= size; id++ {
		if !inTx {
			if _, err := conn.ExecContext(ctx, d.beginWrite); err != nil {
				return err
			}
			inTx = true
		}
		args = append(args, id, ids(r, 1, size), cValue(r), padValue(r))
		rows := len(args) / 4
		if rows < loadBatchRows && id < size {
			continue
		}
		if rows == loadBatchRows {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = conn.ExecContext(ctx, insertRowsSQL(d, table, rows), args...)
		}
		if err != nil {
			return fmt.Errorf("insert rows up to id %d: %w", id, err)
		}
		args = args[:0]
		if id%loadTxRows == 0 || id == size {
			if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
				return err
			}
			inTx = false
		}
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("CREATE INDEX k_%d ON %s (k)", n, table)); err != nil {
		return fmt.Errorf("index k_%d: %w", n, err)
	}
	if d.afterLoad != nil {
		if err := d.afterLoad(ctx, conn, table, size); err != nil {
			return err
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

// insertRowsSQL is a multi-row INSERT of rows full rows.
func insertRowsSQL(d *dialect, table string, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (id, k, c, pad) VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?)")
	}
	return d.bind(b.String())
}

func readMeta(ctx context.Context, db *sql.DB) (map[string]string, bool) {
	rows, err := db.QueryContext(ctx, "SELECT k, v FROM "+metaTable)
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

// writeMeta records the load last, so an interrupted load is never reused.
func (w *Workload) writeMeta(ctx context.Context, db *sql.DB, d *dialect) error {
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+metaTable+" (k VARCHAR(64) NOT NULL PRIMARY KEY, v VARCHAR(255) NOT NULL)"); err != nil {
		return fmt.Errorf("create %s: %w", metaTable, err)
	}
	for _, kv := range [][2]string{
		{"tables", strconv.Itoa(w.cfg.Tables)},
		{"table_size", strconv.Itoa(w.cfg.TableSize)},
		{"rand_type", w.cfg.RandType},
		{"seed", strconv.FormatUint(w.cfg.Seed, 10)},
	} {
		if _, err := db.ExecContext(ctx, d.bind("INSERT INTO "+metaTable+" (k, v) VALUES (?, ?)"), kv[0], kv[1]); err != nil {
			return fmt.Errorf("record the load: %w", err)
		}
	}
	return nil
}
