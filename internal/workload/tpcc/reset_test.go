package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/target"
	"dbio/internal/workload"
)

// TestResetEqualsTheLoad: a server's TPC-C database that a run changed and
// --data reset put back holds, table by table, the rows its load wrote
// (their count and a checksum of their contents, every column), is taken
// by the next run as the loaded dataset, and passes the consistency
// checks. The server is the test's own: a reset stops it, which the
// package's shared servers must not see.
func TestResetEqualsTheLoad(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e testEngine) {
		if e.managed == nil {
			t.Skip("SQLite's reset is a copy of one file: the engine's and cmd's tests compare it")
		}
		ctx := context.Background()
		eng, opts := e.managed()
		tg, err := target.Open(reachableDir(t))
		if err != nil {
			t.Fatal(err)
		}
		inst, err := eng.Start(ctx, engine.Placement{Data: tg}, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.Stop(context.Background()) })
		w := New(Config{Warehouses: 1, Loading: workload.Loading{Seed: 1}})
		if _, err := w.Prepare(ctx, inst, io.Discard); err != nil {
			t.Fatal(err)
		}
		loaded := tableSums(t, e.name, inst.DB())
		for _, table := range Tables {
			if loaded[table].rows == 0 {
				t.Fatalf("the load left %s empty: %v", table, loaded)
			}
		}
		r, ok := inst.(engine.Resetter)
		if !ok {
			t.Fatalf("%T keeps no pristine copy", inst)
		}
		dir := filepath.Join(tg.Dir, "pristine")
		kept, err := r.KeepPristine(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		// A short run of the whole mix changes most tables; the sums must
		// see it, or their equality after the reset would prove nothing.
		runUsers(ctx, t, w, inst, 2, metrics.NewCollector(w.TxTypes()), func(ran int) bool { return ran < 40 })()
		if changed := differing(loaded, tableSums(t, e.name, inst.DB())); len(changed) < 5 {
			t.Fatalf("the run changed only %v: too little for the comparison to mean anything", changed)
		}
		restored, err := r.RestorePristine(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("kept by %s (%d bytes), restored by %s (%d bytes)", kept.Method, kept.Bytes, restored.Method, restored.Bytes)
		if restored.Method != kept.Method {
			t.Errorf("kept by %s, restored by %s", kept.Method, restored.Method)
		}
		if changed := differing(loaded, tableSums(t, e.name, inst.DB())); len(changed) != 0 {
			t.Errorf("after the reset these tables differ from the load: %v", changed)
		}
		// The next run keeps the reset data as the load it was.
		again := New(Config{Warehouses: 1, Loading: workload.Loading{Seed: 1, Reuse: true}})
		if st, err := again.Prepare(ctx, inst, io.Discard); err != nil || !st.Reused {
			t.Fatalf("a run after the reset: %+v, %v; want the loaded dataset reused", st, err)
		}
		if again.run != w.run {
			t.Errorf("run-time constants %+v after the reset, %+v after the load", again.run, w.run)
		}
		mustBeConsistent(t, again, inst, "after the reset")
	})
}

// tableSum is a table's row count and a checksum of its rows that does
// not depend on their order (a sum of each row's digest), as the server
// computes them.
type tableSum struct {
	rows int64
	sum  string
}

// tableSums reads every table of db's database, TPC-C's and dbio's record
// of the load alike.
func tableSums(t *testing.T, engineName string, db *sql.DB) map[string]tableSum {
	t.Helper()
	var list string
	switch engineName {
	case "postgres":
		list = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
	case "mariadb":
		list = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'"
	default:
		t.Fatalf("no checksum for %s", engineName)
	}
	tables := queryStrings(t, db, list)
	sums := map[string]tableSum{}
	for _, table := range tables {
		var q string
		if engineName == "postgres" {
			// A row's text names every column, NULLs included; 60 bits of
			// its MD5 are summed as numeric, which cannot overflow.
			q = fmt.Sprintf("SELECT count(*), coalesce(sum(('x' || left(md5(t::text), 15))::bit(60)::bigint), 0)::text FROM %s t", table)
		} else {
			cols := queryStrings(t, db, "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position", table)
			// CONCAT_WS leaves NULLs out: each is written as a byte no
			// value holds, so that moving one to another column shows.
			parts := make([]string, len(cols))
			for i, c := range cols {
				parts[i] = fmt.Sprintf("IFNULL(`%s`, 0x1e)", c)
			}
			q = fmt.Sprintf("SELECT COUNT(*), CAST(IFNULL(SUM(CAST(CONV(LEFT(MD5(CONCAT_WS(0x1f, %s)), 15), 16, 10) AS UNSIGNED)), 0) AS CHAR) FROM `%s`",
				strings.Join(parts, ", "), table)
		}
		var s tableSum
		if err := db.QueryRow(q).Scan(&s.rows, &s.sum); err != nil {
			t.Fatalf("checksum %s: %v", table, err)
		}
		sums[table] = s
	}
	return sums
}

func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// differing names the tables whose count or checksum differ between want
// and got, or that only one of them has.
func differing(want, got map[string]tableSum) []string {
	var out []string
	for _, table := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[table]; !ok || g != want[table] {
			out = append(out, fmt.Sprintf("%s (%+v, was %+v)", table, g, want[table]))
		}
	}
	for table := range got {
		if _, ok := want[table]; !ok {
			out = append(out, table+" (new)")
		}
	}
	return out
}
