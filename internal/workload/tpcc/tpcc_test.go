package tpcc

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/metrics"
	"dbio/internal/target"
)

func TestNURandFormula(t *testing.T) {
	tests := []struct {
		a, x, y, c, ra, rxy, want int
	}{
		{255, 0, 999, 0, 0, 0, 0},
		{255, 0, 999, 123, 0, 0, 123},
		{255, 0, 999, 0, 255, 3, 255},
		{1023, 1, 3000, 7, 1023, 3000, ((1023|3000)+7)%3000 + 1},
		{8191, 1, 100000, 0, 8191, 100000, ((8191 | 100000) % 100000) + 1},
	}
	for _, tt := range tests {
		if got := NURand(tt.a, tt.x, tt.y, tt.c, tt.ra, tt.rxy); got != tt.want {
			t.Errorf("NURand(%d,%d,%d,C=%d,%d,%d) = %d, want %d", tt.a, tt.x, tt.y, tt.c, tt.ra, tt.rxy, got, tt.want)
		}
	}
}

func TestNURandRangeAndSkew(t *testing.T) {
	r := newRnd(1, 2, Constants{CLast: 100, CID: 200, OLIID: 3000})
	counts := make([]int, 3001)
	for range 300000 {
		v := r.nurand(1023, 1, 3000)
		if v < 1 || v > 3000 {
			t.Fatalf("NURand(1023,1,3000) = %d, out of range", v)
		}
		counts[v]++
	}
	// Non-uniform: the most popular customer is drawn far more often than the
	// uniform expectation of 100.
	maxCount := 0
	for _, c := range counts {
		maxCount = max(maxCount, c)
	}
	if maxCount < 300 {
		t.Errorf("NURand looks uniform: most frequent value drawn %d times of 300000", maxCount)
	}
}

