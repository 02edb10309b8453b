package sqlclient

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-sqlite3"

	"dbio/internal/engine/enginetest"
	"dbio/internal/engine/txerr"
	"dbio/internal/metrics"
	"dbio/internal/progress"
	"dbio/internal/results"
	"dbio/internal/workload"
)

// named is an instance that only names its engine and database: enough to
// choose a dialect without a server.
type named struct{ engine, dsn string }

func (n named) DB() *sql.DB                { return nil }
func (n named) Driver() string             { return "" }
func (n named) DSN() string                { return n.dsn }
func (n named) Info() results.EngineInfo   { return results.EngineInfo{Engine: n.engine} }
func (n named) Stop(context.Context) error { return nil }

func TestFor(t *testing.T) {
	for _, tc := range []struct {
		engine                            string
		bound, beginWrite, forUpdate, ddl string
		loadWorkers                       int
		choice                            string
		queuesWriters                     bool
	}{
		{"sqlite", "a = ? AND b = ?", "BEGIN IMMEDIATE", "", "CREATE TABLE t (a INT)", 1, "s", true},
		{"postgres", "a = $1 AND b = $2", "BEGIN", " FOR UPDATE", "CREATE TABLE t (a INT)", 4, "p", false},
		{"mariadb", "a = ? AND b = ?", "BEGIN", " FOR UPDATE", "CREATE TABLE t (a INT) ENGINE = InnoDB", 4, "m", false},
		{"mysql", "a = ? AND b = ?", "BEGIN", " FOR UPDATE", "CREATE TABLE t (a INT) ENGINE = InnoDB", 4, "m", false},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			d, err := For("w", named{engine: tc.engine, dsn: "db"}, &Writers{})
			if err != nil {
				t.Fatal(err)
			}
			got := []string{d.Bind("a = ? AND b = ?"), d.BeginWrite, d.ForUpdate, d.CreateTable("t", "a INT"), d.BeginRead}
			want := []string{tc.bound, tc.beginWrite, tc.forUpdate, tc.ddl, "BEGIN"}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("got %q, want %q", got[i], want[i])
				}
			}
			if d.LoadWorkers != tc.loadWorkers {
				t.Errorf("load workers %d, want %d", d.LoadWorkers, tc.loadWorkers)
			}
			if c := (ByEngine[string]{SQLite: "s", Postgres: "p", MySQL: "m"}).For(d); c != tc.choice {
				t.Errorf("ByEngine chose %q, want %q", c, tc.choice)
			}
			if (d.writeLock != nil) != tc.queuesWriters {
				t.Errorf("queues writers: %v, want %v", d.writeLock != nil, tc.queuesWriters)
			}
			// A user past the blocking ones waits in the poller, except on
			// SQLite, which has no socket (and so yields per transaction).
			if got := d.ForUser(runtime.GOMAXPROCS(0)).InPoller(); got != (tc.engine != "sqlite") {
				t.Errorf("%s: a late user in the poller: %v", tc.engine, got)
			}
			// The results say which sessions block on their sockets, and
			// under which GOMAXPROCS, for the engines reached by socket.
			note := d.SocketsNote()
			if sockets := tc.engine != "sqlite"; sockets != strings.Contains(note, fmt.Sprintf("GOMAXPROCS=%d", runtime.GOMAXPROCS(0))) || !sockets && note != "" {
				t.Errorf("sockets note %q for %s", note, tc.engine)
			}
		})
	}
	_, err := For("w", named{engine: "oracle"}, &Writers{})
	if err == nil || err.Error() != `w does not support engine "oracle" (supported: mariadb, mysql, postgres, sqlite)` {
		t.Errorf("unsupported engine: %v", err)
	}
}

