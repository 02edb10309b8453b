package tpcc

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"
	"golang.org/x/sync/errgroup"

	"dbio/internal/engine"
	"dbio/internal/workload/sqlclient"
)

//go:embed sql/mysql.sql
var myProcedures string

// Error numbers raised by the procedures in sql/mysql.sql.
const (
	myRollback   = 31001 // New-Order on an unused item (2.4.2.3)
	myNoCustomer = 31002
)

// myBackend runs TPC-C on MariaDB (and MySQL): rows loaded with LOAD DATA
// LOCAL INFILE into tables clustered by their primary keys, secondary
// indexes built afterwards, the five transactions as stored procedures
// called in one round trip each.
type myBackend struct{}

var myTypes = columnTypes{integer: "INT", timestamp: "DATETIME", decimal: "DECIMAL", precision: true, text: strings.ToUpper}

// myOpen opens a pool of its own on the database dbio owns, so that session
// settings made on it (the loader's) never reach the users' connections.
func myOpen(inst engine.Instance) (*sql.DB, error) {
	cfg, err := mysqldrv.ParseDSN(inst.DSN())
	if err != nil {
		return nil, err
	}
	connector, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(connector), nil
}

// createSchema creates the tables with their primary keys: InnoDB stores a
// table in its primary key, so loading in key order builds it as it goes.
func (myBackend) createSchema(ctx context.Context, inst engine.Instance) error {
	return recreate(execOn(ctx, inst.DB()), append([]string{metaTable, "tpcc_line_no"}, Tables...),
		func(t table) string { return t.createSQL(myTypes, "") + " ENGINE=InnoDB" })
}

// loadWorkers: two loaders keep two cores busy (measured: more were no faster).
func (myBackend) loadWorkers() int { return 2 }

func (myBackend) newSink(ctx context.Context, inst engine.Instance) (rowSink, error) {
	// unique_checks and foreign_key_checks stay on: with both off, MariaDB
	// 10.6+ loads an empty table in a table-locked bulk mode that, measured
	// here, cost 30 % more server CPU and made the other loaders wait.
	db, err := myOpen(inst)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	// No binary log for the load where the account may turn it off (an
	// external server's replicas would be sent a gigabyte of rows).
	_, _ = conn.ExecContext(ctx, "SET SESSION sql_log_bin = 0")
	return newTextSink(&loadData{db: db, conn: conn, names: map[string]string{}}, "START TRANSACTION", "2006-01-02 15:04:05"), nil
}

// loadData sends each table's rows with LOAD DATA LOCAL INFILE from an
// in-memory reader, in the same tab-separated text COPY uses.
type loadData struct {
	db    *sql.DB
	conn  *sql.Conn
	names map[string]string // table -> registered reader name
}

func (l *loadData) exec(ctx context.Context, stmt string) error {
	_, err := l.conn.ExecContext(ctx, stmt)
	return err
}

func (l *loadData) load(ctx context.Context, table, cols string, b *bytes.Buffer) error {
	name, ok := l.names[table]
	if !ok {
		// The driver's registry of readers is process-wide: the loader's
		// address keeps the name unique while it is registered (until close).
		name = fmt.Sprintf("dbio-tpcc-%p-%s", l, table)
		l.names[table] = name
		mysqldrv.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(b.Bytes()) })
	}
	if _, err := l.conn.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+table+" ("+cols+")"); err != nil {
		return fmt.Errorf("load data into %s: %w", table, err)
	}
	return nil
}

func (l *loadData) close(inTx bool) error {
	for _, name := range l.names {
		mysqldrv.DeregisterReaderHandler(name)
	}
	if inTx {
		l.conn.ExecContext(context.Background(), "ROLLBACK")
	}
	return errors.Join(l.conn.Close(), l.db.Close())
}

