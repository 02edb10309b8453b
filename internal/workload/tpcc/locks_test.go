package tpcc

import (
	"context"
	"testing"
	"time"

	"dbio/internal/testenv"
)

// myLockWaitTimeout is MariaDB's error for a lock wait that outlived
// innodb_lock_wait_timeout.
const myLockWaitTimeout = 1205

// TestDeliveryLeavesNewOrdersUnblocked holds a Delivery in the middle of its
// transaction (at a customer row another transaction has locked, after it
// has taken every district's oldest NEW-ORDER row) and runs a New-Order in
// each district of the warehouse meanwhile, on a connection that gives up
// on any lock wait after a second. None may wait: a Delivery that locked
// the gap in front of a district's first NEW-ORDER row (a locking scan from
// the district's first key does) held up every New-Order of the district
// before it until its commit, and with them, through the district rows
// they hold, that district's Payments and the warehouse row: MariaDB's
// stalls. The count of New-Orders that timed out must be 0.
func TestDeliveryLeavesNewOrdersUnblocked(t *testing.T) {
	testenv.RequireEngine(t, "mariadb")
	t.Parallel()
	w, inst := mariaServer.loaded(t, 1)
	ctx := context.Background()
	db := inst.DB()

	// The customer of district 10's oldest undelivered order: the Delivery
	// updates the customers in district order, so it stops at this one
	// with all ten NEW-ORDER rows deleted and locked.
	var cID int
	if err := db.QueryRowContext(ctx, `SELECT o_c_id FROM orders JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
		WHERE o_w_id = 1 AND o_d_id = 10 ORDER BY o_id LIMIT 1`).Scan(&cID); err != nil {
		t.Fatal(err)
	}
	blocker, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close()
	if _, err := blocker.ExecContext(ctx, "START TRANSACTION"); err != nil {
		t.Fatal(err)
	}
	if _, err := blocker.ExecContext(ctx, "SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 10 AND c_id = ? FOR UPDATE", cID); err != nil {
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
	defer release()

	delivery, _ := newTestSession(t, w, inst)
	var deliveryConn int64
	deliveryDB := delivery.exec.(*myExecutor).conn
	if err := deliveryDB.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&deliveryConn); err != nil {
		t.Fatal(err)
	}
	// The Delivery waits for the blocker as long as the test takes.
	if _, err := deliveryDB.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 3600"); err != nil {
		t.Fatal(err)
	}
	in := &deliveryIn{wID: 1, carrierID: 7, date: time.Now()}
	done := make(chan error, 1)
	go func() { done <- delivery.exec.delivery(ctx, in) }()

	// The Delivery is in place once its transaction waits for the customer.
	for {
		var waiting int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'",
			deliveryConn).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the Delivery ended (%v) before it reached the locked customer", err)
		case <-time.After(10 * time.Millisecond):
		}
	}

	newOrder, _ := newTestSession(t, w, inst)
	if _, err := newOrder.exec.(*myExecutor).conn.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	var timedOut []int
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		err := newOrder.exec.newOrder(ctx, &newOrderIn{wID: 1, dID: d, cID: 1, allLocal: true, entryD: time.Now(),
			lines: []orderLine{{itemID: 100 + d, supplyWID: 1, quantity: 1}}})
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

	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if in.delivered != DistrictsPerWarehouse {
		t.Errorf("the Delivery delivered %d orders, want %d", in.delivered, DistrictsPerWarehouse)
	}
	mustBeConsistent(t, w, inst, "after the Delivery")
}
