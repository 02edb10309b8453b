package tpcc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/metrics"
	"dbio/internal/target"
	"dbio/internal/workload"
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
	s := &terminal{r: newRnd(3, 4, Constants{})}
	var drawn [numTxTypes]int
	for range 1000 {
		drawn[s.nextType()]++
	}
	if drawn != [numTxTypes]int{450, 430, 40, 40, 40} {
		t.Fatalf("1000 draws = %v, want 450/430/40/40/40", drawn)
	}
}

func TestInputRules(t *testing.T) {
	w := New(Config{Warehouses: 4, Loading: workload.Loading{Seed: 9}})
	w.setConstants(Constants{CLast: 10, CID: 20, OLIID: 30})
	s := &terminal{w: w, r: newRnd(5, 6, w.run), wID: 2, nowFunc: time.Now}
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
	// Server engines keep their shared instances here, run by an unprivileged user.
	if err := os.Chmod(dir, 0o755); err != nil {
		panic(err)
	}
	templateRoot = dir
	code := m.Run()
	for _, inst := range startedServers {
		inst.Stop(context.Background())
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

var templateRoot string

func template(warehouses int) (string, error) {
	f, _ := templates.LoadOrStore(warehouses, sync.OnceValues(func() (string, error) {
		tg, err := target.Create(filepath.Join(templateRoot, fmt.Sprint(warehouses)))
		if err != nil {
			return "", err
		}
		inst, err := sqlite.Engine{}.Start(context.Background(), engine.Placement{Data: tg}, engine.Options{Database: "tpcc", Fresh: true})
		if err != nil {
			return "", err
		}
		w := New(Config{Warehouses: warehouses, Loading: workload.Loading{Seed: 1}})
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
func loadedSQLite(t testing.TB, warehouses int) (*Workload, engine.Instance) {
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
	w := New(Config{Warehouses: warehouses, Loading: workload.Loading{Seed: 1, Reuse: true}})
	st, err := w.Prepare(context.Background(), inst, io.Discard)
	if err != nil || !st.Reused {
		t.Fatalf("reuse template: %+v %v", st, err)
	}
	return w, inst
}

// sqlOn runs queries written with ? placeholders on one engine's instance.
type sqlOn struct {
	t    *testing.T
	e    testEngine
	inst engine.Instance
}

func (q sqlOn) text(query string) string { return workload.Rebind(query, q.e.ph) }

// int runs a query that returns one integer.
func (q sqlOn) int(query string, args ...any) int {
	q.t.Helper()
	var n int
	if err := q.inst.DB().QueryRow(q.text(query), args...).Scan(&n); err != nil {
		q.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// cents runs a query that returns one money value, in cents.
func (q sqlOn) cents(query string, args ...any) int64 {
	q.t.Helper()
	var v float64
	if err := q.inst.DB().QueryRow(q.text(query), args...).Scan(&v); err != nil {
		q.t.Fatalf("%s: %v", query, err)
	}
	return int64(math.Round(v * 100))
}

func (q sqlOn) exec(query string, args ...any) {
	q.t.Helper()
	if _, err := q.inst.DB().Exec(q.text(query), args...); err != nil {
		q.t.Fatalf("%s: %v", query, err)
	}
}

// mustBeConsistent runs the consistency checks and fails the test on any violation.
func mustBeConsistent(t *testing.T, w *Workload, inst engine.Instance, when string) {
	t.Helper()
	checks, err := w.Check(context.Background(), inst)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.Passed {
			t.Errorf("consistency %s failed %s: %s", c.Name, when, c.Detail)
		}
	}
}

func TestLoaderRowCounts(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e testEngine) {
		sizes := []int{1}
		if e.name == "sqlite" {
			sizes = []int{1, 2}
		}
		for _, W := range sizes {
			t.Run(strings.Repeat("W", W), func(t *testing.T) {
				inst := e.empty(t)
				q := sqlOn{t, e, inst}
				w := New(Config{Warehouses: W, Loading: workload.Loading{Seed: 1}})
				var log strings.Builder
				st, err := w.Prepare(context.Background(), inst, &log)
				if err != nil {
					t.Fatal(err)
				}
				// A log (not a terminal) gets a line every tenth of the
				// load, not one per warehouse, and the load's total.
				said := log.String()
				if strings.Contains(said, "loaded warehouse") || !strings.Contains(said, fmt.Sprintf("loaded %d %s: ", W, map[bool]string{true: "warehouse", false: "warehouses"}[W == 1])) ||
					(W == 2) != strings.Contains(said, "loading tpcc: 50% (1 of 2 warehouses), ") {
					t.Errorf("the load's log:\n%s", said)
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
					if got := q.int("SELECT COUNT(*) FROM " + table); got != n {
						t.Errorf("%s: %d rows, want %d", table, got, n)
					}
				}
				// 5 to 15 lines per order, and as many as the orders say.
				lines := q.int("SELECT COUNT(*) FROM order_line")
				if lines < 5*want["orders"] || lines > 15*want["orders"] {
					t.Errorf("order_line: %d rows for %d orders", lines, want["orders"])
				}
				if sum := q.int("SELECT SUM(o_ol_cnt) FROM orders"); sum != lines {
					t.Errorf("sum(o_ol_cnt) = %d, order lines %d", sum, lines)
				}
				// About 10 % of item and stock data carry "ORIGINAL" (4.3.3.1).
				orig := q.int("SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'")
				if orig < 9000 || orig > 11000 {
					t.Errorf("items with ORIGINAL: %d of 100000", orig)
				}
				bc := q.int("SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'")
				if total := want["customer"]; bc < total/12 || bc > total/8 {
					t.Errorf("bad-credit customers: %d of %d", bc, total)
				}
				// The first 1,000 customers of a district take the 1,000 names in order.
				if n := q.int("SELECT COUNT(DISTINCT c_last) FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id <= 1000"); n != 1000 {
					t.Errorf("distinct last names among first 1000 customers: %d", n)
				}
				if n := q.int("SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL"); n != want["new_order"] {
					t.Errorf("undelivered orders: %d, want %d", n, want["new_order"])
				}
				// Undelivered order lines carry an amount, delivered ones none (4.3.3.1).
				if n := q.int("SELECT COUNT(*) FROM order_line WHERE (ol_delivery_d IS NULL) <> (ol_amount > 0)"); n != 0 {
					t.Errorf("%d order lines whose amount and delivery date disagree", n)
				}
				var total int64
				for _, table := range Tables {
					total += int64(q.int("SELECT COUNT(*) FROM " + table))
				}
				if st.Rows != total || st.Scale != W {
					t.Errorf("load stats %+v, want %d rows at scale %d", st, total, W)
				}
				if want := workload.NewDataset("tpcc", loaderVersion, 1, [2]string{"warehouses", strconv.Itoa(W)}); !reflect.DeepEqual(st.Dataset, want) {
					t.Errorf("load's dataset %+v, want %+v", st.Dataset, want)
				}
				mustBeConsistent(t, w, inst, "after load")
				if W == 1 {
					// On this load, the test's own, rather than on another
					// per engine: a server's load takes half a minute.
					reuseCases(t, e, w, inst)
				}
			})
		}
	})
}

// reuseCases: --reuse keeps a database loaded with the run's identity, and
// refuses, having written nothing, a database of another warehouse count,
// seed or loader version, and one an older dbio loaded. inst holds w's
// load of one warehouse from seed 1, the test's own: the cases change its
// record (and restore it), which a database other tests share must not see.
func reuseCases(t *testing.T, e testEngine, w *Workload, inst engine.Instance) {
	q := sqlOn{t, e, inst}
	// A name no load gives: a load would replace it.
	q.exec("UPDATE warehouse SET w_name = 'kept' WHERE w_id = 1")
	want := workload.NewDataset("tpcc", loaderVersion, 1, [2]string{"warehouses", "1"})
	version := strconv.Itoa(loaderVersion)
	for _, tc := range []struct {
		name string
		// change is what the run asks for beside the load's settings;
		// edit changes the load's record before the run, undo after.
		change     func(*Config)
		edit, undo string
		// differs is the part named (empty when kept), msg in the refusal.
		differs, msg string
	}{
		{name: "same identity kept"},
		{name: "another seed", change: func(c *Config) { c.Seed = 2 }, differs: "seed", msg: "(seed 1 there, 2 for this run): load afresh without --reuse, or run with --seed 1"},
		{name: "more warehouses", change: func(c *Config) { c.Warehouses = 2 }, differs: "warehouses", msg: "(warehouses 1 there, 2 for this run): load afresh without --reuse, or run with --warehouses 1"},
		{name: "another loader version", edit: "UPDATE " + metaTable + " SET v = '0' WHERE k = 'loader_version'",
			undo:    "UPDATE " + metaTable + " SET v = '" + version + "' WHERE k = 'loader_version'",
			differs: "loader version", msg: "(loader version 0 there, " + version + " for this run): load afresh without --reuse"},
		// An older dbio recorded the scale and the constants, not the seed.
		{name: "an older dbio's database", edit: "DELETE FROM " + metaTable + " WHERE k IN ('workload', 'loader_version', 'seed')",
			undo: "INSERT INTO " + metaTable + " (k, v) VALUES ('workload', 'tpcc'), ('loader_version', '" + version + "'), ('seed', '1')",
			msg:  "loaded by an older dbio"},
	} {
		t.Run("reuse/"+tc.name, func(t *testing.T) {
			cfg := Config{Warehouses: 1, Loading: workload.Loading{Seed: 1, Reuse: true}}
			if tc.change != nil {
				tc.change(&cfg)
			}
			if tc.edit != "" {
				q.exec(tc.edit)
				defer q.exec(tc.undo)
			}
			before, _ := readMeta(context.Background(), inst.DB())
			w2 := New(cfg)
			st, err := w2.Prepare(context.Background(), inst, io.Discard)
			if tc.msg == "" {
				if err != nil || !st.Reused || !reflect.DeepEqual(st.Dataset, want) {
					t.Fatalf("reuse: %+v, %v; want the database kept, dataset %+v", st, err, want)
				}
				if w2.run != w.run {
					t.Errorf("run-time constants %+v on reuse, %+v after the load", w2.run, w.run)
				}
			} else {
				var refused *workload.ReuseRefused
				if !errors.As(err, &refused) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("got %+v, %v; want a refusal saying %q", st, err, tc.msg)
				}
				if tc.differs != "" && (len(refused.Differences) != 1 || refused.Differences[0].Name != tc.differs) {
					t.Errorf("differences %+v, want %s alone", refused.Differences, tc.differs)
				}
			}
			if n := q.int("SELECT COUNT(*) FROM warehouse WHERE w_name = 'kept' AND w_id = 1"); n != 1 {
				t.Error("the database was loaded again")
			}
			if after, _ := readMeta(context.Background(), inst.DB()); !reflect.DeepEqual(after, before) {
				t.Errorf("the load's record became %v, was %v", after, before)
			}
		})
	}
}

// newTestSession opens a session on user 0 (warehouse 1) with its own collector.
func newTestSession(t testing.TB, w *Workload, inst engine.Instance) (*session, *metrics.Collector) {
	t.Helper()
	col := metrics.NewCollector(w.TxTypes())
	s, err := w.NewSession(context.Background(), inst, 0, col.NewRecorder())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*session), col
}

// TestTransactionEffects runs each transaction once with chosen inputs and
// checks what it changed. Expectations are relative to the state before, so
// that server engines can share one database among tests.
func TestTransactionEffects(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e testEngine) {
		w, inst := e.loaded(t, 2)
		s, _ := newTestSession(t, w, inst)
		ctx := context.Background()
		exec := s.exec

		t.Run("new_order", func(t *testing.T) {
			q := sqlOn{t, e, inst}
			next := q.int("SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 3")
			stockBefore := q.int("SELECT s_quantity FROM stock WHERE s_w_id = 2 AND s_i_id = 77")
			remoteBefore := q.int("SELECT s_remote_cnt FROM stock WHERE s_w_id = 2 AND s_i_id = 77")
			orderCntBefore := q.int("SELECT s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 10")
			in := &newOrderIn{wID: 1, dID: 3, cID: 42, entryD: time.Now(), lines: []orderLine{
				{itemID: 77, supplyWID: 2, quantity: 3, remote: true},
				{itemID: 10, supplyWID: 1, quantity: 4},
			}}
			if err := exec.newOrder(ctx, in); err != nil {
				t.Fatal(err)
			}
			if in.oID != next {
				t.Errorf("order id %d, want D_NEXT_O_ID %d", in.oID, next)
			}
			if got := q.int("SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 3"); got != next+1 {
				t.Errorf("d_next_o_id = %d, want %d", got, next+1)
			}
			if got := q.int("SELECT COUNT(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id = ?", next); got != 2 {
				t.Errorf("order lines = %d, want 2", got)
			}
			if got := q.int("SELECT o_all_local FROM orders WHERE o_w_id = 1 AND o_d_id = 3 AND o_id = ?", next); got != 0 {
				t.Errorf("o_all_local = %d, want 0 with a remote line", got)
			}
			if got := q.int("SELECT o_ol_cnt FROM orders WHERE o_w_id = 1 AND o_d_id = 3 AND o_id = ?", next); got != 2 {
				t.Errorf("o_ol_cnt = %d, want 2", got)
			}
			if got := q.int("SELECT COUNT(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = 3 AND no_o_id = ?", next); got != 1 {
				t.Error("no NEW-ORDER row")
			}
			want := stockBefore - 3
			if stockBefore < 3+10 {
				want = stockBefore - 3 + 91
			}
			if got := q.int("SELECT s_quantity FROM stock WHERE s_w_id = 2 AND s_i_id = 77"); got != want {
				t.Errorf("s_quantity = %d, want %d", got, want)
			}
			if got := q.int("SELECT s_remote_cnt FROM stock WHERE s_w_id = 2 AND s_i_id = 77"); got != remoteBefore+1 {
				t.Errorf("s_remote_cnt = %d, want %d", got, remoteBefore+1)
			}
			if got := q.int("SELECT s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 10"); got != orderCntBefore+1 {
				t.Errorf("s_order_cnt = %d, want %d", got, orderCntBefore+1)
			}
			// The lines were sorted by supply warehouse and item, and each
			// line's amount is its quantity times the item's price.
			if in.lines[0].itemID != 10 || in.lines[1].itemID != 77 {
				t.Fatalf("lines not in locking order: %+v", in.lines)
			}
			var sum int64
			for i, l := range in.lines {
				price := q.cents("SELECT i_price FROM item WHERE i_id = ?", l.itemID)
				if got := int64(math.Round(l.amount * 100)); got != int64(l.quantity)*price {
					t.Errorf("line %d amount %v, want %d x %d cents", i+1, l.amount, l.quantity, price)
				}
				stored := q.cents("SELECT ol_amount FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id = ? AND ol_number = ?", next, i+1)
				if stored != int64(l.quantity)*price {
					t.Errorf("stored line %d amount %d cents, want %d", i+1, stored, int64(l.quantity)*price)
				}
				sum += stored
			}
			// total = sum of amounts x (1 - C_DISCOUNT) x (1 + W_TAX + D_TAX) (2.4.2.2).
			var disc, wTax, dTax float64
			for _, v := range []struct {
				query string
				dst   *float64
			}{
				{"SELECT c_discount FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_id = 42", &disc},
				{"SELECT w_tax FROM warehouse WHERE w_id = 1", &wTax},
				{"SELECT d_tax FROM district WHERE d_w_id = 1 AND d_id = 3", &dTax},
			} {
				if err := inst.DB().QueryRow(v.query).Scan(v.dst); err != nil {
					t.Fatal(err)
				}
			}
			if want := float64(sum) / 100 * (1 - disc) * (1 + wTax + dTax); math.Abs(in.total-want) > 0.006 {
				t.Errorf("total %v, want %.2f", in.total, want)
			}
		})

		t.Run("new_order with a stock row twice", func(t *testing.T) {
			q := sqlOn{t, e, inst}
			qty := q.int("SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = 33")
			cnt := q.int("SELECT s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 33")
			ytd := q.int("SELECT s_ytd FROM stock WHERE s_w_id = 1 AND s_i_id = 33")
			in := &newOrderIn{wID: 1, dID: 6, cID: 9, entryD: time.Now(), allLocal: true, lines: []orderLine{
				{itemID: 33, supplyWID: 1, quantity: 5}, {itemID: 34, supplyWID: 1, quantity: 1}, {itemID: 33, supplyWID: 1, quantity: 7},
			}}
			if err := exec.newOrder(ctx, in); err != nil {
				t.Fatal(err)
			}
			// Each line updates the stock in turn (2.4.2.2), whichever order the lines take.
			want := qty
			for _, l := range in.lines {
				if l.itemID != 33 {
					continue
				}
				if want >= l.quantity+10 {
					want -= l.quantity
				} else {
					want = want - l.quantity + 91
				}
			}
			if got := q.int("SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = 33"); got != want {
				t.Errorf("s_quantity = %d, want %d", got, want)
			}
			if got := q.int("SELECT s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 33"); got != cnt+2 {
				t.Errorf("s_order_cnt = %d, want %d", got, cnt+2)
			}
			if got := q.int("SELECT s_ytd FROM stock WHERE s_w_id = 1 AND s_i_id = 33"); got != ytd+12 {
				t.Errorf("s_ytd = %d, want %d", got, ytd+12)
			}
			if got := q.int("SELECT COUNT(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 6 AND ol_o_id = ?", in.oID); got != 3 {
				t.Errorf("%d order lines, want 3", got)
			}
		})

		t.Run("new_order rollback", func(t *testing.T) {
			q := sqlOn{t, e, inst}
			next := q.int("SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4")
			stockBefore := q.int("SELECT s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 5")
			in := &newOrderIn{wID: 1, dID: 4, cID: 1, entryD: time.Now(), allLocal: true, lines: []orderLine{
				{itemID: Items + 1, supplyWID: 1, quantity: 1}, {itemID: 5, supplyWID: 1, quantity: 1},
			}}
			if err := exec.newOrder(ctx, in); !errors.Is(err, errRollback) {
				t.Fatalf("err = %v, want errRollback", err)
			}
			if got := q.int("SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4"); got != next {
				t.Errorf("rollback left d_next_o_id %d, want %d", got, next)
			}
			if got := q.int("SELECT s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 5"); got != stockBefore {
				t.Errorf("rollback left the valid line's stock changed: s_order_cnt %d, want %d", got, stockBefore)
			}
			if got := q.int("SELECT COUNT(*) FROM orders WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = ?", next); got != 0 {
				t.Error("rollback left an ORDER row")
			}
		})

		t.Run("payment by name, remote, bad credit", func(t *testing.T) {
			q := sqlOn{t, e, inst}
			// Make the chosen customer bad-credit to see C_DATA change.
			var last string
			if err := inst.DB().QueryRow("SELECT c_last FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_id = 7").Scan(&last); err != nil {
				t.Fatal(err)
			}
			n := q.int("SELECT COUNT(*) FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_last = ?", last)
			var ids []int
			rows, err := inst.DB().Query(q.text("SELECT c_id FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_last = ? ORDER BY c_first"), last)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id int
				rows.Scan(&id)
				ids = append(ids, id)
			}
			rows.Close()
			chosen := ids[(n+1)/2-1]
			q.exec("UPDATE customer SET c_credit = 'BC' WHERE c_w_id = 2 AND c_d_id = 5 AND c_id = ?", chosen)
			wBefore := q.cents("SELECT w_ytd FROM warehouse WHERE w_id = 1")
			dBefore := q.cents("SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = 2")
			cBefore := q.cents("SELECT c_balance FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_id = ?", chosen)
			cntBefore := q.int("SELECT c_payment_cnt FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_id = ?", chosen)
			hBefore := q.int("SELECT COUNT(*) FROM history")
			in := &paymentIn{wID: 1, dID: 2, cWID: 2, cDID: 5, customer: customerSel{byName: true, last: last}, amount: 123.45, date: time.Now()}
			if err := exec.payment(ctx, in); err != nil {
				t.Fatal(err)
			}
			if in.resolvedCID != chosen || !in.badCreditHit {
				t.Errorf("paid customer %d (bad credit %v), want the one at ceil(n/2) = %d, bad credit", in.resolvedCID, in.badCreditHit, chosen)
			}
			if got := q.cents("SELECT w_ytd FROM warehouse WHERE w_id = 1"); got != wBefore+12345 {
				t.Errorf("w_ytd cents = %d, want %d", got, wBefore+12345)
			}
			if got := q.cents("SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = 2"); got != dBefore+12345 {
				t.Errorf("d_ytd cents = %d, want %d", got, dBefore+12345)
			}
			if got := q.cents("SELECT c_balance FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_id = ?", chosen); got != cBefore-12345 {
				t.Errorf("c_balance cents = %d, want %d", got, cBefore-12345)
			}
			if got := q.int("SELECT c_payment_cnt FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_id = ?", chosen); got != cntBefore+1 {
				t.Errorf("c_payment_cnt = %d, want %d", got, cntBefore+1)
			}
			var data string
			if err := inst.DB().QueryRow(q.text("SELECT c_data FROM customer WHERE c_w_id = 2 AND c_d_id = 5 AND c_id = ?"), chosen).Scan(&data); err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("%d 5 2 2 1 123.45 | ", chosen); !strings.HasPrefix(data, want) || len(data) > 500 {
				t.Errorf("c_data of a bad-credit customer = %.60q (len %d), want it to start with %q", data, len(data), want)
			}
			if got := q.int("SELECT COUNT(*) FROM history"); got != hBefore+1 {
				t.Errorf("history rows %d, want %d", got, hBefore+1)
			}
			var hData string
			if err := inst.DB().QueryRow(q.text("SELECT h_data FROM history WHERE h_c_w_id = 2 AND h_c_d_id = 5 AND h_c_id = ? AND h_amount = 123.45"), chosen).Scan(&hData); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(hData, "    ") {
				t.Errorf("h_data %q: want W_NAME and D_NAME separated by four spaces", hData)
			}
		})

		t.Run("order_status", func(t *testing.T) {
			q := sqlOn{t, e, inst}
			in := &orderStatusIn{wID: 1, dID: 3, customer: customerSel{cID: 42}}
			if err := exec.orderStatus(ctx, in); err != nil {
				t.Fatal(err)
			}
			// Customer 42 placed the New-Order above, the newest in its district.
			want := q.int("SELECT MAX(o_id) FROM orders WHERE o_w_id = 1 AND o_d_id = 3 AND o_c_id = 42")
			lines := q.int("SELECT COUNT(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id = ?", want)
			if in.oID != want || in.lines != lines {
				t.Errorf("order status: order %d with %d lines, want order %d with %d", in.oID, in.lines, want, lines)
			}
		})

		t.Run("delivery", func(t *testing.T) {
			q := sqlOn{t, e, inst}
			before := q.int("SELECT COUNT(*) FROM new_order WHERE no_w_id = 2")
			oldest := q.int("SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = 2 AND no_d_id = 1")
			cID := q.int("SELECT o_c_id FROM orders WHERE o_w_id = 2 AND o_d_id = 1 AND o_id = ?", oldest)
			cnt := q.int("SELECT c_delivery_cnt FROM customer WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = ?", cID)
			balance := q.cents("SELECT c_balance FROM customer WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = ?", cID)
			amount := q.cents("SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 1 AND ol_o_id = ?", oldest)
			in := &deliveryIn{wID: 2, carrierID: 7, date: time.Now()}
			if err := exec.delivery(ctx, in); err != nil {
				t.Fatal(err)
			}
			if in.delivered != 10 || in.skipped != 0 {
				t.Errorf("delivered %d districts, skipped %d; want 10 and 0", in.delivered, in.skipped)
			}
			if got := q.int("SELECT COUNT(*) FROM new_order WHERE no_w_id = 2"); got != before-10 {
				t.Errorf("new orders %d, want %d", got, before-10)
			}
			if got := q.int("SELECT o_carrier_id FROM orders WHERE o_w_id = 2 AND o_d_id = 1 AND o_id = ?", oldest); got != 7 {
				t.Errorf("carrier %d, want 7", got)
			}
			if got := q.int("SELECT COUNT(*) FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 1 AND ol_o_id = ? AND ol_delivery_d IS NULL", oldest); got != 0 {
				t.Errorf("%d order lines left undelivered", got)
			}
			if got := q.int("SELECT c_delivery_cnt FROM customer WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = ?", cID); got != cnt+1 {
				t.Errorf("c_delivery_cnt %d, want %d", got, cnt+1)
			}
			if got := q.cents("SELECT c_balance FROM customer WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = ?", cID); got != balance+amount {
				t.Errorf("c_balance cents %d, want %d + the order's %d", got, balance, amount)
			}
		})

		t.Run("stock_level", func(t *testing.T) {
			q := sqlOn{t, e, inst}
			in := &stockLevelIn{wID: 1, dID: 3, threshold: 101}
			if err := exec.stockLevel(ctx, in); err != nil {
				t.Fatal(err)
			}
			// Every stock row has fewer than 101 units, so every distinct item of the last 20 orders counts.
			next := q.int("SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 3")
			want := q.int("SELECT COUNT(DISTINCT ol_i_id) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id >= ? AND ol_o_id < ?", next-20, next)
			if in.lowStock != want {
				t.Errorf("low stock = %d, want %d", in.lowStock, want)
			}
		})

		mustBeConsistent(t, w, inst, "after the transactions")
	})
}

