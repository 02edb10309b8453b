package sysbench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"dbio/internal/engine"
	"dbio/internal/workload"
	"dbio/internal/workload/sqlclient"
)

// metaTable records what dbio loaded, so a later run can reuse the tables.
const metaTable = "dbio_sysbench_meta"

// Prepare implements workload.Workload: it creates sbtest1..N with
// TableSize rows each, as sysbench's prepare does (ids 1..TableSize, k drawn
// from [1, TableSize] with the configured distribution, c and pad as random
// digit groups), then the secondary index k_<N> on k. With Reuse, tables
// dbio loaded before at the same count and size are kept.
func (w *Workload) Prepare(ctx context.Context, inst engine.Instance, log io.Writer) (workload.LoadStats, error) {
	d, err := w.dialect(inst)
	if err != nil {
		return workload.LoadStats{}, err
	}
	load := sqlclient.Load{
		MetaTable: metaTable,
		Record: [][2]string{
			{"tables", strconv.Itoa(w.cfg.Tables)},
			{"table_size", strconv.Itoa(w.cfg.TableSize)},
			{"rand_type", w.cfg.RandType},
			{"seed", strconv.FormatUint(w.cfg.Seed, 10)},
		},
		// Tables dbio loaded before beyond this run's count go too.
		Stale: func(meta map[string]string) []string {
			var stale []string
			for n := w.cfg.Tables + 1; n <= atoi(meta["tables"]); n++ {
				stale = append(stale, tableName(n))
			}
			return stale
		},
		Tables: func() []sqlclient.Table {
			tables := make([]sqlclient.Table, w.cfg.Tables)
			for n := 1; n <= w.cfg.Tables; n++ {
				tables[n-1] = w.table(d, n)
			}
			return tables
		},
		Workers: w.cfg.LoadWorkers,
	}
	if w.cfg.Reuse {
		load.Reusable = func(meta map[string]string) bool {
			return meta["tables"] == strconv.Itoa(w.cfg.Tables) && meta["table_size"] == strconv.Itoa(w.cfg.TableSize)
		}
	}
	reused, took, err := d.Prepare(ctx, inst.DB(), load, log)
	if err != nil {
		return workload.LoadStats{}, err
	}
	if reused {
		fmt.Fprintf(log, "reusing the %d sysbench tables of %d rows already loaded\n", w.cfg.Tables, w.cfg.TableSize)
		return workload.LoadStats{Scale: w.cfg.Tables, Reused: true}, nil
	}
	return workload.LoadStats{
		Rows:     int64(w.cfg.Tables) * int64(w.cfg.TableSize),
		Scale:    w.cfg.Tables,
		Duration: took,
	}, nil
}

// atoi is s as a number, 0 when it is none.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// table is sbtest<n> as the loader fills it: ids 1..TableSize, then the
// index k_<n> on k.
func (w *Workload) table(d *sqlclient.Dialect, n int) sqlclient.Table {
	name := tableName(n)
	r := rand.New(rand.NewPCG(w.cfg.Seed, uint64(n)))
	ids := w.cfg.ids()
	size := w.cfg.TableSize
	t := sqlclient.Table{
		Name: name, Create: d.CreateTable(name, sqlFor(d).columns), Columns: []string{"id", "k", "c", "pad"}, Rows: size,
		Row: func(args []any, id int) []any {
			return append(args, id, ids(r, 1, size), cValue(r), padValue(r))
		},
		Indexes: []sqlclient.Index{{Name: fmt.Sprintf("k_%d", n), Column: "k"}},
		// 500 rows per INSERT statement, 10,000 per transaction.
		BatchRows: 500, TxRows: 10000,
	}
	if after := sqlFor(d).afterLoad; after != nil {
		t.AfterLoad = after(name, size)
	}
	return t
}
