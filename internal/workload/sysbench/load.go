package sysbench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"dbio/internal/engine"
	"dbio/internal/results"
	"dbio/internal/workload"
	"dbio/internal/workload/sqlclient"
)

// metaTable records what dbio loaded, so a later run can reuse the tables.
const metaTable = "dbio_sysbench_meta"

// loaderVersion is recorded with every load (see workload.CheckReuse):
// raise it whenever the loader makes other tables or rows from the same
// settings and seed, so that --reuse refuses the tables of another version.
// TestLoaderFingerprint fails until it is raised.
const loaderVersion = 1

// dataset is the identity of the tables this configuration loads: their
// count and size, the distribution of k, and the seed.
func (c Config) dataset() results.Dataset {
	return workload.NewDataset("sysbench", loaderVersion, c.Seed,
		[2]string{"tables", strconv.Itoa(c.Tables)},
		[2]string{"table-size", strconv.Itoa(c.TableSize)},
		[2]string{"rand-type", c.RandType})
}

// Prepare implements workload.Workload: it creates sbtest1..N with
// TableSize rows each, as sysbench's prepare does (ids 1..TableSize, k drawn
// from [1, TableSize] with the configured distribution, c and pad as random
// digit groups), then the secondary index k_<N> on k. With Reuse, tables
// dbio loaded before with the same identity (count, size, distribution,
// seed, loader version) are kept, and other tables refused.
func (w *Workload) Prepare(ctx context.Context, inst engine.Instance, log io.Writer) (workload.LoadStats, error) {
	d, err := w.dialect(inst)
	if err != nil {
		return workload.LoadStats{}, err
	}
	dataset := w.cfg.dataset()
	load := sqlclient.Load{
		MetaTable: metaTable,
		Record:    workload.DatasetRecord(dataset),
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
		Name:    "sysbench",
	}
	if w.cfg.Reuse {
		load.Reuse = func(meta map[string]string) error { return workload.CheckReuse(meta, dataset) }
	}
	reused, took, err := d.Prepare(ctx, inst.DB(), load, log)
	if err != nil {
		return workload.LoadStats{}, err
	}
	if reused {
		fmt.Fprintf(log, "reusing the %d sysbench tables of %d rows already loaded\n", w.cfg.Tables, w.cfg.TableSize)
		return workload.LoadStats{Scale: w.cfg.Tables, Reused: true, Dataset: dataset}, nil
	}
	return workload.LoadStats{
		Rows:     int64(w.cfg.Tables) * int64(w.cfg.TableSize),
		Scale:    w.cfg.Tables,
		Duration: took,
		Dataset:  dataset,
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
