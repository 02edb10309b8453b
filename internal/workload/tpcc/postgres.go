package tpcc

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"golang.org/x/sync/errgroup"

	"dbio/internal/engine"
	"dbio/internal/workload/sqlclient"
)

//go:embed sql/postgres.sql
var pgFunctions string

// SQLSTATEs raised by the functions in sql/postgres.sql.
const (
	pgRollback   = "TPC01" // New-Order on an unused item (2.4.2.3)
	pgNoCustomer = "TPC02"
)

// pgBackend runs TPC-C on PostgreSQL: rows loaded with COPY, keys and
// indexes built afterwards, the five transactions as PL/pgSQL functions
// called through a native pgx connection per user, one round trip each.
type pgBackend struct{}

var pgTypes = columnTypes{integer: "integer", timestamp: "timestamp", decimal: "numeric", precision: true,
	text: func(generic string) string { return generic }} // varchar(n), char(n)

// connect opens a native pgx connection to the database dbio owns.
func pgConnect(ctx context.Context, inst engine.Instance) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(inst.DSN())
	if err != nil {
		return nil, err
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// createSchema creates the tables without keys: COPY into heaps and one
// sorted index build per key afterwards is faster than maintaining B-trees
// row by row.
func (pgBackend) createSchema(ctx context.Context, inst engine.Instance) error {
	conn, err := pgConnect(ctx, inst)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	exec := func(q string) error {
		_, err := conn.Exec(ctx, q)
		return err
	}
	return recreate(exec, append([]string{metaTable}, Tables...), func(t table) string {
		heap := t
		heap.pk = nil
		return heap.createSQL(pgTypes, "")
	})
}

// loadWorkers: two loaders (each a generator in dbio and a COPY backend in
// the server) keep two cores busy; measured on two cores, three or four were
// no faster.
func (pgBackend) loadWorkers() int { return 2 }

func (pgBackend) newSink(ctx context.Context, inst engine.Instance) (rowSink, error) {
	conn, err := pgConnect(ctx, inst)
	if err != nil {
		return nil, err
	}
	return newTextSink(pgCopy{conn}, "BEGIN", "2006-01-02 15:04:05.999999"), nil
}

// pgCopy sends rows with COPY FROM STDIN in COPY's text format.
type pgCopy struct{ conn *pgx.Conn }

func (c pgCopy) exec(ctx context.Context, stmt string) error {
	_, err := c.conn.Exec(ctx, stmt)
	return err
}

func (c pgCopy) load(ctx context.Context, table, cols string, b *bytes.Buffer) error {
	if _, err := c.conn.PgConn().CopyFrom(ctx, b, "COPY "+table+" ("+cols+") FROM STDIN"); err != nil {
		return fmt.Errorf("copy into %s: %w", table, err)
	}
	return nil
}

// close drops an open transaction with the connection.
func (c pgCopy) close(bool) error { return c.conn.Close(context.Background()) }

// pgIndexWorkers build keys and indexes in parallel after the load.
const pgIndexWorkers = 2

// finishLoad builds the primary keys and the secondary indexes, largest
// tables first, on parallel connections, then collects statistics.
func (pgBackend) finishLoad(ctx context.Context, inst engine.Instance) error {
	var ddl []string
	for _, name := range []string{"order_line", "stock", "customer", "orders", "history", "new_order", "item", "district", "warehouse"} {
		t := tableByName(name)
		if len(t.pk) > 0 {
			ddl = append(ddl, fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s_pkey PRIMARY KEY (%s)", t.name, t.name, strings.Join(t.pk, ", ")))
		}
		for _, ix := range secondaryIndexes {
			if ix.table == name {
				ddl = append(ddl, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", ix.name, ix.table, ix.cols))
			}
		}
	}
	for _, name := range Tables {
		ddl = append(ddl, "ANALYZE "+name)
	}
	// The largest sorts are queued first so that the workers finish together.
	work := make(chan string, len(ddl))
	for _, q := range ddl {
		work <- q
	}
	close(work)
	g, gctx := errgroup.WithContext(ctx)
	for range pgIndexWorkers {
		g.Go(func() error {
			conn, err := pgConnect(gctx, inst)
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(gctx))
			// Sorts for the index builds stay in memory, unless the
			// server's configuration sizes them: a server dbio runs under
			// a memory cap, or a setting of the user's.
			var source string
			if err := conn.QueryRow(gctx, "SELECT source FROM pg_settings WHERE name = 'maintenance_work_mem'").Scan(&source); err != nil {
				return err
			}
			if source == "default" {
				if _, err := conn.Exec(gctx, "SET maintenance_work_mem = '256MB'"); err != nil {
					return err
				}
			}
			for q := range work {
				if _, err := conn.Exec(gctx, q); err != nil {
					return fmt.Errorf("%s: %w", q, err)
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// prepareRun installs the transaction functions (again, when a database is
// reused, so that they are always this version's).
func (pgBackend) prepareRun(ctx context.Context, inst engine.Instance) error {
	return pgInstall(ctx, inst, pgFunctions)
}

// pgInstall runs a function file.
func pgInstall(ctx context.Context, inst engine.Instance, functions string) error {
	conn, err := pgConnect(ctx, inst)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, functions); err != nil {
		return fmt.Errorf("install the TPC-C functions: %w", err)
	}
	return nil
}

// newExecutor opens the session's native pgx connection, whose sockets
// wait for the server as d chose: on a blocking socket or in Go's network
// poller.
func (pgBackend) newExecutor(ctx context.Context, inst engine.Instance, d *sqlclient.Dialect) (executor, error) {
	conn, err := d.ConnectPgx(ctx, inst.DSN())
	if err != nil {
		return nil, err
	}
	return &pgExecutor{conn: conn}, nil
}

// sharesProcs: PostgreSQL's sessions keep a P each. Sharing the Ps, as
// MariaDB's do, cost more CPU per transaction at 8 users and got a quarter
// to two fifths fewer New-Orders (alternating runs, 10 warehouses).
func (pgBackend) sharesProcs() bool { return false }

func (pgBackend) notes() []string {
	return []string{
		"PostgreSQL transactions: one PL/pgSQL function per transaction, called as one statement (autocommit, READ COMMITTED) over a native pgx connection per user, with the statement prepared once per connection: one round trip per transaction.",
		"PostgreSQL load: COPY (text format) per warehouse, primary keys and indexes built after the load, then ANALYZE.",
	}
}

// pgExecutor runs the five transactions through the functions of sql/postgres.sql.
type pgExecutor struct {
	conn *sqlclient.PgxConn
	// argument arrays, reused
	items, supply, qty []int32
	amounts            []float64
}

func (e *pgExecutor) close() error { return e.conn.Close() }

// pgCode is the SQLSTATE of a server error, "" for other errors.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// customerArgs renders a selection as the functions take it: an id, or a last name.
func customerArgs(sel customerSel) (int32, *string) {
	if sel.byName {
		last := sel.last
		return 0, &last
	}
	return int32(sel.cID), nil
}

// newOrder implements clause 2.4.2 through tpcc_new_order.
func (e *pgExecutor) newOrder(ctx context.Context, in *newOrderIn) error {
	sortForLocking(in.lines)
	e.items, e.supply, e.qty = e.items[:0], e.supply[:0], e.qty[:0]
	for _, l := range in.lines {
		e.items = append(e.items, int32(l.itemID))
		e.supply = append(e.supply, int32(l.supplyWID))
		e.qty = append(e.qty, int32(l.quantity))
	}
	allLocal := 0
	if in.allLocal {
		allLocal = 1
	}
	var oID int32
	var brand string
	err := e.conn.QueryRow(ctx, "SELECT * FROM tpcc_new_order($1, $2, $3, $4, $5, $6, $7, $8)",
		int32(in.wID), int32(in.dID), int32(in.cID), int32(allLocal), in.entryD, e.items, e.supply, e.qty).
		Scan(&oID, &in.total, &e.amounts, &brand)
	if err != nil {
		if pgCode(err) == pgRollback {
			return errRollback
		}
		return fmt.Errorf("new-order: %w", err)
	}
	in.oID = int(oID)
	for i := range in.lines {
		if i < len(e.amounts) && i < len(brand) {
			in.lines[i].amount = e.amounts[i]
			in.lines[i].brandGenOK = brand[i] == 'B'
		}
	}
	return nil
}

// payment implements clause 2.5.2 through tpcc_payment.
func (e *pgExecutor) payment(ctx context.Context, in *paymentIn) error {
	cID, last := customerArgs(in.customer)
	var paid int32
	var credit string
	var balance float64
	var data *string
	err := e.conn.QueryRow(ctx, "SELECT * FROM tpcc_payment($1, $2, $3, $4, $5, $6, $7, $8)",
		int32(in.wID), int32(in.dID), int32(in.cWID), int32(in.cDID), cID, last, in.amount, in.date).
		Scan(&paid, &credit, &balance, &data)
	if err != nil {
		return e.txError("payment", err)
	}
	in.resolvedCID = int(paid)
	in.badCreditHit = credit == "BC"
	return nil
}

func (e *pgExecutor) txError(tx string, err error) error {
	if pgCode(err) == pgNoCustomer {
		return fmt.Errorf("%s: %w: %v", tx, errNoCustomer, err)
	}
	return fmt.Errorf("%s: %w", tx, err)
}

// orderStatus implements clause 2.6.2 through tpcc_order_status.
func (e *pgExecutor) orderStatus(ctx context.Context, in *orderStatusIn) error {
	cID, last := customerArgs(in.customer)
	var (
		resolved, oID, carrier *int32
		balance                *float64
		first, middle, lastN   *string
		entry                  pgtype.Timestamp
		olItems, olSupply      []int32
		olQty                  []int32
		olAmounts              []float64
		olDelivery             []pgtype.Timestamp
	)
	err := e.conn.QueryRow(ctx, "SELECT * FROM tpcc_order_status($1, $2, $3, $4)",
		int32(in.wID), int32(in.dID), cID, last).
		Scan(&resolved, &balance, &first, &middle, &lastN, &oID, &entry, &carrier,
			&olItems, &olSupply, &olQty, &olAmounts, &olDelivery)
	if err != nil {
		return e.txError("order-status", err)
	}
	in.oID, in.lines = 0, len(olItems)
	if oID != nil {
		in.oID = int(*oID)
	}
	return nil
}

// delivery implements clause 2.7.4 through tpcc_delivery.
func (e *pgExecutor) delivery(ctx context.Context, in *deliveryIn) error {
	var delivered, skipped int32
	err := e.conn.QueryRow(ctx, "SELECT * FROM tpcc_delivery($1, $2, $3)", int32(in.wID), int32(in.carrierID), in.date).
		Scan(&delivered, &skipped)
	if err != nil {
		return fmt.Errorf("delivery: %w", err)
	}
	in.delivered, in.skipped = int(delivered), int(skipped)
	return nil
}

// stockLevel implements clause 2.8.2 through tpcc_stock_level.
func (e *pgExecutor) stockLevel(ctx context.Context, in *stockLevelIn) error {
	var low int32
	err := e.conn.QueryRow(ctx, "SELECT * FROM tpcc_stock_level($1, $2, $3)", int32(in.wID), int32(in.dID), int32(in.threshold)).
		Scan(&low)
	if err != nil {
		return fmt.Errorf("stock-level: %w", err)
	}
	in.lowStock = int(low)
	return nil
}
