package history

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"dbio/internal/engine/enginetest"
	"dbio/internal/results"
)

// testdata are recorded results directories of the report's tests: a
// repeat set of five runs and single TPC-C runs.
const testdata = "../report/testdata"

var servers *enginetest.Servers

func TestMain(m *testing.M) {
	s, stop := enginetest.Start("history")
	servers = s
	code := m.Run()
	stop()
	os.Exit(code)
}

// backends are the stores every test runs against: where a new, empty
// store is for the test.
var backends = []struct {
	name     string
	location func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "share", "dbio", "history.db") }},
	{"postgres", postgresLocation},
}

var databases atomic.Int64

// postgresLocation is the URL of a new database on the package's
// PostgreSQL server, dropped when the test ends. It carries a password
// (the server's own, or one its socket does not ask for) so that the
// tests can look for it in what the store keeps.
func postgresLocation(t *testing.T) string {
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(servers.Instance(t, "postgres").DSN())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("history_%d_%d", os.Getpid(), databases.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if conn, err := pgx.ConnectConfig(ctx, cfg); err == nil {
			conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)")
			conn.Close(ctx)
		}
	})
	password := cfg.Password
	if password == "" {
		password = "Unneeded-Pw-7731"
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(cfg.User, password), Path: "/" + name,
		RawQuery: url.Values{"host": {cfg.Host}, "port": {strconv.Itoa(int(cfg.Port))}, "sslmode": {"disable"}}.Encode()}
	return u.String()
}

func openStore(t *testing.T, location string) *Store {
	t.Helper()
	s, err := Open(location)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// forEachBackend runs f as a subtest on a new store of every backend.
func forEachBackend(t *testing.T, f func(t *testing.T, location string)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b.location(t)) })
	}
}

func TestImportIsIdempotentAndEqualsWhatARunRecords(t *testing.T) {
	forEachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		s := openStore(t, location)
		now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		// The run records itself as it ends (what rememberRun does),
		// then its directory is imported twice, with others.
		dir := filepath.Join(testdata, "tpcc-postgres")
		recorded, err := s.RecordDir(ctx, dir, now)
		if err != nil {
			t.Fatal(err)
		}
		own, err := s.Get(ctx, recorded.ID)
		if err != nil {
			t.Fatal(err)
		}
		dirs := []string{filepath.Join(testdata, "repeats-fast"), dir}
		for range 2 {
			imported, problems := s.Import(ctx, dirs, now)
			if len(problems) > 0 || len(imported) != 6 {
				t.Fatalf("imported %d runs, problems %v", len(imported), problems)
			}
		}
		all, err := s.List(ctx, Filter{})
		if err != nil || len(all) != 6 {
			t.Fatalf("%d runs in the store after importing twice (%v), want 6", len(all), err)
		}
		inSet := 0
		for _, e := range all {
			if filepath.Base(e.RepeatSet) == "repeats-fast" {
				inSet++
			}
		}
		if inSet != 5 {
			t.Errorf("%d runs of the repeat set, want 5", inSet)
		}
		got, err := s.Get(ctx, recorded.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The import keeps the directory by its absolute path; all else
		// is what the run recorded of itself.
		own.Dir, got.Dir = "", ""
		if d := entryDiff(own, got); d != "" {
			t.Errorf("the import differs from what the run recorded: %s", d)
		}
		// And both are what the directory holds.
		l, err := results.LoadSummary(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := EntryOf(l, "")
		want.Dir = ""
		if d := entryDiff(want, got); d != "" {
			t.Errorf("the store differs from the results directory: %s", d)
		}
		if got.Engine != "postgres" || got.Workload != "tpcc" || got.Device == "" || len(got.Figures) < 10 {
			t.Errorf("stored engine %q, workload %q, device %q, %d figures", got.Engine, got.Workload, got.Device, len(got.Figures))
		}
		for _, f := range got.Figures {
			if f.Unit != f.Name.Def().Unit && f.Name.Defined() {
				t.Errorf("figure %s stored in %q, the catalogue's unit is %q", f.Name, f.Unit, f.Name.Def().Unit)
			}
		}
	})
}

// entryDiff names the first field in which two entries differ, "" when
// none does: times compared as instants, the configuration as JSON, the
// figures in any order.
func entryDiff(a, b Entry) string {
	if !a.Started.Equal(b.Started) || !a.Ended.Equal(b.Ended) {
		return fmt.Sprintf("times %s-%s against %s-%s", a.Started, a.Ended, b.Started, b.Ended)
	}
	ca, _ := json.Marshal(a.Config)
	cb, _ := json.Marshal(b.Config)
	if string(ca) != string(cb) {
		return fmt.Sprintf("config %s against %s", ca, cb)
	}
	sortFigures := func(fs []StepFigure) []StepFigure {
		out := append([]StepFigure(nil), fs...)
		sort.Slice(out, func(i, j int) bool {
			if out[i].StepIndex != out[j].StepIndex {
				return out[i].StepIndex < out[j].StepIndex
			}
			return out[i].Name < out[j].Name
		})
		return out
	}
	if fa, fb := sortFigures(a.Figures), sortFigures(b.Figures); !reflect.DeepEqual(fa, fb) {
		return fmt.Sprintf("figures %+v against %+v", fa, fb)
	}
	a.Started, a.Ended, b.Started, b.Ended = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	a.Config, b.Config = results.RunConfig{}, results.RunConfig{}
	a.Figures, b.Figures = nil, nil
	if len(a.Labels) == 0 && len(b.Labels) == 0 {
		a.Labels, b.Labels = nil, nil
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Sprintf("%+v against %+v", a, b)
	}
	return ""
}