// TestWriters checks that dialects sharing Writers queue on one lock per
// database, and dialects of other Writers or other databases do not.
func TestWriters(t *testing.T) {
	shared := &Writers{}
	for _, tc := range []struct {
		name    string
		other   func() (*Dialect, error)
		blocked bool
	}{
		{"same writers, same database", func() (*Dialect, error) { return For("w", named{"sqlite", "a.db"}, shared) }, true},
		{"same writers, other database", func() (*Dialect, error) { return For("w", named{"sqlite", "b.db"}, shared) }, false},
		{"other writers, same database", func() (*Dialect, error) { return For("w", named{"sqlite", "a.db"}, &Writers{}) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := For("w", named{"sqlite", "a.db"}, shared)
			if err != nil {
				t.Fatal(err)
			}
			o, err := tc.other()
			if err != nil {
				t.Fatal(err)
			}
			unlock := d.LockWrites()
			free := o.writeLock.TryLock()
			if free {
				o.writeLock.Unlock()
			}
			unlock()
			if free == tc.blocked {
				t.Errorf("other writer blocked: %v, want %v", !free, tc.blocked)
			}
		})
	}
	pg, err := For("w", named{engine: "postgres"}, shared)
	if err != nil {
		t.Fatal(err)
	}
	pg.LockWrites()() // no queue: must neither block nor panic
}

func TestInsertSQL(t *testing.T) {
	for _, tc := range []struct {
		engine string
		rows   int
		want   string
	}{
		{"sqlite", 1, "INSERT INTO t (a, b) VALUES (?, ?)"},
		{"sqlite", 2, "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)"},
		{"postgres", 2, "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)"},
	} {
		d, err := For("w", named{engine: tc.engine}, &Writers{})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.InsertSQL("t", []string{"a", "b"}, tc.rows); got != tc.want {
			t.Errorf("%s, %d rows: %q, want %q", tc.engine, tc.rows, got, tc.want)
		}
	}
}

// servers are the package's test engines: only SQLite, a fresh database
// in a temporary directory per test.
var servers *enginetest.Servers

func TestMain(m *testing.M) {
	s, stop := enginetest.Start("sqlclient")
	servers = s
	code := m.Run()
	stop()
	os.Exit(code)
}

// sqliteDB is a new SQLite database and its dialect.
func sqliteDB(t *testing.T) (*sql.DB, *Dialect) {
	t.Helper()
	inst := servers.Instance(t, "sqlite")
	d, err := For("w", inst, &Writers{})
	if err != nil {
		t.Fatal(err)
	}
	return inst.DB(), d
}