// damage breaks one consistency condition and repairs it again, so that
// server engines can run every case on one shared database.
var damage = []struct {
	condition      int
	damage, repair string
}{
	{1, "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1", "UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 1"},
	{2, "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 2",
		"UPDATE district SET d_next_o_id = d_next_o_id - 1 WHERE d_w_id = 1 AND d_id = 2"},
	{3, "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 3 AND no_o_id = 2600",
		"INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (2600, 3, 1)"},
	{4, "UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = 10",
		"UPDATE orders SET o_ol_cnt = o_ol_cnt - 1 WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = 10"},
}

func TestConsistencyChecksCatchDamage(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e testEngine) {
		w, inst := e.loaded(t, 2)
		for _, d := range damage {
			t.Run(d.damage, func(t *testing.T) {
				q := sqlOn{t, e, inst}
				q.exec(d.damage)
				defer q.exec(d.repair)
				checks, err := w.Check(context.Background(), inst)
				if err != nil {
					t.Fatal(err)
				}
				for i, c := range checks {
					if wantFail := i+1 == d.condition; c.Passed == wantFail {
						t.Errorf("condition %s: passed=%v after %q (detail %q)", c.Name, c.Passed, d.damage, c.Detail)
					}
				}
			})
		}
		mustBeConsistent(t, w, inst, "after the repairs")
	})
}

