package as3ap

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"

	"dbio/internal/engine"
	"dbio/internal/results"
	"dbio/internal/workload"
	"dbio/internal/workload/sqlclient"
)

// loaderVersion is recorded with every load (see workload.CheckReuse):
// raise it whenever the loader makes other relations or rows from the same
// row count and seed, so that --reuse refuses the relations of another
// version. TestLoaderFingerprint fails until it is raised.
const loaderVersion = 1

// dataset is the identity of the relations this configuration loads.
func (c Config) dataset() results.Dataset {
	return workload.NewDataset("as3ap", loaderVersion, c.Seed, [2]string{"rows", strconv.Itoa(c.Rows)})
}

// Prepare implements workload.Workload: it creates the four relations with
// Rows rows each, then their indexes, or with Reuse keeps relations dbio
// loaded before with the same identity (row count, seed, loader version)
// and refuses others. Either way it notes the sum the consistency check
// starts from.
func (w *Workload) Prepare(ctx context.Context, inst engine.Instance, log io.Writer) (workload.LoadStats, error) {
	d, err := w.dialect(inst)
	if err != nil {
		return workload.LoadStats{}, err
	}
	dataset := w.cfg.dataset()
	load := sqlclient.Load{
		// dbio_as3ap_meta records what dbio loaded, so a later run can reuse the relations.
		MetaTable: "dbio_as3ap_meta",
		Record:    workload.DatasetRecord(dataset),
		Tables: func() []sqlclient.Table {
			gen := newGenerator(w.cfg.Rows, w.cfg.Seed)
			tables := make([]sqlclient.Table, len(relations))
			for t := range relations {
				tables[t] = relationTable(d, gen, t)
			}
			return tables
		},
		Workers: w.cfg.LoadWorkers,
		Name:    "as3ap",
	}
	if w.cfg.Reuse {
		load.Reuse = func(meta map[string]string) error { return workload.CheckReuse(meta, dataset) }
	}
	reused, took, err := d.Prepare(ctx, inst.DB(), load, log)
	if err != nil {
		return workload.LoadStats{}, err
	}
	if err := w.setBaseline(ctx, inst.DB()); err != nil {
		return workload.LoadStats{}, err
	}
	if reused {
		fmt.Fprintf(log, "reusing the AS3AP relations of %d rows already loaded\n", w.cfg.Rows)
		return workload.LoadStats{Scale: w.cfg.Rows, Reused: true, Dataset: dataset}, nil
	}
	return workload.LoadStats{Rows: int64(len(relations)) * int64(w.cfg.Rows), Scale: w.cfg.Rows, Duration: took, Dataset: dataset}, nil
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

// relationTable is relation t as the loader fills it: gen's rows, then the
// relation's indexes.
func relationTable(d *sqlclient.Dialect, gen *generator, t int) sqlclient.Table {
	name := relations[t]
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = c.name
	}
	var ixs []sqlclient.Index
	for _, ix := range indexes {
		if ix.table == name {
			ixs = append(ixs, sqlclient.Index{Name: ix.name, Column: ix.column})
		}
	}
	r := gen.rng(t)
	return sqlclient.Table{
		Name: name, Create: createSQL(d, name), Columns: names, Rows: gen.rows, Indexes: ixs,
		Row: func(args []any, i int) []any { return append(args, gen.row(t, r, i)...) },
		// 200 rows per INSERT statement, 10,000 per transaction.
		BatchRows: 200, TxRows: 10000,
	}
}
