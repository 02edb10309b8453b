package tpcc

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/testenv"
	"dbio/internal/workload/sqlclient"
)

// myLockWaitTimeout is MariaDB's error for a lock wait that outlived
// innodb_lock_wait_timeout.
const myLockWaitTimeout = 1205

// heldWaitLimit bounds every wait of these checks on another transaction:
// reaching a locked row, ending once it is released, a probe's one-second
// lock wait. Each takes milliseconds on a quiet machine and seconds on a
// loaded one; past the limit the check fails with what InnoDB says the
// transaction is doing, instead of hanging the package.
const heldWaitLimit = time.Minute

// TestMariaDBLocking checks the procedures' locks, and Delivery's skipping
// of a district without an undelivered order, on a warehouse of its own on
// a server of its own, one check after the other: the first needs no other
// transaction to hold a lock meanwhile.
func TestMariaDBLocking(t *testing.T) {
	testenv.RequireEngine(t, "mariadb")
	t.Parallel()
	w, inst := mariaLockServer.loaded(t, 1)
	t.Run("delivery leaves new orders unblocked", func(t *testing.T) { deliveryLeavesNewOrdersUnblocked(t, w, inst) })
	t.Run("delivery skips a district without new orders", func(t *testing.T) { deliverySkipsEmptyDistrict(t, w, inst) })
	t.Run("payment waits holding nothing", func(t *testing.T) { paymentWaitsHoldingNothing(t, w, inst) })
	t.Run("one warehouse has no deadlocks", func(t *testing.T) { oneWarehouseHasNoDeadlocks(t, w, inst) })
}

// deliveryLeavesNewOrdersUnblocked holds a Delivery in the middle of its
// transaction (at a customer row another transaction has locked, after it
// has taken every district's oldest NEW-ORDER row) and runs a New-Order in
// each district of the warehouse meanwhile, on a connection that gives up
// on any lock wait after a second. None may wait: a Delivery that locked
// the gap in front of a district's first NEW-ORDER row (a locking scan from
// the district's first key does) held up every New-Order of the district
// before it until its commit, and with them, through the district rows
// they hold, that district's Payments and the warehouse row: MariaDB's
// stalls. The count of New-Orders that timed out must be 0. The Delivery
// must also wait for the customer rather than run on: one that updated its
// orders and customers in one multi-table UPDATE was seen running for
// minutes at the locked customer, and then heldAtCustomer fails.
func deliveryLeavesNewOrdersUnblocked(t *testing.T, w *Workload, inst engine.Instance) {
	// The customer of district 10's oldest undelivered order: the Delivery
	// takes the districts in order, so it stops at this one with all ten
	// NEW-ORDER rows deleted and locked.
	var cID int
	if err := inst.DB().QueryRowContext(context.Background(), `SELECT o_c_id FROM orders JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
		WHERE o_w_id = 1 AND o_d_id = 10 ORDER BY o_id LIMIT 1`).Scan(&cID); err != nil {
		t.Fatal(err)
	}
	in := &deliveryIn{wID: 1, carrierID: 7, date: time.Now()}
	finish := heldAtCustomer(t, w, inst, 10, cID, func(ctx context.Context, e executor) error { return e.delivery(ctx, in) })

	probe := probeSession(t, w, inst)
	var timedOut []int
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		err := probe.run(t, func(ctx context.Context, e executor) error {
			return e.newOrder(ctx, &newOrderIn{wID: 1, dID: d, cID: 1, allLocal: true, entryD: time.Now(),
				lines: []orderLine{{itemID: 100 + d, supplyWID: 1, quantity: 1}}})
		})
		switch {
		case myErrno(err) == myLockWaitTimeout:
			timedOut = append(timedOut, d)
		case err != nil:
			t.Fatalf("New-Order in district %d: %v", d, err)
		}
	}
	if len(timedOut) > 0 {
		t.Errorf("%d of %d New-Orders waited for the Delivery's locks (districts %v), want 0", len(timedOut), DistrictsPerWarehouse, timedOut)
	}
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	if in.delivered != DistrictsPerWarehouse {
		t.Errorf("the Delivery delivered %d orders, want %d", in.delivered, DistrictsPerWarehouse)
	}
	mustBeConsistent(t, w, inst, "after the Delivery")
}

