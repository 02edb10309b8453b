package tpcc

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"dbio/internal/workload/sqlclient"
)

// executor runs the five transactions for one virtual user. Each method runs
// exactly one database transaction and either commits it or rolls it back.
type executor interface {
	newOrder(ctx context.Context, in *newOrderIn) error
	payment(ctx context.Context, in *paymentIn) error
	orderStatus(ctx context.Context, in *orderStatusIn) error
	delivery(ctx context.Context, in *deliveryIn) error
	stockLevel(ctx context.Context, in *stockLevelIn) error
	close() error
}

// sqlExecutor runs the transactions as client-side SQL on one dedicated
// connection with statements prepared once per session.
//
// It talks to the driver beneath database/sql (through sql.Conn.Raw, for
// the length of one transaction): a statement through database/sql costs
// about fifteen allocations (its Rows and Row, the dependency bookkeeping,
// the converted arguments), and a TPC-C transaction here sends about
// thirty statements; straight to the driver, with the argument and row
// buffers reused, a statement costs a few.
type sqlExecutor struct {
	d    *sqlclient.Dialect
	conn *sql.Conn
	// dc is the driver's connection, set while a transaction runs.
	dc    driver.ConnPrepareContext
	stmts map[string]driver.Stmt
	// args and vals are reused for every statement's arguments and row.
	args []driver.NamedValue
	vals []driver.Value
	// stockQuery is the stock read of New-Order for each district, whose
	// s_dist_NN column it names.
	stockQuery [DistrictsPerWarehouse + 1]string
}

func newSQLExecutor(ctx context.Context, db *sql.DB, d *sqlclient.Dialect) (*sqlExecutor, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	e := &sqlExecutor{d: d, conn: conn, stmts: map[string]driver.Stmt{}}
	for dID := 1; dID <= DistrictsPerWarehouse; dID++ {
		e.stockQuery[dID] = fmt.Sprintf("SELECT s_quantity, s_data, s_dist_%02d FROM stock WHERE s_w_id = ? AND s_i_id = ?%s", dID, d.ForUpdate)
	}
	return e, nil
}

func (e *sqlExecutor) close() error {
	// The driver's statements belong to the connection: close them on it.
	e.conn.Raw(func(any) error {
		for _, s := range e.stmts {
			s.Close()
		}
		return nil
	})
	return e.conn.Close()
}

// stmt prepares q (written with ? placeholders) once per session.
func (e *sqlExecutor) stmt(ctx context.Context, q string) (driver.Stmt, error) {
	if s, ok := e.stmts[q]; ok {
		return s, nil
	}
	s, err := e.dc.PrepareContext(ctx, e.d.Bind(q))
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", q, err)
	}
	e.stmts[q] = s
	return s, nil
}

// bind turns args into the driver's values, in the reused buffer.
func (e *sqlExecutor) bind(args []any) ([]driver.NamedValue, error) {
	var err error
	e.args, err = sqlclient.DriverArgs(e.args[:0], args)
	return e.args, err
}

func (e *sqlExecutor) exec(ctx context.Context, q string, args ...any) (driver.Result, error) {
	s, err := e.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	named, err := e.bind(args)
	if err != nil {
		return nil, err
	}
	return s.(driver.StmtExecContext).ExecContext(ctx, named)
}

// each runs query q and calls row with the values of every row it returns.
func (e *sqlExecutor) each(ctx context.Context, q string, args []any, row func(vals []driver.Value) error) error {
	s, err := e.stmt(ctx, q)
	if err != nil {
		return err
	}
	named, err := e.bind(args)
	if err != nil {
		return err
	}
	rows, err := s.(driver.StmtQueryContext).QueryContext(ctx, named)
	if err != nil {
		return err
	}
	n := len(rows.Columns())
	if cap(e.vals) < n {
		e.vals = make([]driver.Value, n)
	}
	vals := e.vals[:n]
	for {
		if err := rows.Next(vals); err == io.EOF {
			break
		} else if err != nil {
			rows.Close()
			return err
		}
		if err := row(vals); err == errEnough {
			break
		} else if err != nil {
			rows.Close()
			return err
		}
	}
	return rows.Close()
}

// errEnough ends each's rows early, without error.
var errEnough = errors.New("enough rows")

// scanRow runs q and stores its first row's columns in dest, as
// sql.Row.Scan does; sql.ErrNoRows when there is none.
func (e *sqlExecutor) scanRow(ctx context.Context, q string, args []any, dest ...any) error {
	found := false
	err := e.each(ctx, q, args, func(vals []driver.Value) error {
		found = true
		if len(vals) != len(dest) {
			return fmt.Errorf("%d columns into %d destinations", len(vals), len(dest))
		}
		for i, v := range vals {
			if err := assign(dest[i], v); err != nil {
				return fmt.Errorf("column %d: %w", i+1, err)
			}
		}
		return errEnough
	})
	if err == nil && !found {
		return sql.ErrNoRows
	}
	return err
}

