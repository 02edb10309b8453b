package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"dbio/internal/engine"
	"dbio/internal/progress"
	"dbio/internal/results"
	"dbio/internal/units"
	"dbio/internal/workload"
	"dbio/internal/workload/sqlclient"
)

// rowSink receives generated rows of one loader worker.
type rowSink interface {
	// add takes one row in the column order of schema.go. The slice is reused
	// for the next row: a sink that keeps values copies them.
	add(ctx context.Context, table string, row []value) error
	// flush makes everything added so far durable (one warehouse at a time).
	flush(ctx context.Context) error
	close() error
}

// metaTable records what dbio loaded, so that a later run can reuse the data
// and derive its run-time constants from the load-time ones.
const metaTable = "dbio_tpcc_meta"

// loaderVersion is recorded with every load (see workload.CheckReuse):
// raise it whenever the loader makes other rows from the same warehouses
// and seed, so that --reuse refuses a database of another version.
// TestLoaderFingerprint fails until it is raised.
const loaderVersion = 1

// dataset is the identity of the database this configuration loads.
func (c Config) dataset() results.Dataset {
	return workload.NewDataset("tpcc", loaderVersion, c.Seed, [2]string{"warehouses", strconv.Itoa(c.Warehouses)})
}

// Prepare implements workload.Workload: it builds the database of
// cfg.Warehouses warehouses, or with Reuse keeps one already complete with
// the same identity (warehouses, seed, loader version) and refuses another.
func (w *Workload) Prepare(ctx context.Context, inst engine.Instance, log io.Writer) (workload.LoadStats, error) {
	b, err := w.backend(inst)
	if err != nil {
		return workload.LoadStats{}, err
	}
	db := inst.DB()
	dataset := w.cfg.dataset()
	if w.cfg.Reuse {
		if meta, ok := readMeta(ctx, db); ok {
			if err := workload.CheckReuse(meta, dataset); err != nil {
				return workload.LoadStats{}, err
			}
			c, err := loadConstants(meta)
			if err != nil {
				return workload.LoadStats{}, err
			}
			if err := prepareRun(ctx, b, inst); err != nil {
				return workload.LoadStats{}, err
			}
			w.setConstants(c)
			fmt.Fprintf(log, "reusing the TPC-C database already loaded with %d warehouses from seed %d\n", w.cfg.Warehouses, w.cfg.Seed)
			return workload.LoadStats{Scale: w.cfg.Warehouses, Reused: true, Dataset: dataset}, nil
		}
	}
	start := time.Now()
	if err := b.createSchema(ctx, inst); err != nil {
		return workload.LoadStats{}, fmt.Errorf("create schema: %w", err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+metaTable+" (k VARCHAR(64) NOT NULL PRIMARY KEY, v VARCHAR(255) NOT NULL)"); err != nil {
		return workload.LoadStats{}, fmt.Errorf("create %s: %w", metaTable, err)
	}
	load := loadTimeConstants(w.cfg.Seed)
	workers := w.cfg.LoadWorkers
	if workers == 0 {
		workers = b.loadWorkers()
	}
	workers = min(workers, w.cfg.Warehouses)
	var rows atomic.Int64
	var done atomic.Int64

	// Work items: the ITEM table, then one per warehouse.
	next := make(chan int)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(next)
		for wid := 0; wid <= w.cfg.Warehouses; wid++ {
			select {
			case next <- wid:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	// One line for the load, redrawn on a terminal, a line every tenth in
	// a log: a line per warehouse would be thousands at HammerDB's scales.
	meter := progress.StartMeter(log, "loading tpcc", float64(w.cfg.Warehouses), "warehouses", "rows", start)
	for range max(workers, 1) {
		g.Go(func() error {
			sink, err := b.newSink(gctx, inst)
			if err != nil {
				return err
			}
			defer sink.close()
			gen := &generator{c: load, now: start, sink: sink}
			for wid := range next {
				err := gen.generate(gctx, w.cfg.Seed, wid)
				if err == nil {
					err = sink.flush(gctx)
				}
				if err != nil {
					return fmt.Errorf("load warehouse %d: %w", wid, err)
				}
				rows.Add(gen.rows)
				gen.rows = 0
				if wid > 0 {
					meter.Update(float64(done.Add(1)), float64(rows.Load()), time.Now())
				}
			}
			return nil
		})
	}
	err = g.Wait()
	meter.Finish()
	if err != nil {
		return workload.LoadStats{}, err
	}
	rowsDone := time.Now()
	took := rowsDone.Sub(start)
	warehouses := "warehouses"
	if w.cfg.Warehouses == 1 {
		warehouses = "warehouse"
	}
	fmt.Fprintf(log, "loaded %d %s: %s rows in %.1f s (%s rows/s)\n", w.cfg.Warehouses, warehouses, units.GroupThousands(rows.Load()),
		took.Seconds(), units.GroupThousands(int64(float64(rows.Load())/max(took.Seconds(), 0.001))))
	if err := b.finishLoad(ctx, inst); err != nil {
		return workload.LoadStats{}, fmt.Errorf("finish load: %w", err)
	}
	fmt.Fprintf(log, "built indexes and statistics in %.1f s\n", time.Since(rowsDone).Seconds())
	if err := prepareRun(ctx, b, inst); err != nil {
		return workload.LoadStats{}, err
	}
	if err := writeMeta(ctx, db, load, dataset); err != nil {
		return workload.LoadStats{}, err
	}
	w.setConstants(load)
	return workload.LoadStats{Rows: rows.Load(), Scale: w.cfg.Warehouses, Duration: time.Since(start), Dataset: dataset}, nil
}

// runPreparer is implemented by backends that install server-side code
// (functions, procedures) before sessions start, on a new database and on a
// reused one alike.
type runPreparer interface {
	prepareRun(ctx context.Context, inst engine.Instance) error
}

func prepareRun(ctx context.Context, b backend, inst engine.Instance) error {
	if p, ok := b.(runPreparer); ok {
		return p.prepareRun(ctx, inst)
	}
	return nil
}

// writeMeta records a complete load: the identity of its data, and the
// load-time constants the run-time ones derive from. The values are
// digits and dbio's own names, safe to write into the statement.
func writeMeta(ctx context.Context, db *sql.DB, c Constants, dataset results.Dataset) error {
	kv := append(workload.DatasetRecord(dataset),
		[2]string{"c_last", strconv.Itoa(c.CLast)},
		[2]string{"c_id", strconv.Itoa(c.CID)},
		[2]string{"ol_i_id", strconv.Itoa(c.OLIID)},
		[2]string{"complete", "1"},
	)
	for _, p := range kv {
		if _, err := db.ExecContext(ctx, "INSERT INTO "+metaTable+" (k, v) VALUES ('"+p[0]+"', '"+p[1]+"')"); err != nil {
			return fmt.Errorf("record load: %w", err)
		}
	}
	return nil
}

// readMeta returns the record of a complete earlier load; ok is false when
// there is none (no table, or a load that did not finish).
func readMeta(ctx context.Context, db *sql.DB) (meta map[string]string, ok bool) {
	meta, ok = sqlclient.ReadMeta(ctx, db, metaTable)
	return meta, ok && meta["complete"] == "1"
}

// loadConstants are the load-time constants a record holds.
func loadConstants(meta map[string]string) (Constants, error) {
	var n [3]int
	for i, k := range []string{"c_last", "c_id", "ol_i_id"} {
		v, err := strconv.Atoi(meta[k])
		if err != nil {
			return Constants{}, fmt.Errorf("%s: the load's %s is %q, not a number", metaTable, k, meta[k])
		}
		n[i] = v
	}
	return Constants{CLast: n[0], CID: n[1], OLIID: n[2]}, nil
}

// generator produces the rows of clause 4.3.3.1.
type generator struct {
	r    *rnd
	c    Constants
	now  time.Time
	sink rowSink
	rows int64
	buf  []value // the row being emitted, reused
}

// value is one column of a generated row. Rows are typed rather than
// []any so that loading five million rows does not box every integer and
// string in an interface: the generator is the loader's own CPU cost.
type value struct {
	kind valueKind
	n    int64  // an integer, or a timestamp in Unix nanoseconds
	s    string // a string, money included (decimal text)
}

type valueKind uint8

const (
	kindNull valueKind = iota
	kindInt
	kindString
	kindTime
)

func intv(n int) value        { return value{kind: kindInt, n: int64(n)} }
func strv(s string) value     { return value{kind: kindString, s: s} }
func timev(t time.Time) value { return value{kind: kindTime, n: t.UnixNano()} }

var nullv = value{}

// any is the value as database/sql takes it.
func (v value) any() any {
	switch v.kind {
	case kindInt:
		return v.n
	case kindString:
		return v.s
	case kindTime:
		return time.Unix(0, v.n)
	default:
		return nil
	}
}

func (g *generator) emit(ctx context.Context, table string, row ...value) error {
	g.rows++
	g.buf = append(g.buf[:0], row...)
	return g.sink.add(ctx, table, g.buf)
}

// money renders cents as a decimal string with two places.
func money(cents int64) string {
	var b [24]byte
	out := b[:0]
	if cents < 0 {
		out = append(out, '-')
		cents = -cents
	}
	out = strconv.AppendInt(out, cents/100, 10)
	c := cents % 100
	return string(append(out, '.', byte('0'+c/10), byte('0'+c%10)))
}

// fraction4 renders n/10000 (0 <= n < 10000) with four places.
func fraction4(n int) string {
	return string([]byte{'0', '.', byte('0' + n/1000), byte('0' + n/100%10), byte('0' + n/10%10), byte('0' + n%10)})
}

// loadTimeConstants are the constants a load from seed populates the
// database with.
func loadTimeConstants(seed uint64) Constants {
	return NewLoadConstants(rand.New(rand.NewPCG(seed, 0x10AD)))
}

// generate populates work item wid of a load from seed: ITEM for 0,
// warehouse wid otherwise, each from a random stream of its own, so that
// the data does not depend on which worker loads which item.
func (g *generator) generate(ctx context.Context, seed uint64, wid int) error {
	g.r = newRnd(seed, uint64(wid)+1, g.c)
	if wid == 0 {
		return g.items(ctx)
	}
	return g.warehouse(ctx, wid)
}

// items populates ITEM: 100,000 rows.
func (g *generator) items(ctx context.Context) error {
	r := g.r
	for i := 1; i <= Items; i++ {
		if err := g.emit(ctx, "item", intv(i), intv(r.uniform(1, 10000)), strv(r.astring(14, 24)),
			strv(money(r.cents(100, 10000))), strv(r.data(26, 50))); err != nil {
			return err
		}
	}
	return nil
}

// warehouse populates one warehouse with its stock, districts, customers,
// history, orders, order lines and new orders.
func (g *generator) warehouse(ctx context.Context, w int) error {
	r := g.r
	if err := g.emit(ctx, "warehouse", intv(w), strv(r.astring(6, 10)), strv(r.astring(10, 20)), strv(r.astring(10, 20)),
		strv(r.astring(10, 20)), strv(r.state()), strv(r.zip()), strv(fraction4(r.uniform(0, 2000))), strv(money(30000000))); err != nil {
		return err
	}
	var row [17]value
	for i := 1; i <= StockPerWarehouse; i++ {
		row[0], row[1], row[2] = intv(i), intv(w), intv(r.uniform(10, 100))
		for d := range 10 {
			row[3+d] = strv(r.astring(24, 24))
		}
		row[13], row[14], row[15], row[16] = intv(0), intv(0), intv(0), strv(r.data(26, 50))
		if err := g.emit(ctx, "stock", row[:]...); err != nil {
			return err
		}
	}
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		if err := g.district(ctx, w, d); err != nil {
			return err
		}
	}
	return nil
}

// Money values every row of a kind starts with (4.3.3.1).
var (
	districtYTD  = strv(money(3000000))
	creditLimit  = strv(money(5000000))
	startBalance = strv(money(-1000))
	tenDollars   = strv(money(1000))
	zeroAmount   = strv("0.00")
)

func (g *generator) district(ctx context.Context, w, d int) error {
	r := g.r
	now := timev(g.now)
	wv, dv := intv(w), intv(d)
	if err := g.emit(ctx, "district", dv, wv, strv(r.astring(6, 10)), strv(r.astring(10, 20)), strv(r.astring(10, 20)),
		strv(r.astring(10, 20)), strv(r.state()), strv(r.zip()), strv(fraction4(r.uniform(0, 2000))), districtYTD,
		intv(OrdersPerDistrict+1)); err != nil {
		return err
	}
	for c := 1; c <= CustomersPerDistrict; c++ {
		// 4.3.3.1: the first 1,000 customers take the names 0..999 in order,
		// the rest NURand(255, 0, 999) with the load-time C.
		var last string
		if c <= 1000 {
			last = LastName(c - 1)
		} else {
			last = LastName(r.nurand(255, 0, 999))
		}
		credit := "GC"
		if r.IntN(10) == 0 {
			credit = "BC"
		}
		if err := g.emit(ctx, "customer", intv(c), dv, wv, strv(r.astring(8, 16)), strv("OE"), strv(last),
			strv(r.astring(10, 20)), strv(r.astring(10, 20)), strv(r.astring(10, 20)), strv(r.state()), strv(r.zip()),
			strv(r.nstring(16, 16)), now, strv(credit), creditLimit, strv(fraction4(r.uniform(0, 5000))),
			startBalance, tenDollars, intv(1), intv(0), strv(r.astring(300, 500))); err != nil {
			return err
		}
		if err := g.emit(ctx, "history", intv(c), dv, wv, dv, wv, now, tenDollars, strv(r.astring(12, 24))); err != nil {
			return err
		}
	}
	perm := r.permutation(CustomersPerDistrict)
	for o := 1; o <= OrdersPerDistrict; o++ {
		olCnt := r.uniform(5, 15)
		delivered := o < firstUndelivered
		carrier := nullv
		if delivered {
			carrier = intv(r.uniform(1, 10))
		}
		ov := intv(o)
		if err := g.emit(ctx, "orders", ov, dv, wv, intv(perm[o-1]), now, carrier, intv(olCnt), intv(1)); err != nil {
			return err
		}
		for l := 1; l <= olCnt; l++ {
			deliveryD, amount := nullv, zeroAmount
			if delivered {
				deliveryD = now
			} else {
				amount = strv(money(r.cents(1, 999999)))
			}
			if err := g.emit(ctx, "order_line", ov, dv, wv, intv(l), intv(r.uniform(1, Items)), wv, deliveryD, intv(5),
				amount, strv(r.astring(24, 24))); err != nil {
				return err
			}
		}
		if !delivered {
			if err := g.emit(ctx, "new_order", ov, dv, wv); err != nil {
				return err
			}
		}
	}
	return nil
}
