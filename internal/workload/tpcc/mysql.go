package tpcc

import (
	"bytes"
	"context"
	"database/sql"
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
	var amounts, brand string
	err := e.conn.QueryRowContext(ctx, "CALL tpcc_new_order(?, ?, ?, ?, ?, ?, ?, ?)",
		in.wID, in.dID, in.cID, allLocal, in.entryD, len(in.lines), string(e.lines), distinct).
		Scan(&in.oID, &in.total, &amounts, &brand, displayed{})
	if err != nil {
		if myErrno(err) == myRollback {
			return errRollback
		}
		return fmt.Errorf("new-order: %w", err)
	}
	for i := range in.lines {
		var a string
		a, amounts, _ = strings.Cut(amounts, ",")
		in.lines[i].amount, _ = strconv.ParseFloat(a, 64)
		if i < len(brand) {
			in.lines[i].brandGenOK = brand[i] == 'B'
		}
	}
	return nil
}

// displayed receives a column the terminal would only display (names,
// addresses): the procedure reads it as the specification says, and the
// driver takes it off the wire without converting or keeping it.
type displayed struct{}

func (displayed) Scan(any) error { return nil }

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
	var credit string
	var balance float64
	var data sql.NullString
	err := e.conn.QueryRowContext(ctx, "CALL tpcc_payment(?, ?, ?, ?, ?, ?, ?, ?)",
		in.wID, in.dID, in.cWID, in.cDID, in.customer.cID, lastNameArg(in.customer), in.amount, in.date).
		Scan(&in.resolvedCID, &credit, &balance, &data, displayed{})
	if err != nil {
		return e.txError("payment", err)
	}
	in.badCreditHit = credit == "BC"
	return nil
}

// orderStatus implements clause 2.6.2 through tpcc_order_status: the
// customer and order first, then the order's lines as a second result set.
func (e *myExecutor) orderStatus(ctx context.Context, in *orderStatusIn) (err error) {
	rows, err := e.conn.QueryContext(ctx, "CALL tpcc_order_status(?, ?, ?, ?)",
		in.wID, in.dID, in.customer.cID, lastNameArg(in.customer))
	if err != nil {
		return e.txError("order-status", err)
	}
	defer func() {
		if cerr := rows.Close(); err == nil && cerr != nil {
			err = e.txError("order-status", cerr)
		}
	}()
	var (
		cID                  int
		balance              float64
		first, middle, lastN string
		oID, carrier         sql.NullInt64
		entry                sql.NullTime
	)
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return e.txError("order-status", err)
		}
		return errors.New("order-status: no result")
	}
	if err := rows.Scan(&cID, &balance, &first, &middle, &lastN, &oID, &entry, &carrier); err != nil {
		return fmt.Errorf("order-status: %w", err)
	}
	in.oID, in.lines = int(oID.Int64), 0
	if !rows.NextResultSet() {
		return e.txError("order-status", rows.Err())
	}
	for rows.Next() {
		var item, supply, qty int
		var amount float64
		var delivered sql.NullTime
		if err := rows.Scan(&item, &supply, &qty, &amount, &delivered); err != nil {
			return fmt.Errorf("order-status: %w", err)
		}
		in.lines++
	}
	if err := rows.Err(); err != nil {
		return e.txError("order-status", err)
	}
	return nil
}

// delivery implements clause 2.7.4 through tpcc_delivery.
func (e *myExecutor) delivery(ctx context.Context, in *deliveryIn) error {
	err := e.conn.QueryRowContext(ctx, "CALL tpcc_delivery(?, ?, ?)", in.wID, in.carrierID, in.date).
		Scan(&in.delivered, &in.skipped)
	if err != nil {
		return fmt.Errorf("delivery: %w", err)
	}
	return nil
}

// stockLevel implements clause 2.8.2 through tpcc_stock_level.
func (e *myExecutor) stockLevel(ctx context.Context, in *stockLevelIn) error {
	err := e.conn.QueryRowContext(ctx, "CALL tpcc_stock_level(?, ?, ?)", in.wID, in.dID, in.threshold).Scan(&in.lowStock)
	if err != nil {
		return fmt.Errorf("stock-level: %w", err)
	}
	return nil
}