// assign stores a driver value in dest, converting between the numeric
// types and text as database/sql would for the destinations this file uses.
func assign(dest any, v driver.Value) error {
	switch d := dest.(type) {
	case *any:
		*d = v
		return nil
	case *string:
		switch v := v.(type) {
		case string:
			*d = v
			return nil
		case []byte:
			*d = string(v)
			return nil
		}
	case *float64:
		switch v := v.(type) {
		case float64:
			*d = v
			return nil
		case int64:
			*d = float64(v)
			return nil
		case string:
			f, err := strconv.ParseFloat(v, 64)
			*d = f
			return err
		case []byte:
			f, err := strconv.ParseFloat(string(v), 64)
			*d = f
			return err
		}
	case *int:
		switch v := v.(type) {
		case int64:
			*d = int(v)
			return nil
		case float64:
			if v == math.Trunc(v) {
				*d = int(v)
				return nil
			}
		}
	case sql.Scanner:
		return d.Scan(v)
	}
	return fmt.Errorf("cannot store %T in %T", v, dest)
}

// inTx runs body in one transaction: committed when body returns nil,
// rolled back otherwise (errRollback included).
func (e *sqlExecutor) inTx(ctx context.Context, write bool, body func() error) (err error) {
	begin := e.d.BeginRead
	if write {
		// SQLite takes its write lock up front with BEGIN IMMEDIATE, so a
		// writer never fails on upgrade, and its writers queue inside dbio.
		begin = e.d.BeginWrite
		defer e.d.LockWrites()()
	}
	return e.conn.Raw(func(dc any) error {
		prep, ok := dc.(driver.ConnPrepareContext)
		execer, ok2 := dc.(driver.ExecerContext)
		if !ok || !ok2 {
			return fmt.Errorf("driver connection %T cannot prepare and execute with a context", dc)
		}
		e.dc = prep
		defer func() { e.dc = nil }()
		if _, err := execer.ExecContext(ctx, begin, nil); err != nil {
			return err
		}
		if err := body(); err != nil {
			// Use a fresh context: a cancelled run must still release its locks.
			if _, rbErr := execer.ExecContext(context.WithoutCancel(ctx), "ROLLBACK", nil); rbErr != nil && !errors.Is(err, errRollback) {
				return fmt.Errorf("%w (and rollback failed: %v)", err, rbErr)
			}
			return err
		}
		_, err := execer.ExecContext(ctx, "COMMIT", nil)
		return err
	})
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// newOrder implements the New-Order transaction's profile (clause 2.4.2).
func (e *sqlExecutor) newOrder(ctx context.Context, in *newOrderIn) error {
	sortForLocking(in.lines)
	return e.inTx(ctx, true, func() error {
		var wTax, dTax, cDiscount float64
		var cLast, cCredit string
		var nextOID int
		if err := e.scanRow(ctx, "SELECT w_tax FROM warehouse WHERE w_id = ?", []any{in.wID}, &wTax); err != nil {
			return fmt.Errorf("warehouse: %w", err)
		}
		if err := e.scanRow(ctx, "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"+e.d.ForUpdate,
			[]any{in.wID, in.dID}, &dTax, &nextOID); err != nil {
			return fmt.Errorf("district: %w", err)
		}
		if _, err := e.exec(ctx, "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?", in.wID, in.dID); err != nil {
			return fmt.Errorf("district: %w", err)
		}
		if err := e.scanRow(ctx, "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
			[]any{in.wID, in.dID, in.cID}, &cDiscount, &cLast, &cCredit); err != nil {
			return fmt.Errorf("customer: %w", err)
		}
		in.oID = nextOID
		allLocal := 0
		if in.allLocal {
			allLocal = 1
		}
		if _, err := e.exec(ctx, "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
			nextOID, in.dID, in.wID, in.cID, in.entryD, len(in.lines), allLocal); err != nil {
			return fmt.Errorf("orders: %w", err)
		}
		if _, err := e.exec(ctx, "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)", nextOID, in.dID, in.wID); err != nil {
			return fmt.Errorf("new_order: %w", err)
		}
		var sum float64
		for i := range in.lines {
			l := &in.lines[i]
			var price float64
			var iName, iData string
			err := e.scanRow(ctx, "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?", []any{l.itemID}, &price, &iName, &iData)
			if errors.Is(err, sql.ErrNoRows) {
				return errRollback // 2.4.2.3: "Item number is not valid"
			}
			if err != nil {
				return fmt.Errorf("item: %w", err)
			}
			var sQty int
			var sData, distInfo string
			if err := e.scanRow(ctx, e.stockQuery[in.dID],
				[]any{l.supplyWID, l.itemID}, &sQty, &sData, &distInfo); err != nil {
				return fmt.Errorf("stock: %w", err)
			}
			// 2.4.2.2: restock by 91 when fewer than 10 would remain.
			if sQty >= l.quantity+10 {
				sQty -= l.quantity
			} else {
				sQty = sQty - l.quantity + 91
			}
			remote := 0
			if l.remote {
				remote = 1
			}
			if _, err := e.exec(ctx, "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?",
				sQty, l.quantity, remote, l.supplyWID, l.itemID); err != nil {
				return fmt.Errorf("stock: %w", err)
			}
			l.amount = round2(float64(l.quantity) * price)
			l.brandGenOK = strings.Contains(iData, original) && strings.Contains(sData, original)
			sum += l.amount
			if _, err := e.exec(ctx, "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
				nextOID, in.dID, in.wID, i+1, l.itemID, l.supplyWID, l.quantity, l.amount, distInfo); err != nil {
				return fmt.Errorf("order_line: %w", err)
			}
		}
		in.total = round2(sum * (1 - cDiscount) * (1 + wTax + dTax))
		return nil
	})
}

// findCustomer resolves a by-name selection to the customer at position
// ceil(n/2) of those with that last name, sorted by first name (2.5.2.2).
func (e *sqlExecutor) findCustomer(ctx context.Context, wID, dID int, sel customerSel) (int, error) {
	if !sel.byName {
		return sel.cID, nil
	}
	var ids []int
	err := e.each(ctx, "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first", []any{wID, dID, sel.last},
		func(vals []driver.Value) error {
			var id int
			if err := assign(&id, vals[0]); err != nil {
				return err
			}
			ids = append(ids, id)
			return nil
		})
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("%w %q in warehouse %d district %d", errNoCustomer, sel.last, wID, dID)
	}
	return ids[(len(ids)+1)/2-1], nil
}