// deliverySkipsEmptyDistrict delivers every undelivered order of district
// 5 by hand (what Deliveries would have done: carrier, lines' delivery
// date, customers' balance and delivery count, NEW-ORDER rows deleted),
// then runs a Delivery: 2.7.4.2 has it skip that district and deliver the
// other nine, and the database stays consistent.
func deliverySkipsEmptyDistrict(t *testing.T, w *Workload, inst engine.Instance) {
	q := sqlOn{t, testEngine{name: "mariadb"}, inst}
	for _, stmt := range []string{
		`UPDATE customer SET
			c_balance = c_balance + (SELECT IFNULL(SUM(ol_amount), 0) FROM new_order
				JOIN orders ON o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
				JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
				WHERE no_w_id = 1 AND no_d_id = 5 AND o_c_id = c_id),
			c_delivery_cnt = c_delivery_cnt + (SELECT COUNT(*) FROM new_order
				JOIN orders ON o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
				WHERE no_w_id = 1 AND no_d_id = 5 AND o_c_id = c_id)
			WHERE c_w_id = 1 AND c_d_id = 5`,
		`UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = 1 AND ol_d_id = 5
			AND ol_o_id IN (SELECT no_o_id FROM new_order WHERE no_w_id = 1 AND no_d_id = 5)`,
		`UPDATE orders SET o_carrier_id = 3 WHERE o_w_id = 1 AND o_d_id = 5
			AND o_id IN (SELECT no_o_id FROM new_order WHERE no_w_id = 1 AND no_d_id = 5)`,
		`DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 5`,
	} {
		q.exec(stmt)
	}
	mustBeConsistent(t, w, inst, "after district 5 was delivered by hand")
	before := q.int("SELECT COUNT(*) FROM new_order WHERE no_w_id = 1")
	const carrier4 = "SELECT COUNT(*) FROM orders WHERE o_w_id = 1 AND o_d_id = 5 AND o_carrier_id = 4"
	carrier4Before := q.int(carrier4)
	s, _ := newTestSession(t, w, inst)
	in := &deliveryIn{wID: 1, carrierID: 4, date: time.Now()}
	if err := s.exec.delivery(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if in.delivered != DistrictsPerWarehouse-1 || in.skipped != 1 {
		t.Errorf("delivered %d districts, skipped %d; want %d and 1", in.delivered, in.skipped, DistrictsPerWarehouse-1)
	}
	if got := q.int("SELECT COUNT(*) FROM new_order WHERE no_w_id = 1"); got != before-(DistrictsPerWarehouse-1) {
		t.Errorf("%d NEW-ORDER rows left, want %d", got, before-(DistrictsPerWarehouse-1))
	}
	if got := q.int(carrier4); got != carrier4Before {
		t.Errorf("%d orders of district 5 have the Delivery's carrier, %d had it before: the Delivery changed the district it should skip", got, carrier4Before)
	}
	mustBeConsistent(t, w, inst, "after the Delivery")
}

// paymentWaitsHoldingNothing holds a Payment at its customer's row (locked
// by another transaction, as a Delivery crediting that customer would) and
// runs a Payment of another customer in each district of the warehouse
// meanwhile, each giving up on a lock wait after a second. None may wait:
// a Payment that updated the warehouse and its district before its
// customer held both while it waited, and every Payment of the warehouse
// queued behind it. The count of Payments that timed out must be 0.
func paymentWaitsHoldingNothing(t *testing.T, w *Workload, inst engine.Instance) {
	held := &paymentIn{wID: 1, dID: 4, cWID: 1, cDID: 4, customer: customerSel{cID: 11}, amount: 10, date: time.Now()}
	finish := heldAtCustomer(t, w, inst, 4, 11, func(ctx context.Context, e executor) error { return e.payment(ctx, held) })

	probe := probeSession(t, w, inst)
	var timedOut []int
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		err := probe.run(t, func(ctx context.Context, e executor) error {
			return e.payment(ctx, &paymentIn{wID: 1, dID: d, cWID: 1, cDID: d, customer: customerSel{cID: 12}, amount: 10, date: time.Now()})
		})
		switch {
		case myErrno(err) == myLockWaitTimeout:
			timedOut = append(timedOut, d)
		case err != nil:
			t.Fatalf("Payment in district %d: %v", d, err)
		}
	}
	if len(timedOut) > 0 {
		t.Errorf("%d of %d Payments waited for a Payment waiting on its customer (districts %v), want 0", len(timedOut), DistrictsPerWarehouse, timedOut)
	}
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	mustBeConsistent(t, w, inst, "after the Payments")
}