// finishLoad adds the secondary indexes (a sorted build each, faster than
// maintaining them row by row) and refreshes the optimizer's statistics.
func (myBackend) finishLoad(ctx context.Context, inst engine.Instance) error {
	db, err := myOpen(inst)
	if err != nil {
		return err
	}
	defer db.Close()
	g, gctx := errgroup.WithContext(ctx)
	for _, ix := range secondaryIndexes {
		q := fmt.Sprintf("ALTER TABLE %s ADD INDEX %s (%s)", ix.table, ix.name, ix.cols)
		g.Go(func() error {
			if _, err := db.ExecContext(gctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+strings.Join(Tables, ", ")); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}

// prepareRun installs the procedures (again, when a database is reused, so
// that they are always this version's).
func (myBackend) prepareRun(ctx context.Context, inst engine.Instance) error {
	return myInstall(ctx, inst, myProcedures)
}

// myInstall runs a procedure file's statements (separated by "//" lines).
func myInstall(ctx context.Context, inst engine.Instance, procedures string) error {
	conn, err := inst.DB().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, stmt := range strings.Split(procedures, "\n//\n") {
		if strings.TrimSpace(stripComments(stmt)) == "" {
			continue
		}
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("install the TPC-C procedures: %w", err)
		}
	}
	return nil
}

// stripComments drops whole-line SQL comments.
func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// newExecutor opens the session's own connection, whose sockets wait for
// the server as d chose: on a blocking socket or in Go's network poller.
func (myBackend) newExecutor(ctx context.Context, inst engine.Instance, d *sqlclient.Dialect) (executor, error) {
	conn, err := d.ConnectMySQL(ctx, inst.DSN())
	if err != nil {
		return nil, err
	}
	return &myExecutor{conn: conn}, nil
}

// sharesProcs: MariaDB's sessions share the Ps. With a P each (blocking
// sockets), dbio's CPU per New-Order was 1.1 to 2.2 times what it was with
// the Ps left at the CPUs' count and all sessions but the first in the
// network poller at 8 users, and 2.5 times at 64 (10 warehouses,
// alternating runs), with New-Orders no fewer beyond the runs' spread (at
// 64 users more): the scheduler takes several sessions' answers on one
// thread between two sleeps, where a thread a session sleeps and wakes for
// each.
func (myBackend) sharesProcs() bool { return true }

func (myBackend) notes() []string {
	return []string{
		"MariaDB transactions: one stored procedure per transaction (START TRANSACTION ... COMMIT inside, REPEATABLE READ with locking reads), called with CALL in one round trip; arguments are interpolated by the driver.",
		"MariaDB load: LOAD DATA LOCAL INFILE, one transaction per warehouse, into tables with their primary keys and no binary log on the loader's sessions; secondary indexes added after the load, then ANALYZE TABLE.",
	}
}

// myExecutor runs the five transactions through the procedures of sql/mysql.sql.
type myExecutor struct {
	conn  *sqlclient.MySQLConn
	lines []byte
	// vals receives a row's columns from the driver, reused.
	vals []driver.Value
}

func (e *myExecutor) close() error { return e.conn.Close() }

func myErrno(err error) uint16 {
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func (e *myExecutor) txError(tx string, err error) error {
	if myErrno(err) == myNoCustomer {
		return fmt.Errorf("%s: %w: %v", tx, errNoCustomer, err)
	}
	return fmt.Errorf("%s: %w", tx, err)
}

// call runs a procedure and reads the first row of its first result set
// into the executor's values, one per column.
func (e *myExecutor) call(ctx context.Context, query string, args ...any) (driver.Rows, []driver.Value, error) {
	rows, err := e.conn.Query(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	vals, err := e.next(rows)
	if err != nil {
		e.conn.Drop()
		if errors.Is(err, io.EOF) {
			err = errors.New("no result")
		}
		return nil, nil, err
	}
	return rows, vals, nil
}

// next reads the result set's next row; io.EOF after its last.
func (e *myExecutor) next(rows driver.Rows) ([]driver.Value, error) {
	n := len(rows.Columns())
	if cap(e.vals) < n {
		e.vals = make([]driver.Value, n)
	}
	vals := e.vals[:n]
	if err := rows.Next(vals); err != nil {
		return nil, err
	}
	return vals, nil
}

// Values as the driver hands them over: integers as int64, decimals and
// text as bytes (valid until the next row), dates as time.Time, NULL as nil.

func intValue(v driver.Value) (int, error) {
	switch v := v.(type) {
	case int64:
		return int(v), nil
	case []byte:
		n, err := strconv.ParseInt(string(v), 10, 64)
		return int(n), err
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("an integer column holds %T", v)
}

func floatValue(v driver.Value) (float64, error) {
	switch v := v.(type) {
	case float64:
		return v, nil
	case int64:
		return float64(v), nil
	case []byte:
		return strconv.ParseFloat(string(v), 64)
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("a number column holds %T", v)
}

func bytesValue(v driver.Value) []byte {
	b, _ := v.([]byte)
	return b
}

// lastName renders a selection's last name for a procedure: NULL when by id.
func lastNameArg(sel customerSel) any {
	if sel.byName {
		return sel.last
	}
	return nil
}

// newOrder implements clause 2.4.2 through tpcc_new_order.
func (e *myExecutor) newOrder(ctx context.Context, in *newOrderIn) error {
	sortForLocking(in.lines)
	e.lines = e.lines[:0]
	distinct := 1
	for i, l := range in.lines {
		e.lines = appendPadded(e.lines, l.itemID, 6)
		e.lines = appendPadded(e.lines, l.supplyWID, 6)
		e.lines = appendPadded(e.lines, l.quantity, 2)
		// Sorted lines put a repeated stock row next to its twin.
		if i > 0 && l.itemID == in.lines[i-1].itemID && l.supplyWID == in.lines[i-1].supplyWID {
			distinct = 0
		}
	}
	allLocal := 0
	if in.allLocal {
		allLocal = 1
	}
	_, vals, err := e.call(ctx, "CALL tpcc_new_order(?, ?, ?, ?, ?, ?, ?, ?)",
		in.wID, in.dID, in.cID, allLocal, in.entryD, len(in.lines), string(e.lines), distinct)
	if err != nil {
		if myErrno(err) == myRollback {
			return errRollback
		}
		return fmt.Errorf("new-order: %w", err)
	}
	if len(vals) != 5 {
		return fmt.Errorf("new-order: %d columns, want 5", len(vals))
	}
	// Columns: the order's id, its total, each line's amount (comma
	// separated), each line's brand-generic flag (a letter a line), and
	// what the terminal only displays.
	if in.oID, err = intValue(vals[0]); err == nil {
		in.total, err = floatValue(vals[1])
	}
	if err != nil {
		return fmt.Errorf("new-order: %w", err)
	}
	amounts, brand := bytesValue(vals[2]), bytesValue(vals[3])
	for i := range in.lines {
		var a []byte
		a, amounts, _ = bytes.Cut(amounts, []byte{','})
		in.lines[i].amount, _ = strconv.ParseFloat(string(a), 64)
		if i < len(brand) {
			in.lines[i].brandGenOK = brand[i] == 'B'
		}
	}
	return nil
}

// appendPadded writes n with leading zeros to width digits.
func appendPadded(b []byte, n, width int) []byte {
	var d [20]byte
	s := strconv.AppendInt(d[:0], int64(n), 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// payment implements clause 2.5.2 through tpcc_payment.
func (e *myExecutor) payment(ctx context.Context, in *paymentIn) error {
	_, vals, err := e.call(ctx, "CALL tpcc_payment(?, ?, ?, ?, ?, ?, ?, ?)",
		in.wID, in.dID, in.cWID, in.cDID, in.customer.cID, lastNameArg(in.customer), in.amount, in.date)
	if err != nil {
		return e.txError("payment", err)
	}
	if len(vals) != 5 {
		return fmt.Errorf("payment: %d columns, want 5", len(vals))
	}
	// Columns: the customer's id, credit, balance, the start of C_DATA for
	// a bad-credit customer (else NULL), and what the terminal only displays.
	if in.resolvedCID, err = intValue(vals[0]); err != nil {
		return fmt.Errorf("payment: %w", err)
	}
	in.badCreditHit = string(bytesValue(vals[1])) == "BC"
	return nil
}

// orderStatus implements clause 2.6.2 through tpcc_order_status: the
// customer and order first, then the order's lines as a second result set.
func (e *myExecutor) orderStatus(ctx context.Context, in *orderStatusIn) error {
	rows, vals, err := e.call(ctx, "CALL tpcc_order_status(?, ?, ?, ?)",
		in.wID, in.dID, in.customer.cID, lastNameArg(in.customer))
	if err != nil {
		return e.txError("order-status", err)
	}
	// Columns: the customer's id, balance, first, middle and last name, and
	// the last order's id, entry date and carrier (NULL when undelivered).
	if len(vals) != 8 {
		e.conn.Drop()
		return fmt.Errorf("order-status: %d columns, want 8", len(vals))
	}
	oID, err := intValue(vals[5])
	if err != nil {
		e.conn.Drop()
		return fmt.Errorf("order-status: %w", err)
	}
	in.oID, in.lines = oID, 0
	// NextResultSet reads past the first set's end, which HasNextResultSet
	// would have to have seen.
	more, ok := rows.(driver.RowsNextResultSet)
	if !ok {
		e.conn.Drop()
		return fmt.Errorf("order-status: the driver's rows (%T) have one result set", rows)
	}
	if err := more.NextResultSet(); err != nil {
		e.conn.Drop()
		if errors.Is(err, io.EOF) {
			return errors.New("order-status: no result set of order lines")
		}
		return e.txError("order-status", err)
	}
	// Each line: item, supplying warehouse, quantity, amount, delivery date.
	for {
		if _, err := e.next(rows); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			e.conn.Drop()
			return e.txError("order-status", err)
		}
		in.lines++
	}
}

// delivery implements clause 2.7.4 through tpcc_delivery.
func (e *myExecutor) delivery(ctx context.Context, in *deliveryIn) error {
	_, vals, err := e.call(ctx, "CALL tpcc_delivery(?, ?, ?)", in.wID, in.carrierID, in.date)
	if err == nil && len(vals) != 2 {
		err = fmt.Errorf("%d columns, want 2", len(vals))
	}
	if err == nil {
		in.delivered, err = intValue(vals[0])
	}
	if err == nil {
		in.skipped, err = intValue(vals[1])
	}
	if err != nil {
		return fmt.Errorf("delivery: %w", err)
	}
	return nil
}

// stockLevel implements clause 2.8.2 through tpcc_stock_level.
func (e *myExecutor) stockLevel(ctx context.Context, in *stockLevelIn) error {
	_, vals, err := e.call(ctx, "CALL tpcc_stock_level(?, ?, ?)", in.wID, in.dID, in.threshold)
	if err == nil && len(vals) != 1 {
		err = fmt.Errorf("%d columns, want 1", len(vals))
	}
	if err == nil {
		in.lowStock, err = intValue(vals[0])
	}
	if err != nil {
		return fmt.Errorf("stock-level: %w", err)
	}
	return nil
}