// payment implements the Payment transaction's profile (clause 2.5.2).
func (e *sqlExecutor) payment(ctx context.Context, in *paymentIn) error {
	return e.inTx(ctx, true, func() error {
		if _, err := e.exec(ctx, "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?", in.amount, in.wID); err != nil {
			return fmt.Errorf("warehouse: %w", err)
		}
		var wName, wStreet1, wStreet2, wCity, wState, wZip string
		if err := e.scanRow(ctx, "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?",
			[]any{in.wID}, &wName, &wStreet1, &wStreet2, &wCity, &wState, &wZip); err != nil {
			return fmt.Errorf("warehouse: %w", err)
		}
		if _, err := e.exec(ctx, "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?", in.amount, in.wID, in.dID); err != nil {
			return fmt.Errorf("district: %w", err)
		}
		var dName, dStreet1, dStreet2, dCity, dState, dZip string
		if err := e.scanRow(ctx, "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?",
			[]any{in.wID, in.dID}, &dName, &dStreet1, &dStreet2, &dCity, &dState, &dZip); err != nil {
			return fmt.Errorf("district: %w", err)
		}
		cID, err := e.findCustomer(ctx, in.cWID, in.cDID, in.customer)
		if err != nil {
			return fmt.Errorf("customer: %w", err)
		}
		in.resolvedCID = cID
		var cFirst, cMiddle, cLast, cCredit, cData string
		var cBalance, cCreditLim, cDiscount float64
		if err := e.scanRow(ctx, "SELECT c_first, c_middle, c_last, c_credit, c_credit_lim, c_discount, c_balance, c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"+e.d.ForUpdate,
			[]any{in.cWID, in.cDID, cID}, &cFirst, &cMiddle, &cLast, &cCredit, &cCreditLim, &cDiscount, &cBalance, &cData); err != nil {
			return fmt.Errorf("customer: %w", err)
		}
		if cCredit == "BC" {
			// 2.5.2.2: prepend the payment's details to C_DATA, keeping 500 characters.
			in.badCreditHit = true
			entry := strconv.Itoa(cID) + " " + strconv.Itoa(in.cDID) + " " + strconv.Itoa(in.cWID) + " " +
				strconv.Itoa(in.dID) + " " + strconv.Itoa(in.wID) + " " + strconv.FormatFloat(in.amount, 'f', 2, 64) + " | "
			cData = entry + cData
			if len(cData) > 500 {
				cData = cData[:500]
			}
			if _, err := e.exec(ctx, "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
				in.amount, in.amount, cData, in.cWID, in.cDID, cID); err != nil {
				return fmt.Errorf("customer: %w", err)
			}
		} else if _, err := e.exec(ctx, "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
			in.amount, in.amount, in.cWID, in.cDID, cID); err != nil {
			return fmt.Errorf("customer: %w", err)
		}
		// 2.5.2.2: H_DATA is W_NAME and D_NAME separated by four spaces.
		if _, err := e.exec(ctx, "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			cID, in.cDID, in.cWID, in.dID, in.wID, in.date, in.amount, wName+"    "+dName); err != nil {
			return fmt.Errorf("history: %w", err)
		}
		return nil
	})
}

