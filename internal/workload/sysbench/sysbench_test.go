package sysbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/workload"
	"dbio/internal/workload/sqlclient"
)

func TestDistributions(t *testing.T) {
	const n, lo, hi = 200000, 1, 10000
	cfg := DefaultConfig()
	draw := func(rt string) []int {
		c := cfg
		c.RandType = rt
		f := c.ids()
		r := rand.New(rand.NewPCG(1, 2))
		out := make([]int, n)
		for i := range out {
			v := f(r, lo, hi)
			if v < lo || v > hi {
				t.Fatalf("%s drew %d, outside [%d, %d]", rt, v, lo, hi)
			}
			out[i] = v
		}
		return out
	}
	share := func(vs []int, in func(int) bool) float64 {
		k := 0
		for _, v := range vs {
			if in(v) {
				k++
			}
		}
		return float64(k) / float64(len(vs))
	}
	tests := []struct {
		randType string
		what     string
		in       func(int) bool
		min, max float64
	}{
		{"uniform", "first tenth", func(v int) bool { return v <= 1000 }, 0.09, 0.11},
		{"uniform", "last tenth", func(v int) bool { return v > 9000 }, 0.09, 0.11},
		// 75 % on the central 1 %, plus the gaussian's small share of it.
		{"special", "central 1 %", func(v int) bool { return v > 4950 && v <= 5050 }, 0.75, 0.78},
		// The mean of 12 uniforms has a standard deviation of 1/12 of the range.
		{"gaussian", "middle fifth", func(v int) bool { return v > 4000 && v <= 6000 }, 0.74, 0.80},
		{"gaussian", "first tenth", func(v int) bool { return v <= 1000 }, 0, 0.01},
		{"pareto", "first fifth", func(v int) bool { return v <= 2000 }, 0.78, 0.82},
	}
	cache := map[string][]int{}
	for _, tt := range tests {
		vs, ok := cache[tt.randType]
		if !ok {
			vs = draw(tt.randType)
			cache[tt.randType] = vs
		}
		if got := share(vs, tt.in); got < tt.min || got > tt.max {
			t.Errorf("%s: %s holds %.3f of draws, want %.2f..%.2f", tt.randType, tt.what, got, tt.min, tt.max)
		}
	}
}

var (
	cPattern   = regexp.MustCompile(`^[0-9]{11}(-[0-9]{11}){9}$`)
	padPattern = regexp.MustCompile(`^[0-9]{11}(-[0-9]{11}){4}$`)
)

func TestValueTemplates(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	seen := map[string]bool{}
	for range 1000 {
		c, pad := cValue(r), padValue(r)
		if !cPattern.MatchString(c) || len(c) != 119 {
			t.Fatalf("c = %q", c)
		}
		if !padPattern.MatchString(pad) || len(pad) != 59 {
			t.Fatalf("pad = %q", pad)
		}
		seen[c] = true
	}
	if len(seen) != 1000 {
		t.Errorf("%d distinct c values of 1000", len(seen))
	}
}

func TestQueriesPerTransaction(t *testing.T) {
	tests := []struct {
		workload              string
		reads, writes, other  int
		skipTrx, noRangeQuery bool
	}{
		{workload: ReadWrite, reads: 14, writes: 4, other: 2},
		{workload: ReadOnly, reads: 14, other: 2},
		{workload: WriteOnly, writes: 4, other: 2},
		{workload: PointSelect, reads: 1},
		{workload: UpdateIndex, writes: 1},
		{workload: ReadWrite, reads: 10, writes: 4, other: 2, noRangeQuery: true},
		{workload: ReadWrite, reads: 14, writes: 4, skipTrx: true},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.Workload, cfg.SkipTrx, cfg.RangeSelects = tt.workload, tt.skipTrx, !tt.noRangeQuery
		r, w, o := New(cfg).QueriesPerTransaction()
		if r != tt.reads || w != tt.writes || o != tt.other {
			t.Errorf("%s (skip_trx %v, range_selects %v): %d/%d/%d queries, want %d/%d/%d",
				tt.workload, tt.skipTrx, !tt.noRangeQuery, r, w, o, tt.reads, tt.writes, tt.other)
		}
	}
}