// TestThreeRunsTrendInOrder records three TPC-C runs, the newest first,
// and reads NOPM's trend back oldest first, every step's value as its
// run recorded it.
func TestThreeRunsTrendInOrder(t *testing.T) {
	dirs := []string{"tpcc-postgres-dbtime-tmpfs", "tpcc-postgres", "tpcc-paced-sqlite"}
	forEachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		s := openStore(t, location)
		var want []Point
		for _, d := range dirs {
			e, err := s.RecordDir(ctx, filepath.Join(testdata, d), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range e.Figures {
				if f.Name == results.FigureNOPM {
					want = append(want, Point{Run: e, StepFigure: f})
				}
			}
		}
		sort.SliceStable(want, func(i, j int) bool {
			if !want[i].Run.Started.Equal(want[j].Run.Started) {
				return want[i].Run.Started.Before(want[j].Run.Started)
			}
			return want[i].StepIndex < want[j].StepIndex
		})
		points, err := s.Trend(ctx, Filter{}, results.FigureNOPM, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(points) != len(want) || len(want) < 3 {
			t.Fatalf("%d points of NOPM, want %d (at least one a run)", len(points), len(want))
		}
		for i, p := range points {
			w := want[i]
			if p.Run.ID != w.Run.ID || p.Step != w.Step || p.Value != w.Value || p.Unit != "new-orders/min" {
				t.Errorf("point %d: run %s step %s %g %s, want run %s step %s %g", i, p.Run.ID, p.Step, p.Value, p.Unit, w.Run.ID, w.Step, w.Value)
			}
		}
		pg, err := s.Trend(ctx, Filter{Engine: "postgres", Storage: "tmpfs"}, results.FigureNOPM, "users-1")
		if err != nil {
			t.Fatal(err)
		}
		if len(pg) != 1 || pg[0].Run.Engine != "postgres" || pg[0].Step != "users-1" {
			t.Errorf("PostgreSQL on tmpfs at users-1: %+v", pg)
		}
		if none, _ := s.List(ctx, Filter{Since: time.Now()}); len(none) != 0 {
			t.Errorf("%d runs since now", len(none))
		}
		if sqlite, _ := s.List(ctx, Filter{Engine: "sqlite"}); len(sqlite) != 1 {
			t.Errorf("%d SQLite runs, want 1", len(sqlite))
		}
	})
}

// TestTwoWritersAtOnceBothLand records runs from stores opened on one
// store at the same moment, as dbio processes ending together do.
func TestTwoWritersAtOnceBothLand(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(testdata, "repeats-fast", "2026*"))
	if len(dirs) < 4 {
		t.Fatalf("testdata: %v", dirs)
	}
	forEachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make([]error, len(dirs))
		for i, dir := range dirs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := Open(location)
				if err != nil {
					errs[i] = err
					return
				}
				defer s.Close()
				_, errs[i] = s.RecordDir(ctx, dir, time.Now())
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		s := openStore(t, location)
		if all, _ := s.List(ctx, Filter{}); len(all) != len(dirs) {
			t.Errorf("%d runs landed, want %d", len(all), len(dirs))
		}
	})
}

// TestPostgresStoreKeepsToItsSchemaAndNoPassword opens a store in a
// database, finds no password anywhere it wrote or shows, and refuses a
// schema of dbio's name that dbio did not create.
func TestPostgresStoreKeepsToItsSchemaAndNoPassword(t *testing.T) {
	ctx := context.Background()
	location := postgresLocation(t)
	u, _ := url.Parse(location)
	password, _ := u.User.Password()
	s := openStore(t, location)
	if strings.Contains(s.Path(), password) || !strings.Contains(s.Path(), u.Path) {
		t.Errorf("the store shows itself as %q", s.Path())
	}
	e, err := s.RecordDir(ctx, filepath.Join(testdata, "tpcc-postgres"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// A run whose command named the store's URL as it was typed.
	e.ID, e.Command = "named-the-store", "dbio tpcc --history "+location
	if err := s.Record(ctx, e, time.Now()); err != nil {
		t.Fatal(err)
	}
	var dump string
	if err := s.db.QueryRowContext(ctx, `SELECT string_agg(r::text, ' ') FROM (SELECT * FROM runs) r`).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dump, password) || !strings.Contains(dump, "--history postgres://") {
		t.Errorf("the store keeps the password or not the command: %s", dump)
	}
	var tables []string
	rows, err := s.db.QueryContext(ctx, `SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	if want := []string{"dbio_history.figures", "dbio_history.runs"}; !reflect.DeepEqual(tables, want) {
		t.Errorf("tables %v, want %v", tables, want)
	}
	// Opened again, the store is dbio's and keeps its runs.
	again := openStore(t, location)
	if all, err := again.List(ctx, Filter{}); err != nil || len(all) != 2 {
		t.Errorf("reopened: %d runs (%v), want 2", len(all), err)
	}

	// A schema of the name that someone else made is left alone.
	other := postgresLocation(t)
	cfg, err := pgx.ParseConfig(other)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+PostgresSchema+"; CREATE TABLE "+PostgresSchema+".theirs (x int)"); err != nil {
		t.Fatal(err)
	}
	_, err = Open(other)
	if err == nil || !strings.Contains(err.Error(), "is not dbio's") || strings.Contains(err.Error(), password) {
		t.Fatalf("a schema dbio did not create opened as its store: %v", err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1`, PostgresSchema).Scan(&n); err != nil || n != 1 {
		t.Errorf("the foreign schema holds %d tables (%v), want its own 1", n, err)
	}
}

func TestOpenRefusesWhatIsNoStore(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir); err == nil {
		t.Error("a directory opened as the store")
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere.db"), filepath.Join(dir, "link.db")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(dir, "link.db")); err == nil {
		t.Error("a link opened as the store")
	}
}