// orderStatus implements the Order-Status transaction's profile (clause 2.6.2).
func (e *sqlExecutor) orderStatus(ctx context.Context, in *orderStatusIn) error {
	return e.inTx(ctx, false, func() error {
		cID, err := e.findCustomer(ctx, in.wID, in.dID, in.customer)
		if err != nil {
			return fmt.Errorf("customer: %w", err)
		}
		var cBalance float64
		var cFirst, cMiddle, cLast string
		if err := e.scanRow(ctx, "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
			[]any{in.wID, in.dID, cID}, &cBalance, &cFirst, &cMiddle, &cLast); err != nil {
			return fmt.Errorf("customer: %w", err)
		}
		var carrier sql.NullInt64
		var entry any
		err = e.scanRow(ctx, "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
			[]any{in.wID, in.dID, cID}, &in.oID, &entry, &carrier)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // a customer without orders is possible only after manual changes; nothing to show
		}
		if err != nil {
			return fmt.Errorf("orders: %w", err)
		}
		in.lines = 0
		err = e.each(ctx, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
			[]any{in.wID, in.dID, in.oID}, func(vals []driver.Value) error {
				var iID, supply, qty int
				var amount float64
				var delivered any
				for i, dest := range []any{&iID, &supply, &qty, &amount, &delivered} {
					if err := assign(dest, vals[i]); err != nil {
						return err
					}
				}
				in.lines++
				return nil
			})
		if err != nil {
			return fmt.Errorf("order_line: %w", err)
		}
		return nil
	})
}

// delivery implements the Delivery transaction's profile (clause 2.7.4),
// all ten districts in one database transaction.
func (e *sqlExecutor) delivery(ctx context.Context, in *deliveryIn) error {
	in.delivered, in.skipped = 0, 0
	return e.inTx(ctx, true, func() error {
		for d := 1; d <= DistrictsPerWarehouse; d++ {
			var oID int
			err := e.scanRow(ctx, "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1"+e.d.ForUpdate,
				[]any{in.wID, d}, &oID)
			if errors.Is(err, sql.ErrNoRows) {
				in.skipped++ // 2.7.4.2: no outstanding order in this district
				continue
			}
			if err != nil {
				return fmt.Errorf("new_order: %w", err)
			}
			if _, err := e.exec(ctx, "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?", in.wID, d, oID); err != nil {
				return fmt.Errorf("new_order: %w", err)
			}
			var cID int
			if err := e.scanRow(ctx, "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", []any{in.wID, d, oID}, &cID); err != nil {
				return fmt.Errorf("orders: %w", err)
			}
			if _, err := e.exec(ctx, "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", in.carrierID, in.wID, d, oID); err != nil {
				return fmt.Errorf("orders: %w", err)
			}
			if _, err := e.exec(ctx, "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", in.date, in.wID, d, oID); err != nil {
				return fmt.Errorf("order_line: %w", err)
			}
			var total sql.NullFloat64
			if err := e.scanRow(ctx, "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", []any{in.wID, d, oID}, &total); err != nil {
				return fmt.Errorf("order_line: %w", err)
			}
			if _, err := e.exec(ctx, "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
				round2(total.Float64), in.wID, d, cID); err != nil {
				return fmt.Errorf("customer: %w", err)
			}
			in.delivered++
		}
		return nil
	})
}

// stockLevel implements the Stock-Level transaction's profile (clause 2.8.2).
func (e *sqlExecutor) stockLevel(ctx context.Context, in *stockLevelIn) error {
	return e.inTx(ctx, false, func() error {
		var next int
		if err := e.scanRow(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", []any{in.wID, in.dID}, &next); err != nil {
			return fmt.Errorf("district: %w", err)
		}
		// The last 20 orders of the district (2.8.2.2).
		if err := e.scanRow(ctx, "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id >= ? AND ol_o_id < ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
			[]any{in.wID, in.dID, next - 20, next, in.wID, in.threshold}, &in.lowStock); err != nil {
			return fmt.Errorf("stock: %w", err)
		}
		return nil
	})
}