func TestLastName(t *testing.T) {
	tests := map[int]string{0: "BARBARBAR", 371: "PRICALLYOUGHT", 999: "EINGEINGEING", 40: "BARPRESBAR"}
	for n, want := range tests {
		if got := LastName(n); got != want {
			t.Errorf("LastName(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestRunConstants(t *testing.T) {
	for seed := range uint64(200) {
		load := NewLoadConstants(rand.New(rand.NewPCG(seed, 1)))
		run := RunConstants(load, rand.New(rand.NewPCG(seed, 2)))
		if !run.ValidRunFor(load) {
			t.Fatalf("seed %d: run constants %+v invalid for load %+v", seed, run, load)
		}
		d := run.CLast - load.CLast
		if d < 0 {
			d = -d
		}
		if d < 65 || d > 119 || d == 96 || d == 112 {
			t.Fatalf("seed %d: |C_run - C_load| = %d violates 2.1.6.1", seed, d)
		}
	}
}

func TestMixDeck(t *testing.T) {
	want := [numTxTypes]int{45, 43, 4, 4, 4}
	var got [numTxTypes]int
	for _, c := range mixDeck {
		got[c]++
	}
	if got != want {
		t.Fatalf("deck = %v, want %v", got, want)
	}
	// Over any whole number of decks a session draws exactly the mix.
	s := &session{r: newRnd(3, 4, Constants{})}
	var drawn [numTxTypes]int
	for range 1000 {
		drawn[s.nextType()]++
	}
	if drawn != [numTxTypes]int{450, 430, 40, 40, 40} {
		t.Fatalf("1000 draws = %v, want 450/430/40/40/40", drawn)
	}
}

func TestInputRules(t *testing.T) {
	w := New(Config{Warehouses: 4, Seed: 9})
	w.setConstants(Constants{CLast: 10, CID: 20, OLIID: 30})
	s := &session{w: w, r: newRnd(5, 6, w.run), wID: 2, nowFunc: time.Now}
	const n = 20000
	var rollbacks, remoteLines, lines, remotePay, byName int
	for range n {
		in := s.newOrderInput(time.Now())
		if len(in.lines) < 5 || len(in.lines) > 15 {
			t.Fatalf("order with %d lines", len(in.lines))
		}
		for i, l := range in.lines {
			lines++
			if l.itemID > Items {
				if i != len(in.lines)-1 {
					t.Fatal("unused item not last")
				}
				rollbacks++
			}
			if l.remote {
				remoteLines++
				if l.supplyWID == s.wID {
					t.Fatal("remote line supplied by home warehouse")
				}
			}
		}
		p := s.paymentInput(time.Now())
		if p.cWID != p.wID {
			remotePay++
		}
		if p.customer.byName {
			byName++
		}
		if p.amount < 1 || p.amount > 5000 {
			t.Fatalf("payment amount %v", p.amount)
		}
	}
	within := func(name string, got, total int, want, tol float64) {
		t.Helper()
		if f := float64(got) / float64(total); f < want-tol || f > want+tol {
			t.Errorf("%s = %.4f, want %.3f ± %.3f", name, f, want, tol)
		}
	}
	within("rolled-back New-Orders", rollbacks, n, 0.01, 0.003)
	within("remote order lines", remoteLines, lines, 0.01, 0.002)
	within("remote payments", remotePay, n, 0.15, 0.01)
	within("payments by last name", byName, n, 0.60, 0.015)
}

// openSQLite starts a SQLite instance in a temporary target.
func openSQLite(t testing.TB) engine.Instance {
	t.Helper()
	tg, err := target.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inst, err := sqlite.Engine{}.Start(context.Background(), engine.Placement{Data: tg}, engine.Options{Database: "tpcc", Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Stop(context.Background()) })
	return inst
}

// templates hold one loaded database per warehouse count; each test gets a
// copy, so the suite loads W=1 and W=2 once each.
var templates sync.Map // warehouses -> func() (string, error)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dbio-tpcc-templates-")
	if err != nil {
		panic(err)
	}
	templateRoot = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var templateRoot string

func template(warehouses int) (string, error) {
	f, _ := templates.LoadOrStore(warehouses, sync.OnceValues(func() (string, error) {
		tg, err := target.Open(filepath.Join(templateRoot, fmt.Sprint(warehouses)))
		if err != nil {
			return "", err
		}
		inst, err := sqlite.Engine{}.Start(context.Background(), engine.Placement{Data: tg}, engine.Options{Database: "tpcc", Fresh: true})
		if err != nil {
			return "", err
		}
		w := New(Config{Warehouses: warehouses, Seed: 1})
		if _, err := w.Prepare(context.Background(), inst, io.Discard); err != nil {
			return "", err
		}
		if _, err := inst.DB().Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return "", err
		}
		return inst.(*sqlite.Instance).Path(), inst.Stop(context.Background())
	}))
	return f.(func() (string, error))()
}

// loadedSQLite gives the test its own copy of a database loaded with the given warehouses.
func loadedSQLite(t *testing.T, warehouses int) (*Workload, engine.Instance) {
	t.Helper()
	src, err := template(warehouses)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir, err := tg.Sub("sqlite")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tpcc.db"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	inst, err := sqlite.Engine{}.Start(context.Background(), engine.Placement{Data: tg}, engine.Options{Database: "tpcc"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Stop(context.Background()) })
	w := New(Config{Warehouses: warehouses, Seed: 1, Reuse: true})
	st, err := w.Prepare(context.Background(), inst, io.Discard)
	if err != nil || !st.Reused {
		t.Fatalf("reuse template: %+v %v", st, err)
	}
	return w, inst
}

func count(t *testing.T, inst engine.Instance, q string, args ...any) int {
	t.Helper()
	var n int
	if err := inst.DB().QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestLoaderRowCounts(t *testing.T) {
	for _, W := range []int{1, 2} {
		t.Run(strings.Repeat("W", W), func(t *testing.T) {
			inst := openSQLite(t)
			w := New(Config{Warehouses: W, Seed: 1})
			st, err := w.Prepare(context.Background(), inst, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{
				"item":      Items,
				"warehouse": W,
				"stock":     W * StockPerWarehouse,
				"district":  W * DistrictsPerWarehouse,
				"customer":  W * DistrictsPerWarehouse * CustomersPerDistrict,
				"history":   W * DistrictsPerWarehouse * CustomersPerDistrict,
				"orders":    W * DistrictsPerWarehouse * OrdersPerDistrict,
				"new_order": W * DistrictsPerWarehouse * NewOrdersPerDistrict,
			}
			for table, n := range want {
				if got := count(t, inst, "SELECT COUNT(*) FROM "+table); got != n {
					t.Errorf("%s: %d rows, want %d", table, got, n)
				}
			}
			// 5 to 15 lines per order, and as many as the orders say.
			lines := count(t, inst, "SELECT COUNT(*) FROM order_line")
			if lines < 5*want["orders"] || lines > 15*want["orders"] {
				t.Errorf("order_line: %d rows for %d orders", lines, want["orders"])
			}
			if sum := count(t, inst, "SELECT SUM(o_ol_cnt) FROM orders"); sum != lines {
				t.Errorf("sum(o_ol_cnt) = %d, order lines %d", sum, lines)
			}
			// About 10 % of item and stock data carry "ORIGINAL" (4.3.3.1).
			orig := count(t, inst, "SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'")
			if orig < 9000 || orig > 11000 {
				t.Errorf("items with ORIGINAL: %d of 100000", orig)
			}
			bc := count(t, inst, "SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'")
			if total := want["customer"]; bc < total/12 || bc > total/8 {
				t.Errorf("bad-credit customers: %d of %d", bc, total)
			}
			// The first 1,000 customers of a district take the 1,000 names in order.
			if n := count(t, inst, "SELECT COUNT(DISTINCT c_last) FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id <= 1000"); n != 1000 {
				t.Errorf("distinct last names among first 1000 customers: %d", n)
			}
			if n := count(t, inst, "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL"); n != want["new_order"] {
				t.Errorf("undelivered orders: %d, want %d", n, want["new_order"])
			}
			var total int64
			for _, table := range Tables {
				total += int64(count(t, inst, "SELECT COUNT(*) FROM "+table))
			}
			if st.Rows != total || st.Scale != W {
				t.Errorf("load stats %+v, want %d rows at scale %d", st, total, W)
			}
			checks, err := w.Check(context.Background(), inst)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range checks {
				if !c.Passed {
					t.Errorf("consistency %s failed after load: %s", c.Name, c.Detail)
				}
			}
		})
	}
}

func TestReuseKeepsData(t *testing.T) {
	w, inst := loadedSQLite(t, 1)
	if _, err := inst.DB().Exec("UPDATE warehouse SET w_name = 'kept'"); err != nil {
		t.Fatal(err)
	}
	w2 := New(Config{Warehouses: 1, Seed: 1, Reuse: true})
	st, err := w2.Prepare(context.Background(), inst, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Reused || w2.run != w.run {
		t.Fatalf("reuse: stats %+v, constants %+v vs %+v", st, w2.run, w.run)
	}
	if n := count(t, inst, "SELECT COUNT(*) FROM warehouse WHERE w_name = 'kept'"); n != 1 {
		t.Fatal("reuse reloaded the data")
	}
}

// newTestSession opens a session on user 0 (warehouse 1) with its own collector.
func newTestSession(t *testing.T, w *Workload, inst engine.Instance) (*session, *metrics.Collector) {
	t.Helper()
	col := metrics.NewCollector(w.TxTypes())
	s, err := w.NewSession(context.Background(), inst, 0, col.NewRecorder())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*session), col
}

func TestTransactionEffects(t *testing.T) {
	w, inst := loadedSQLite(t, 2)
	s, _ := newTestSession(t, w, inst)
	ctx := context.Background()
	db := inst.DB()
	exec := s.exec

	t.Run("new_order", func(t *testing.T) {
		next := count(t, inst, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 3")
		stockBefore := count(t, inst, "SELECT s_quantity FROM stock WHERE s_w_id = 2 AND s_i_id = 77")
		remoteBefore := count(t, inst, "SELECT s_remote_cnt FROM stock WHERE s_w_id = 2 AND s_i_id = 77")
		in := &newOrderIn{wID: 1, dID: 3, cID: 42, entryD: time.Now(), lines: []orderLine{
			{itemID: 10, supplyWID: 1, quantity: 4},
			{itemID: 77, supplyWID: 2, quantity: 3, remote: true},
		}}
		if err := exec.newOrder(ctx, in); err != nil {
			t.Fatal(err)
		}
		if in.oID != next {
			t.Errorf("order id %d, want D_NEXT_O_ID %d", in.oID, next)
		}
		if got := count(t, inst, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 3"); got != next+1 {
			t.Errorf("d_next_o_id = %d, want %d", got, next+1)
		}
		if got := count(t, inst, "SELECT COUNT(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id = ?", next); got != 2 {
			t.Errorf("order lines = %d, want 2", got)
		}
		if got := count(t, inst, "SELECT o_all_local FROM orders WHERE o_w_id = 1 AND o_d_id = 3 AND o_id = ?", next); got != 0 {
			t.Errorf("o_all_local = %d, want 0 with a remote line", got)
		}
		if got := count(t, inst, "SELECT COUNT(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = 3 AND no_o_id = ?", next); got != 1 {
			t.Error("no NEW-ORDER row")
		}
		want := stockBefore - 3
		if stockBefore < 3+10 {
			want = stockBefore - 3 + 91
		}
		if got := count(t, inst, "SELECT s_quantity FROM stock WHERE s_w_id = 2 AND s_i_id = 77"); got != want {
			t.Errorf("s_quantity = %d, want %d", got, want)
		}
		if got := count(t, inst, "SELECT s_remote_cnt FROM stock WHERE s_w_id = 2 AND s_i_id = 77"); got != remoteBefore+1 {
			t.Errorf("s_remote_cnt = %d, want %d", got, remoteBefore+1)
		}
		if in.total <= 0 {
			t.Errorf("total %v", in.total)
		}
	})

	t.Run("new_order rollback", func(t *testing.T) {
		next := count(t, inst, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4")
		in := &newOrderIn{wID: 1, dID: 4, cID: 1, entryD: time.Now(), allLocal: true, lines: []orderLine{
			{itemID: Items + 1, supplyWID: 1, quantity: 1}, {itemID: 5, supplyWID: 1, quantity: 1},
		}}
		if err := exec.newOrder(ctx, in); err != errRollback {
			t.Fatalf("err = %v, want errRollback", err)
		}
		if got := count(t, inst, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4"); got != next {
			t.Errorf("rollback left d_next_o_id %d, want %d", got, next)
		}
	})

	t.Run("payment by name, remote, bad credit", func(t *testing.T) {
		// Make the chosen customer bad-credit to see C_DATA change.
		var last string
		db.QueryRow("SELECT c_last FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_id = 7").Scan(&last)
		n := count(t, inst, "SELECT COUNT(*) FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_last = ?", last)
		var ids []int
		rows, _ := db.Query("SELECT c_id FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_last = ? ORDER BY c_first", last)
		for rows.Next() {
			var id int
			rows.Scan(&id)
			ids = append(ids, id)
		}
		rows.Close()
		chosen := ids[(n+1)/2-1]
		db.Exec("UPDATE customer SET c_credit = 'BC' WHERE c_w_id = 2 AND c_d_id = 5 AND c_id = ?", chosen)
		wBefore := count(t, inst, "SELECT CAST(w_ytd * 100 AS INTEGER) FROM warehouse WHERE w_id = 1")
		hBefore := count(t, inst, "SELECT COUNT(*) FROM history")
		in := &paymentIn{wID: 1, dID: 2, cWID: 2, cDID: 5, customer: customerSel{byName: true, last: last}, amount: 123.45, date: time.Now()}
		if err := exec.payment(ctx, in); err != nil {
			t.Fatal(err)
		}
		if in.resolvedCID != chosen {
			t.Errorf("paid customer %d, want the one at ceil(n/2) = %d", in.resolvedCID, chosen)
		}
		if got := count(t, inst, "SELECT CAST(ROUND(w_ytd * 100) AS INTEGER) FROM warehouse WHERE w_id = 1"); got != wBefore+12345 {
			t.Errorf("w_ytd cents = %d, want %d", got, wBefore+12345)
		}
		if got := count(t, inst, "SELECT c_payment_cnt FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_id = ?", chosen); got != 2 {
			t.Errorf("c_payment_cnt = %d, want 2", got)
		}
		var data string
		db.QueryRow("SELECT c_data FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_id = ?", chosen).Scan(&data)
		if !strings.HasPrefix(data, "") || !strings.Contains(data[:40], "123.45") || len(data) > 500 {
			t.Errorf("c_data not updated for a bad-credit customer: %.60q (len %d)", data, len(data))
		}
		if got := count(t, inst, "SELECT COUNT(*) FROM history"); got != hBefore+1 {
			t.Errorf("history rows %d, want %d", got, hBefore+1)
		}
	})

	t.Run("order_status", func(t *testing.T) {
		in := &orderStatusIn{wID: 1, dID: 3, customer: customerSel{cID: 42}}
		if err := exec.orderStatus(ctx, in); err != nil {
			t.Fatal(err)
		}
		// Customer 42 placed the New-Order above, the newest in its district.
		if want := count(t, inst, "SELECT MAX(o_id) FROM orders WHERE o_w_id = 1 AND o_d_id = 3 AND o_c_id = 42"); in.oID != want || in.lines == 0 {
			t.Errorf("order status: order %d with %d lines, want order %d", in.oID, in.lines, want)
		}
	})

	t.Run("delivery", func(t *testing.T) {
		before := count(t, inst, "SELECT COUNT(*) FROM new_order WHERE no_w_id = 2")
		oldest := count(t, inst, "SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = 2 AND no_d_id = 1")
		cID := count(t, inst, "SELECT o_c_id FROM orders WHERE o_w_id = 2 AND o_d_id = 1 AND o_id = ?", oldest)
		cnt := count(t, inst, "SELECT c_delivery_cnt FROM customer WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = ?", cID)
		in := &deliveryIn{wID: 2, carrierID: 7, date: time.Now()}
		if err := exec.delivery(ctx, in); err != nil {
			t.Fatal(err)
		}
		if in.delivered != 10 {
			t.Errorf("delivered %d districts, want 10", in.delivered)
		}
		if got := count(t, inst, "SELECT COUNT(*) FROM new_order WHERE no_w_id = 2"); got != before-10 {
			t.Errorf("new orders %d, want %d", got, before-10)
		}
		if got := count(t, inst, "SELECT o_carrier_id FROM orders WHERE o_w_id = 2 AND o_d_id = 1 AND o_id = ?", oldest); got != 7 {
			t.Errorf("carrier %d, want 7", got)
		}
		if got := count(t, inst, "SELECT COUNT(*) FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 1 AND ol_o_id = ? AND ol_delivery_d IS NULL", oldest); got != 0 {
			t.Errorf("%d order lines left undelivered", got)
		}
		if got := count(t, inst, "SELECT c_delivery_cnt FROM customer WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = ?", cID); got != cnt+1 {
			t.Errorf("c_delivery_cnt %d, want %d", got, cnt+1)
		}
	})

	t.Run("stock_level", func(t *testing.T) {
		in := &stockLevelIn{wID: 1, dID: 3, threshold: 101}
		if err := exec.stockLevel(ctx, in); err != nil {
			t.Fatal(err)
		}
		// Every stock row has fewer than 101 units, so every distinct item of the last 20 orders counts.
		next := count(t, inst, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 3")
		want := count(t, inst, "SELECT COUNT(DISTINCT ol_i_id) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id >= ? AND ol_o_id < ?", next-20, next)
		if in.lowStock != want {
			t.Errorf("low stock = %d, want %d", in.lowStock, want)
		}
	})

	checks, err := w.Check(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.Passed {
			t.Errorf("consistency %s failed after the transactions: %s", c.Name, c.Detail)
		}
	}
}

func TestConsistencyChecksCatchDamage(t *testing.T) {
	damage := []struct {
		condition int
		sql       string
	}{
		{1, "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1"},
		{2, "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 2"},
		{3, "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 3 AND no_o_id = 2500"},
		{4, "DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id = 10 AND ol_number = 1"},
	}
	for _, d := range damage {
		t.Run(d.sql, func(t *testing.T) {
			w, inst := loadedSQLite(t, 1)
			if _, err := inst.DB().Exec(d.sql); err != nil {
				t.Fatal(err)
			}
			checks, err := w.Check(context.Background(), inst)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range checks {
				if wantFail := i+1 == d.condition; c.Passed == wantFail {
					t.Errorf("condition %s: passed=%v after %q (detail %q)", c.Name, c.Passed, d.sql, c.Detail)
				}
			}
		})
	}
}

func TestSessionsRunTheMixConsistently(t *testing.T) {
	w, inst := loadedSQLite(t, 2)
	col := metrics.NewCollector(w.TxTypes())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	const users, perUser = 4, 250
	for u := range users {
		s, err := w.NewSession(ctx, inst, u, col.NewRecorder())
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.Close()
			for range perUser {
				if err := s.Next(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	col.Tick()
	totals := col.StepTotals()
	var done int64
	for i, c := range totals {
		if c.Failed != 0 {
			t.Errorf("%s: %d failed", txNames[i], c.Failed)
		}
		done += c.Completed()
	}
	if done != users*perUser {
		t.Errorf("%d transactions recorded, want %d", done, users*perUser)
	}
	checks, err := w.Check(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.Passed {
			t.Errorf("consistency %s: %s", c.Name, c.Detail)
		}
	}
}