func queryInt(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestLoadTables loads tables whose row counts fall around the batch and
// transaction sizes and checks every row, index and log line: a meter's
// line at every tenth of the rows, and one line for the whole load.
func TestLoadTables(t *testing.T) {
	db, d := sqliteDB(t)
	ctx := context.Background()
	sizes := []int{1, 6, 7, 20, 23}
	var after []string
	tables := make([]Table, len(sizes))
	for i, n := range sizes {
		name := fmt.Sprintf("t%d", i)
		tables[i] = Table{
			Name: name, Create: d.CreateTable(name, "id INTEGER NOT NULL PRIMARY KEY, v INTEGER NOT NULL"),
			Columns: []string{"id", "v"}, Rows: n,
			Row:       func(args []any, id int) []any { return append(args, id, 2*id) },
			Indexes:   []Index{{Name: name + "_v", Column: "v"}},
			BatchRows: 3, TxRows: 6,
			AfterLoad: func(context.Context, *sql.Conn) error { after = append(after, name); return nil },
		}
	}
	var log strings.Builder
	if err := d.LoadTables(ctx, db, "test", tables, 0, time.Now(), &log); err != nil {
		t.Fatal(err)
	}
	for i, n := range sizes {
		name := fmt.Sprintf("t%d", i)
		q := fmt.Sprintf("SELECT COUNT(*), COALESCE(SUM(id), 0), COALESCE(SUM(v), 0) FROM %s", name)
		var rows, ids, vs int
		if err := db.QueryRow(q).Scan(&rows, &ids, &vs); err != nil {
			t.Fatal(err)
		}
		if want := n * (n + 1) / 2; rows != n || ids != want || vs != 2*want {
			t.Errorf("%s: %d rows, ids summing to %d and values to %d; want %d, %d, %d", name, rows, ids, vs, n, want, 2*want)
		}
		if queryInt(t, db, fmt.Sprintf("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = '%s_v'", name)) != 1 {
			t.Errorf("%s: no index %s_v", name, name)
		}
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	meter := regexp.MustCompile(`^loading test: \d+% \([\d,]+ of 57 rows\)`)
	for _, l := range lines[:len(lines)-1] {
		if !meter.MatchString(l) {
			t.Errorf("a log line %q that is not the meter's", l)
		}
	}
	if len(lines) < 2 || len(lines) > 10 {
		t.Errorf("%d lines for a load logged every tenth of its rows, then once:\n%s", len(lines), log.String())
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "loaded 5 tables: 57 rows in ") {
		t.Errorf("the last line %q does not say the whole load", last)
	}
	if len(after) != len(sizes) {
		t.Errorf("AfterLoad ran for %v, want every table", after)
	}

	if err := DropTables(ctx, db, "t0", "t1", "missing"); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('t0', 't1')"); n != 0 {
		t.Errorf("%d dropped tables remain", n)
	}
}

// TestLoadMeterOnAnEightyColumnTerminal: on a terminal the load is one
// line redrawn in place, within 79 columns of an 80-column terminal
// however long its name, cleared at the end for the load's one line.
func TestLoadMeterOnAnEightyColumnTerminal(t *testing.T) {
	db, d := sqliteDB(t)
	tables := make([]Table, 4)
	for i := range tables {
		name := fmt.Sprintf("relation_with_a_long_name_%d", i)
		tables[i] = Table{
			Name: name, Create: d.CreateTable(name, "id INTEGER NOT NULL PRIMARY KEY"), Columns: []string{"id"}, Rows: 2000,
			Row: func(args []any, id int) []any { return append(args, id) }, BatchRows: 50, TxRows: 100,
		}
	}
	var term bytes.Buffer
	line := progress.NewTerminal(&term, 80)
	if err := d.LoadTables(context.Background(), db, "a workload with a name long enough to need cutting", tables, 2, time.Now(), line.Messages(&term)); err != nil {
		t.Fatal(err)
	}
	out := term.String()
	draws := 0
	for _, seg := range strings.Split(out, "\r") {
		if utf8.RuneCountInString(seg) > 79 {
			t.Errorf("a redraw of %d columns on an 80-column terminal: %q", utf8.RuneCountInString(seg), seg)
		}
		if strings.HasPrefix(seg, "loading a workload") {
			draws++
		}
	}
	if draws < 2 || strings.Count(out, "\n") != 1 || !strings.Contains(out, "loaded 4 tables: 8,000 rows in ") {
		t.Errorf("want the meter redrawn in place (%d draws) and one line for the load:\n%q", draws, out)
	}
}

// TestLoadFailureRollsBack checks that a row the table refuses stops the
// load with the error and leaves none of its transaction behind.
func TestLoadFailureRollsBack(t *testing.T) {
	db, d := sqliteDB(t)
	tab := Table{
		Name: "t", Create: d.CreateTable("t", "id INTEGER NOT NULL PRIMARY KEY"), Columns: []string{"id"}, Rows: 10,
		Row:       func(args []any, id int) []any { return append(args, min(id, 8)) }, // 9 and 10 repeat 8
		BatchRows: 2, TxRows: 4,
	}
	err := d.LoadTables(context.Background(), db, "test", []Table{tab}, 1, time.Now(), &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "load t: insert rows up to 10") {
		t.Fatalf("load of duplicate keys: %v", err)
	}
	if n := queryInt(t, db, "SELECT COUNT(*) FROM t"); n != 8 {
		t.Errorf("%d rows after the failed transaction, want the 8 of the two committed ones", n)
	}
}

func TestMeta(t *testing.T) {
	db, d := sqliteDB(t)
	ctx := context.Background()
	if m, ok := ReadMeta(ctx, db, "meta"); ok || len(m) != 0 {
		t.Errorf("no table read as %v, %v", m, ok)
	}
	kvs := [][2]string{{"rows", "1000"}, {"seed", "42"}}
	if err := d.WriteMeta(ctx, db, "meta", kvs); err != nil {
		t.Fatal(err)
	}
	m, ok := ReadMeta(ctx, db, "meta")
	if !ok || len(m) != len(kvs) || m["rows"] != "1000" || m["seed"] != "42" {
		t.Errorf("read back %v, %v", m, ok)
	}
	if err := d.WriteMeta(ctx, db, "meta", kvs); err == nil {
		t.Error("a second record of a load over the first went unnoticed")
	}
}

// TestRun drives one transaction through each outcome an error can have and
// checks what the recorder counted.
func TestRun(t *testing.T) {
	busy := sqlite3.Error{Code: sqlite3.ErrBusy}
	for _, tc := range []struct {
		name string
		// errs are the attempts' errors in turn; after them attempts succeed.
		errs     []error
		classify txerr.Classifier
		cancel   bool

		committed, failed, retries, reconnects int64
		lost                                   bool
		attempts                               int
	}{
		{name: "commits", committed: 1, attempts: 1},
		{name: "retried until it commits", errs: []error{busy, busy}, committed: 1, retries: 2, attempts: 3},
		{name: "retries give out", errs: repeat(busy, MaxRetries+1), failed: 1, retries: MaxRetries, attempts: MaxRetries + 1},
		{name: "fails", errs: []error{errors.New("constraint")}, failed: 1, attempts: 1},
		{name: "database gone", errs: []error{sqlite3.Error{Code: sqlite3.ErrFull}}, lost: true, attempts: 1},
		{name: "connection lost", errs: []error{errors.New("gone")}, classify: func(error) txerr.Class { return txerr.Lost },
			failed: 1, reconnects: 1, attempts: 1},
		{name: "cancelled", errs: []error{errors.New("cancelled")}, cancel: true, attempts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, d := sqliteDB(t)
			if tc.classify != nil {
				d.Classify = tc.classify
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			col := metrics.NewCollector([]string{"a", "b"})
			c, err := Connect(ctx, db, d, col.NewRecorder())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			attempts := 0
			err = c.Run(ctx, 1, "b", func() error {
				attempts++
				if tc.cancel {
					cancel()
				}
				if attempts <= len(tc.errs) {
					return tc.errs[attempts-1]
				}
				return nil
			})
			if lost := errors.Is(err, workload.ErrSessionLost); lost != tc.lost || (err != nil && !lost) {
				t.Errorf("Run: %v; want the session lost: %v", err, tc.lost)
			}
			if attempts != tc.attempts {
				t.Errorf("%d attempts, want %d", attempts, tc.attempts)
			}
			col.Tick()
			got := col.StepTotals()[1]
			if got.Committed != tc.committed || got.Failed != tc.failed || got.Retries != tc.retries || got.Reconnects != tc.reconnects {
				t.Errorf("counted %d committed, %d failed, %d retries, %d reconnects; want %d, %d, %d, %d",
					got.Committed, got.Failed, got.Retries, got.Reconnects, tc.committed, tc.failed, tc.retries, tc.reconnects)
			}
			if !tc.lost {
				// The session goes on: on a new connection after a lost one.
				if _, err := c.Write(context.Background(), "CREATE TABLE after_run (a INTEGER)"); err != nil {
					t.Errorf("the connection is unusable after the transaction: %v", err)
				}
			}
		})
	}
}

func repeat(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

// TestTx checks that a transaction's rows are there after it commits and
// gone after its body fails.
func TestTx(t *testing.T) {
	db, d := sqliteDB(t)
	ctx := context.Background()
	if _, err := db.Exec("CREATE TABLE t (a INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	c, err := Connect(ctx, db, d, metrics.NewCollector([]string{"a"}).NewRecorder())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		body error
		rows int
	}{{"commits", nil, 2}, {"rolls back", boom, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Tx(ctx, d.BeginWrite, func() error {
				for v := range 2 {
					if _, err := c.Write(ctx, "INSERT INTO t (a) VALUES (?)", v); err != nil {
						return err
					}
				}
				return tc.body
			})
			if !errors.Is(err, tc.body) {
				t.Errorf("Tx: %v, want %v", err, tc.body)
			}
			if n := queryInt(t, db, "SELECT COUNT(*) FROM t"); n != tc.rows {
				t.Errorf("%d rows, want %d", n, tc.rows)
			}
			if n, err := c.Read(ctx, "SELECT a, a FROM t WHERE a >= ?", 0); err != nil || n != tc.rows {
				t.Errorf("read %d rows (%v), want %d", n, err, tc.rows)
			}
		})
	}
}

// TestPrepare loads, keeps and replaces a load as its record allows, drops
// the tables an earlier, larger load left, and returns a refusal of the
// load there with nothing written.
func TestPrepare(t *testing.T) {
	db, d := sqliteDB(t)
	ctx := context.Background()
	load := func(tables int, reuse bool) Load {
		l := Load{
			MetaTable: "meta",
			Record:    [][2]string{{"tables", fmt.Sprint(tables)}},
			Stale: func(meta map[string]string) []string {
				var n int
				fmt.Sscan(meta["tables"], &n)
				var stale []string
				for i := tables + 1; i <= n; i++ {
					stale = append(stale, fmt.Sprintf("t%d", i))
				}
				return stale
			},
			Tables: func() []Table {
				var out []Table
				for i := 1; i <= tables; i++ {
					name := fmt.Sprintf("t%d", i)
					out = append(out, Table{Name: name, Create: d.CreateTable(name, "id INTEGER NOT NULL PRIMARY KEY"),
						Columns: []string{"id"}, Rows: 5, Row: func(args []any, id int) []any { return append(args, id) },
						BatchRows: 2, TxRows: 4})
				}
				return out
			},
		}
		if reuse {
			l.Reuse = func(meta map[string]string) error {
				if meta["tables"] != fmt.Sprint(tables) {
					return fmt.Errorf("%s tables there, %d wanted", meta["tables"], tables)
				}
				return nil
			}
		}
		return l
	}
	tableCount := func() int {
		return queryInt(t, db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 't%'")
	}
	for _, tc := range []struct {
		name    string
		tables  int
		reuse   bool
		reused  bool
		refused string
		present int
	}{
		{"first load", 3, true, false, "", 3},
		{"same load kept", 3, true, true, "", 3},
		{"same load not kept without reuse", 3, false, false, "", 3},
		{"another load refused", 1, true, false, "3 tables there, 1 wanted", 3},
		{"smaller load drops the rest", 1, false, false, "", 1},
		{"larger load", 2, false, false, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A marker row shows whether t1 was loaded again.
			if tableCount() > 0 {
				if _, err := db.Exec("INSERT OR IGNORE INTO t1 (id) VALUES (100)"); err != nil {
					t.Fatal(err)
				}
			}
			reused, took, err := d.Prepare(ctx, db, load(tc.tables, tc.reuse), &strings.Builder{})
			if tc.refused != "" {
				if err == nil || err.Error() != tc.refused {
					t.Fatalf("Prepare: %v, want the refusal %q", err, tc.refused)
				}
				// Nothing written: every table and the marker row stay.
				if n := tableCount(); n != tc.present {
					t.Errorf("%d tables after the refusal, want %d", n, tc.present)
				}
				if n := queryInt(t, db, "SELECT COUNT(*) FROM t1"); n != 6 {
					t.Errorf("t1 has %d rows after the refusal, want the 6 there", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if reused != tc.reused || (took > 0) == reused {
				t.Errorf("reused %v after %s, want reused %v", reused, took, tc.reused)
			}
			if n := tableCount(); n != tc.present {
				t.Errorf("%d tables, want %d", n, tc.present)
			}
			wantRows := 5
			if tc.reused {
				wantRows = 6
			}
			if n := queryInt(t, db, "SELECT COUNT(*) FROM t1"); n != wantRows {
				t.Errorf("t1 has %d rows, want %d", n, wantRows)
			}
		})
	}
}

// TestSocketsForUser pins which sessions wait in blocking system calls:
// by the engine's choice the first GOMAXPROCS-1 users on PostgreSQL and
// MariaDB alike, and no background job; an override applies to every
// session, so that a figure labelled "blocking" or "poller" is that; the
// results' note says the same.
func TestSocketsForUser(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	type session struct {
		user       int
		background bool
	}
	users := []session{{0, false}, {1, false}, {2, false}, {3, false}, {7, false}, {0, true}}
	for _, tc := range []struct {
		name, engine string
		sockets      Sockets
		// blocking is whether each of users has a blocking socket.
		blocking []bool
		// note is what the results' note on sockets says.
		note string
	}{
		{"postgres by engine", "postgres", SocketsByEngine, []bool{true, true, true, false, false, false}, "first GOMAXPROCS-1 sessions"},
		{"mariadb by engine", "mariadb", SocketsByEngine, []bool{true, true, true, false, false, false}, "first GOMAXPROCS-1 sessions"},
		{"postgres blocking", "postgres", SocketsBlocking, []bool{true, true, true, true, true, true}, "every session reads and writes its socket with blocking"},
		{"mariadb blocking", "mariadb", SocketsBlocking, []bool{true, true, true, true, true, true}, "every session reads and writes its socket with blocking"},
		{"postgres poller", "postgres", SocketsPoller, []bool{false, false, false, false, false, false}, "every session waits for the server through"},
		{"mariadb poller", "mariadb", SocketsPoller, []bool{false, false, false, false, false, false}, "every session waits for the server through"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := For("w", named{engine: tc.engine, dsn: "db"}, &Writers{})
			if err != nil {
				t.Fatal(err)
			}
			d.Sockets = tc.sockets
			for i, s := range users {
				sd := d.ForUser(s.user)
				if s.background {
					sd = d.ForBackground()
				}
				if blocking := !sd.InPoller(); blocking != tc.blocking[i] {
					t.Errorf("user %d (background %v): blocking %v, want %v", s.user, s.background, blocking, tc.blocking[i])
				}
			}
			if note := d.SocketsNote(); !strings.Contains(note, tc.note) {
				t.Errorf("the note on sockets %q does not say %q", note, tc.note)
			}
		})
	}
}

// TestPreparedLimitSendsText runs a session's statement on MariaDB with
// max_prepared_stmt_count at 0, as a server whose limit other sessions
// used up: the server refuses to prepare it (error 1461) and the session
// sends it as text instead, as sysbench's --db-ps-mode=auto does.
func TestPreparedLimitSendsText(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	inst := servers.Instance(t, "mariadb")
	db := inst.DB()
	var limit int
	if err := db.QueryRow("SELECT @@max_prepared_stmt_count").Scan(&limit); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SET GLOBAL max_prepared_stmt_count = 0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := db.Exec(fmt.Sprintf("SET GLOBAL max_prepared_stmt_count = %d", limit)); err != nil {
			t.Errorf("restore max_prepared_stmt_count %d: %v", limit, err)
		}
	})
	d, err := For("w", inst, &Writers{})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []struct {
		name string
		d    *Dialect
	}{{"user", d.ForUser(0)}, {"background", d.ForBackground()}} {
		t.Run(kind.name, func(t *testing.T) {
			c, err := Connect(context.Background(), db, kind.d, metrics.NewCollector([]string{"a"}).NewRecorder())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			n, err := c.Read(context.Background(), "SELECT ? UNION ALL SELECT ?", 1, 2)
			if err != nil || n != 2 {
				t.Fatalf("read over the prepared statement limit: %d rows, %v; want 2 rows", n, err)
			}
			// Received as text, its rows skipped: the connection goes on.
			if err := c.Receive(context.Background(), "SELECT ? UNION ALL SELECT ? UNION ALL SELECT ?", 1, 2, 3); err != nil {
				t.Fatalf("receive over the prepared statement limit: %v", err)
			}
			if n, err := c.Read(context.Background(), "SELECT ? UNION ALL SELECT ?", 1, 2); err != nil || n != 2 {
				t.Fatalf("read after a received result: %d rows, %v; want 2 rows", n, err)
			}
		})
	}
}