// TestSessionsRunTheMixConsistently runs the mix on a database no other
// test changes meanwhile, so that the orders it gained are the sessions':
// NOPM is computed from the New-Orders the sessions count as committed, and
// those must be the orders the database gained (HammerDB counts NOPM from
// the districts' D_NEXT_O_ID instead: the two agree only if every counted
// commit is an order and no order is uncounted).
func TestSessionsRunTheMixConsistently(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e testEngine) {
		w, inst := e.own(t, 2)
		q := sqlOn{t, e, inst}
		// Each committed New-Order adds one ORDER row and raises its
		// district's D_NEXT_O_ID by one; a rolled-back one does neither.
		orders, nextIDs := "SELECT COUNT(*) FROM orders", "SELECT SUM(d_next_o_id) FROM district"
		ordersBefore, nextBefore := q.int(orders), q.int(nextIDs)
		col := metrics.NewCollector(w.TxTypes())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		const users, perUser = 4, 250
		runUsers(ctx, t, w, inst, users, col, func(ran int) bool { return ran < perUser })()
		col.Tick()
		totals := col.StepTotals()
		committed := int(totals[TxNewOrder].Committed)
		if got := q.int(orders) - ordersBefore; got != committed {
			t.Errorf("the database gained %d ORDER rows, the sessions counted %d committed New-Orders", got, committed)
		}
		if got := q.int(nextIDs) - nextBefore; got != committed {
			t.Errorf("the districts' D_NEXT_O_ID rose by %d, the sessions counted %d committed New-Orders", got, committed)
		}
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
		if rb := totals[TxNewOrder].RolledBack; rb == 0 || rb > totals[TxNewOrder].Completed()/20 {
			t.Errorf("%d of %d New-Orders rolled back, want about 1 %%", rb, totals[TxNewOrder].Completed())
		}
		mustBeConsistent(t, w, inst, "after the run")
	})
}

// runUsers opens users sessions of w, back to back, each running
// transactions while more(the number it has run) says so; an error is
// reported on t and ends its session. The returned wait waits for every
// session to end and close.
func runUsers(ctx context.Context, t testing.TB, w *Workload, inst engine.Instance, users int, col *metrics.Collector, more func(ran int) bool) (wait func()) {
	t.Helper()
	var wg sync.WaitGroup
	for u := range users {
		s, err := w.NewSession(ctx, inst, u, col.NewRecorder())
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer s.Close()
			for ran := 0; more(ran); ran++ {
				if err := s.Next(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	return wg.Wait
}