// heldAtCustomer locks customer (1, d, c) on a connection of its own, runs
// tx on a session of its own until it waits for that lock (a wait MariaDB
// lists in information_schema.innodb_trx), and returns the function that
// releases the lock and returns tx's error. Each wait is bounded by
// heldWaitLimit: past it the test fails with the transaction's state and
// its connection is killed, so that nothing is left running.
func heldAtCustomer(t *testing.T, w *Workload, inst engine.Instance, d, c int, tx func(context.Context, executor) error) (finish func() error) {
	t.Helper()
	ctx := context.Background()
	blocker, err := inst.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blocker.Close() })
	if _, err := blocker.ExecContext(ctx, "START TRANSACTION"); err != nil {
		t.Fatal(err)
	}
	if _, err := blocker.ExecContext(ctx, "SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = ? AND c_id = ? FOR UPDATE", d, c); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			if _, err := blocker.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(release)

	s, _ := newTestSession(t, w, inst)
	conn := s.exec.(*myExecutor).conn
	id := connectionID(t, conn)
	// It waits for the blocker as long as the test takes.
	if err := conn.Exec(ctx, "SET SESSION innodb_lock_wait_timeout = 3600"); err != nil {
		t.Fatal(err)
	}
	// The transaction runs without a deadline of its own: at the limit
	// the test kills its connection on the server, which ends it.
	done := make(chan error, 1)
	go func() { done <- tx(ctx, s.exec) }()
	giveUp := func(what string) {
		t.Helper()
		state := describeTrx(inst.DB(), id)
		killConnection(t, inst.DB(), id)
		release()
		t.Fatalf("%s within %v; the transaction: %s", what, heldWaitLimit, state)
	}
	deadline := time.After(heldWaitLimit)
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for waiting := false; !waiting; {
		select {
		case err := <-done:
			t.Fatalf("the transaction ended (%v) before it reached the locked customer", err)
		case <-deadline:
			giveUp("the transaction did not wait for the locked customer (1, " + fmt.Sprint(d) + ", " + fmt.Sprint(c) + ")")
		case <-poll.C:
			qctx, cancel := context.WithTimeout(ctx, heldWaitLimit)
			var n int
			err := inst.DB().QueryRowContext(qctx, "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'",
				id).Scan(&n)
			cancel()
			if err != nil {
				giveUp("innodb_trx could not be read (" + err.Error() + ")")
			}
			waiting = n > 0
		}
	}
	return func() error {
		release()
		select {
		case err := <-done:
			return err
		case <-time.After(heldWaitLimit):
			giveUp("the transaction did not end after the customer was released")
			return nil
		}
	}
}

