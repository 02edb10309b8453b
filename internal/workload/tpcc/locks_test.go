package tpcc

import (
	"context"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/testenv"
)

// myLockWaitTimeout is MariaDB's error for a lock wait that outlived
// innodb_lock_wait_timeout.
const myLockWaitTimeout = 1205

// TestMariaDBLocking checks the procedures' locks on a warehouse of its
// own, one check after the other: the first needs no other transaction
// to hold a lock meanwhile.
func TestMariaDBLocking(t *testing.T) {
	testenv.RequireEngine(t, "mariadb")
	t.Parallel()
	w, inst := mariaServer.loaded(t, 1)
	t.Run("payment waits holding nothing", func(t *testing.T) { paymentWaitsHoldingNothing(t, w, inst) })
	t.Run("one warehouse has no deadlocks", func(t *testing.T) { oneWarehouseHasNoDeadlocks(t, w, inst) })
}

// paymentWaitsHoldingNothing holds a Payment at its customer's row (locked
// by another transaction, as a Delivery crediting that customer would) and
// runs a Payment of another customer in each district of the warehouse
// meanwhile, each giving up on a lock wait after a second. None may wait:
// a Payment that updated the warehouse and its district before its
// customer held both while it waited, and every Payment of the warehouse
// queued behind it. The count of Payments that timed out must be 0.
func paymentWaitsHoldingNothing(t *testing.T, w *Workload, inst engine.Instance) {
	ctx := context.Background()
	held := &paymentIn{wID: 1, dID: 4, cWID: 1, cDID: 4, customer: customerSel{cID: 11}, amount: 10, date: time.Now()}
	finish := heldAtCustomer(t, w, inst, 4, 11, func(e executor) error { return e.payment(ctx, held) })

	probe := probeSession(t, w, inst)
	var timedOut []int
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		err := probe.payment(ctx, &paymentIn{wID: 1, dID: d, cWID: 1, cDID: d, customer: customerSel{cID: 12}, amount: 10, date: time.Now()})
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
// releases the lock and returns tx's error.
func heldAtCustomer(t *testing.T, w *Workload, inst engine.Instance, d, c int, tx func(executor) error) (finish func() error) {
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
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	// It waits for the blocker as long as the test takes.
	if _, err := conn.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 3600"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tx(s.exec) }()
	for {
		var waiting int
		if err := inst.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'",
			id).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the transaction ended (%v) before it reached the locked customer", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return func() error {
		release()
		return <-done
	}
}

// probeSession is a session whose transactions give up on a lock wait
// after a second: the error, not the time, says whether one waited.
func probeSession(t *testing.T, w *Workload, inst engine.Instance) executor {
	t.Helper()
	s, _ := newTestSession(t, w, inst)
	if _, err := s.exec.(*myExecutor).conn.ExecContext(context.Background(), "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	return s.exec
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