func TestValidate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Tables, cfg.TableSize, cfg.Workload, cfg.RandType = 0, -1, "oltp_nope", "zipfian"
	errs := cfg.Validate()
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"--tables 0", "--table-size -1", `--workload "oltp_nope"`, `--rand-type "zipfian": use one of gaussian, pareto, special, uniform`} {
		if !strings.Contains(all, want) {
			t.Errorf("validation does not say %q:\n%s", want, all)
		}
	}
	if errs := DefaultConfig().Validate(); len(errs) != 0 {
		t.Errorf("defaults invalid: %v", errs)
	}
}

// smallConfig is a quick dataset: two tables of 1,000 rows.
func smallConfig(workload string) Config {
	c := DefaultConfig()
	c.Tables, c.TableSize, c.Workload, c.Seed = 2, 1000, workload, 7
	return c
}

func prepare(t testing.TB, inst engine.Instance, cfg Config) *Workload {
	t.Helper()
	w := New(cfg)
	if errs := cfg.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	st, err := w.Prepare(context.Background(), inst, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(cfg.Tables * cfg.TableSize); st.Rows != want || st.Reused {
		t.Fatalf("load stats %+v, want %d rows loaded", st, want)
	}
	return w
}

func queryInt(t *testing.T, inst engine.Instance, q string) int64 {
	t.Helper()
	var n int64
	if err := inst.DB().QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// indexQuery lists the k index of sbtest1 in each engine's catalog.
var indexQuery = map[string]string{
	"sqlite":   "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'k_1' AND tbl_name = 'sbtest1'",
	"postgres": "SELECT COUNT(*) FROM pg_indexes WHERE tablename = 'sbtest1' AND indexname = 'k_1'",
	"mariadb":  "SELECT COUNT(DISTINCT index_name) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'sbtest1' AND index_name = 'k_1' AND column_name = 'k'",
}

func TestLoad(t *testing.T) {
	forEachEngine(t, func(t *testing.T, inst engine.Instance) {
		cfg := smallConfig(ReadWrite)
		prepare(t, inst, cfg)
		for n := 1; n <= cfg.Tables; n++ {
			tb := tableName(n)
			if got := queryInt(t, inst, "SELECT COUNT(*) FROM "+tb); got != 1000 {
				t.Errorf("%s: %d rows, want 1000", tb, got)
			}
			if got := queryInt(t, inst, "SELECT COUNT(DISTINCT id) FROM "+tb+" WHERE id BETWEEN 1 AND 1000"); got != 1000 {
				t.Errorf("%s: %d distinct ids in 1..1000", tb, got)
			}
			if got := queryInt(t, inst, "SELECT COUNT(*) FROM "+tb+" WHERE k < 1 OR k > 1000"); got != 0 {
				t.Errorf("%s: %d rows with k outside [1, 1000]", tb, got)
			}
			// Uniform k over 1,000 rows: many distinct values, none dominant.
			if got := queryInt(t, inst, "SELECT COUNT(DISTINCT k) FROM "+tb); got < 550 || got > 720 {
				t.Errorf("%s: %d distinct k values, want about 632 for uniform draws", tb, got)
			}
			rows, err := inst.DB().Query("SELECT c, pad FROM " + tb)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var c, pad string
				if err := rows.Scan(&c, &pad); err != nil {
					t.Fatal(err)
				}
				// CHAR columns may come back padded to their width.
				if !cPattern.MatchString(strings.TrimRight(c, " ")) || !padPattern.MatchString(strings.TrimRight(pad, " ")) {
					t.Fatalf("%s: c %q, pad %q do not follow the digit-group templates", tb, c, pad)
				}
			}
			rows.Close()
		}
		if got := queryInt(t, inst, indexQuery[engineKey(inst)]); got != 1 {
			t.Errorf("index k_1 on sbtest1(k): found %d", got)
		}
		// Without --reuse, a load at another size replaces the tables.
		other := cfg
		other.TableSize = 500
		prepare(t, inst, other)
		if n := queryInt(t, inst, "SELECT COUNT(*) FROM sbtest2"); n != 500 {
			t.Errorf("sbtest2 holds %d rows after a load of 500", n)
		}
	})
}

// TestReuse: --reuse keeps tables loaded with the run's identity, and
// refuses, having written nothing, tables of another count, size,
// distribution, seed or loader version, and tables an older dbio loaded.
func TestReuse(t *testing.T) {
	forEachEngine(t, func(t *testing.T, inst engine.Instance) {
		cfg := smallConfig(ReadWrite)
		cfg.Tables = 1
		st, err := New(cfg).Prepare(context.Background(), inst, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		want := workload.NewDataset("sysbench", loaderVersion, 7, [2]string{"tables", "1"}, [2]string{"table-size", "1000"}, [2]string{"rand-type", "uniform"})
		if !reflect.DeepEqual(st.Dataset, want) {
			t.Fatalf("load's dataset %+v, want %+v", st.Dataset, want)
		}
		// Rows no load makes: a load would replace them.
		if _, err := inst.DB().Exec("UPDATE sbtest1 SET k = -7"); err != nil {
			t.Fatal(err)
		}
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
			{name: "another seed", change: func(c *Config) { c.Seed = 8 }, differs: "seed", msg: "(seed 7 there, 8 for this run): load afresh without --reuse, or run with --seed 7"},
			{name: "more tables", change: func(c *Config) { c.Tables = 2 }, differs: "tables", msg: "(tables 1 there, 2 for this run): load afresh without --reuse, or run with --tables 1"},
			{name: "another size", change: func(c *Config) { c.TableSize = 500 }, differs: "table-size", msg: "or run with --table-size 1000"},
			{name: "another distribution", change: func(c *Config) { c.RandType = "special" }, differs: "rand-type", msg: "(rand-type uniform there, special for this run)"},
			{name: "another loader version", edit: "UPDATE dbio_sysbench_meta SET v = '0' WHERE k = 'loader_version'",
				undo:    "UPDATE dbio_sysbench_meta SET v = '" + strconv.Itoa(loaderVersion) + "' WHERE k = 'loader_version'",
				differs: "loader version", msg: "(loader version 0 there, " + strconv.Itoa(loaderVersion) + " for this run): load afresh without --reuse"},
			{name: "an older dbio's tables", edit: "DELETE FROM dbio_sysbench_meta WHERE k IN ('workload', 'loader_version')",
				undo: "INSERT INTO dbio_sysbench_meta (k, v) VALUES ('workload', 'sysbench'), ('loader_version', '" + strconv.Itoa(loaderVersion) + "')",
				msg:  "loaded by an older dbio"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run := cfg
				run.Reuse = true
				if tc.change != nil {
					tc.change(&run)
				}
				if tc.edit != "" {
					if _, err := inst.DB().Exec(tc.edit); err != nil {
						t.Fatal(err)
					}
					defer func() {
						if _, err := inst.DB().Exec(tc.undo); err != nil {
							t.Fatal(err)
						}
					}()
				}
				before, _ := sqlclient.ReadMeta(context.Background(), inst.DB(), metaTable)
				st, err := New(run).Prepare(context.Background(), inst, io.Discard)
				if tc.msg == "" {
					if err != nil || !st.Reused || !reflect.DeepEqual(st.Dataset, want) {
						t.Fatalf("reuse: %+v, %v; want the tables kept, dataset %+v", st, err, want)
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
				if n := queryInt(t, inst, "SELECT COUNT(*) FROM sbtest1 WHERE k = -7"); n != 1000 {
					t.Errorf("sbtest1 keeps %d of the run's 1000 rows: the tables were written", n)
				}
				if after, _ := sqlclient.ReadMeta(context.Background(), inst.DB(), metaTable); !reflect.DeepEqual(after, before) {
					t.Errorf("the load's record became %v, was %v", after, before)
				}
			})
		}
	})
}

func engineKey(inst engine.Instance) string {
	if e := inst.Info().Engine; e == "mysql" {
		return "mariadb"
	} else {
		return e
	}
}

// mariadbCounters are the server's statement counters, to count what a
// session sent.
var mariadbCounters = []string{"Com_select", "Com_update", "Com_delete", "Com_insert", "Com_begin", "Com_commit"}

func statusCounters(t *testing.T, inst engine.Instance) map[string]int64 {
	t.Helper()
	rows, err := inst.DB().Query("SHOW GLOBAL STATUS WHERE Variable_name IN ('" + strings.Join(mariadbCounters, "','") + "')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	return m
}

// sumK is the sum of k over both tables.
func sumK(t *testing.T, inst engine.Instance) int64 {
	return queryInt(t, inst, "SELECT (SELECT SUM(k) FROM sbtest1) + (SELECT SUM(k) FROM sbtest2)")
}

// digest sums a hash-free fingerprint of the rows: row count, k and the
// length of c, enough to see that read-only shapes changed nothing.
func digest(t *testing.T, inst engine.Instance) string {
	return fmt.Sprint(sumK(t, inst), queryInt(t, inst, "SELECT COUNT(*) FROM sbtest1"), queryInt(t, inst, "SELECT COUNT(*) FROM sbtest2"))
}

func TestTransactionShapes(t *testing.T) {
	const txs = 40
	forEachEngine(t, func(t *testing.T, inst engine.Instance) {
		prepare(t, inst, smallConfig(ReadWrite))
		for _, wl := range Workloads {
			t.Run(wl, func(t *testing.T) {
				w := New(smallConfig(wl))
				col := metrics.NewCollector(w.TxTypes())
				s, err := w.NewSession(context.Background(), inst, 0, col.NewRecorder())
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				before := digest(t, inst)
				k0 := sumK(t, inst)
				var c0 map[string]int64
				if engineKey(inst) == "mariadb" {
					c0 = statusCounters(t, inst)
				}
				for range txs {
					if err := s.Next(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				if engineKey(inst) == "mariadb" {
					c1 := statusCounters(t, inst)
					reads, _, other := w.QueriesPerTransaction()
					sh := w.shape
					want := map[string]int64{
						"Com_select": int64(reads), "Com_update": int64(sh.indexUpdates + sh.nonIndexUpdates),
						"Com_delete": int64(sh.deleteInserts), "Com_insert": int64(sh.deleteInserts),
						"Com_begin": int64(other / 2), "Com_commit": int64(other / 2),
					}
					for k, per := range want {
						// SHOW STATUS is not a SELECT; the test's own queries ran before c0.
						if got := c1[k] - c0[k]; got != per*txs {
							t.Errorf("%s: %s grew by %d over %d transactions, want %d per transaction", wl, k, got, txs, per)
						}
					}
				}
				col.Tick()
				c := col.StepTotals()[0]
				if c.Committed != txs || c.Failed != 0 {
					t.Fatalf("%d committed, %d failed, want %d committed", c.Committed, c.Failed, txs)
				}
				switch wl {
				case ReadOnly, PointSelect:
					if after := digest(t, inst); after != before {
						t.Errorf("a read-only shape changed the data: %s -> %s", before, after)
					}
				case UpdateIndex:
					if got := sumK(t, inst) - k0; got != txs {
						t.Errorf("sum(k) grew by %d over %d index updates", got, txs)
					}
				}
			})
		}
		checks, err := New(smallConfig(ReadWrite)).Check(context.Background(), inst)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range checks {
			if !c.Passed {
				t.Errorf("check %s: %s", c.Name, c.Detail)
			}
		}
	})
}

// TestConcurrentSessions runs oltp_read_write from several users at once on
// small tables, where they collide, and checks that the tables stay whole.
func TestConcurrentSessions(t *testing.T) {
	forEachEngine(t, func(t *testing.T, inst engine.Instance) {
		cfg := smallConfig(ReadWrite)
		cfg.RandType = "special" // crowd the users onto a few rows
		w := prepare(t, inst, cfg)
		col := metrics.NewCollector(w.TxTypes())
		const users, perUser = 4, 60
		var wg sync.WaitGroup
		for u := range users {
			s, err := w.NewSession(context.Background(), inst, u, col.NewRecorder())
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer s.Close()
				for range perUser {
					if err := s.Next(context.Background()); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		col.Tick()
		c := col.StepTotals()[0]
		t.Logf("%d committed, %d failed, %d retried after deadlocks or duplicate keys", c.Committed, c.Failed, c.Retries)
		if c.Committed+c.Failed != users*perUser || c.Failed != 0 {
			t.Errorf("%d committed and %d failed of %d", c.Committed, c.Failed, users*perUser)
		}
		figs := w.Figures([]metrics.TxCounts{c}, time.Second)
		if figs[0].Name != "qps" || figs[0].Value != float64(c.Committed*20) {
			t.Errorf("figures %+v: qps should be 20 queries per committed transaction", figs)
		}
		checks, err := w.Check(context.Background(), inst)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range checks {
			if !ch.Passed {
				t.Errorf("check %s: %s", ch.Name, ch.Detail)
			}
		}
	})
}