// describeTrx says what the server reports of connection id: its
// InnoDB transaction's state (LOCK WAIT or RUNNING, none before it has
// touched a table), what it is doing, its locks and rows, and the thread's
// state, time and statement, which name a wait InnoDB does not list (a
// metadata lock, for one).
func describeTrx(db *sql.DB, id int64) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var threadState, query string
	var seconds int64
	var state, op, started sql.NullString
	var locked, modified, structs sql.NullInt64
	err := db.QueryRowContext(ctx, `SELECT IFNULL(p.state, ''), p.time, IFNULL(p.info, ''), t.trx_state, t.trx_operation_state,
			t.trx_started, t.trx_rows_locked, t.trx_rows_modified, t.trx_lock_structs
		FROM information_schema.processlist p LEFT JOIN information_schema.innodb_trx t ON t.trx_mysql_thread_id = p.id
		WHERE p.id = ?`, id).
		Scan(&threadState, &seconds, &query, &state, &op, &started, &locked, &modified, &structs)
	if err != nil {
		return fmt.Sprintf("connection %d: processlist not read: %v", id, err)
	}
	trx := "no InnoDB transaction"
	if state.Valid {
		trx = fmt.Sprintf("trx_state %s, operation %q, started %s, %d rows locked, %d modified, %d lock structs",
			state.String, op.String, started.String, locked.Int64, modified.Int64, structs.Int64)
	}
	return fmt.Sprintf("connection %d: %s; thread state %q for %d s in %q", id, trx, threadState, seconds, query)
}

// killConnection ends a connection on the server, and with it any
// statement it runs.
func killConnection(t *testing.T, db *sql.DB, id int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, fmt.Sprintf("KILL %d", id)); err != nil {
		t.Errorf("kill connection %d: %v", id, err)
	}
}

// probe is a session whose transactions give up on a lock wait after a
// second: the error, not the time, says whether one waited.
type probe struct {
	exec executor
	db   *sql.DB
	id   int64
}

func probeSession(t *testing.T, w *Workload, inst engine.Instance) *probe {
	t.Helper()
	s, _ := newTestSession(t, w, inst)
	conn := s.exec.(*myExecutor).conn
	p := &probe{exec: s.exec, db: inst.DB()}
	p.id = connectionID(t, conn)
	if err := conn.Exec(context.Background(), "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs tx and returns its error; a transaction that has not ended by
// heldWaitLimit (its lock waits end after a second) fails the test with its
// state, and its connection is killed.
func (p *probe) run(t *testing.T, tx func(context.Context, executor) error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- tx(context.Background(), p.exec) }()
	select {
	case err := <-done:
		return err
	case <-time.After(heldWaitLimit):
		state := describeTrx(p.db, p.id)
		killConnection(t, p.db, p.id)
		t.Fatalf("a probe's transaction did not end within %v; %s", heldWaitLimit, state)
		return nil
	}
}

// oneWarehouseHasNoDeadlocks runs the standard mix with 16 users on one
// warehouse, where every Payment updates the same warehouse row and every
// Delivery the same ten districts' oldest orders, and counts the
// transactions MariaDB rolled back on a deadlock or a lock wait timeout
// (each one retried and counted by the session): the procedures take the
// rows they lock in one order (a Payment its customer, then its district,
// then the warehouse; a New-Order its district, then its stock rows in key
// order; a Delivery its districts' orders and customers in district
// order), so the count must be 0.
func oneWarehouseHasNoDeadlocks(t *testing.T, w *Workload, inst engine.Instance) {
	col := metrics.NewCollector(w.TxTypes())
	const users, perUser = 16, 100
	runUsers(context.Background(), t, w, inst, users, col, func(ran int) bool { return ran < perUser })()
	col.Tick()
	var done int64
	for i, c := range col.StepTotals() {
		if c.Retries != 0 || c.Failed != 0 {
			t.Errorf("%s: %d retried after a deadlock or lock wait timeout, %d failed, of %d", txNames[i], c.Retries, c.Failed, c.Completed())
		}
		done += c.Completed()
	}
	if done != users*perUser {
		t.Errorf("%d transactions recorded, want %d", done, users*perUser)
	}
	mustBeConsistent(t, w, inst, "after the run")
}

// connectionID is the server's id of a session's connection.
func connectionID(t *testing.T, conn *sqlclient.MySQLConn) int64 {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT CONNECTION_ID()")
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]driver.Value, 1)
	if err := rows.Next(vals); err != nil {
		t.Fatal(err)
	}
	id, ok := vals[0].(int64)
	if !ok {
		t.Fatalf("CONNECTION_ID() came back as %T", vals[0])
	}
	return id
}
