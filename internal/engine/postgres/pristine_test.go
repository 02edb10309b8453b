package postgres

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"dbio/internal/engine"
)

// A pristine copy of a loaded database, restored twice after runs changed
// it, gives back the loaded rows each time, by either route on one
// server, with the WAL on its own target: a template database in the
// instance, then a copy of the stopped server's files, which drops the
// template the first copy left.
func TestPristineCopyRestoresTheLoadedState(t *testing.T) {
	e := realEngine(t)
	ctx := context.Background()
	p := engine.Placement{Data: reachableTarget(t, "data"), Log: reachableTarget(t, "wal")}
	in := start(t, e, p, engine.Options{})
	db := in.DB()
	if _, err := db.Exec("CREATE TABLE loaded AS SELECT g AS id FROM generate_series(1, 10000) g"); err != nil {
		t.Fatal(err)
	}
	template := in.Facts.Database + pristineSuffix
	// The instance's databases that are templates, and those that are
	// dbio's, by name.
	databases := func() (templates, dbios int64) {
		return count(t, db, "SELECT count(*) FROM pg_database WHERE datistemplate AND NOT datallowconn AND datname = '"+template+"'"),
			count(t, db, "SELECT count(*) FROM pg_database WHERE shobj_description(oid, 'pg_database') = '"+OwnerComment+"'")
	}
	// KeepPristine's own choice: the template, unless the data target
	// clones files.
	if want, got := !clones(p.Data.Dir), in.pristineRoute(filepath.Join(p.Data.Dir, "pristine")) == routeTemplate; got != want {
		t.Errorf("KeepPristine takes the template route: %v, want %v (the data target clones: %v)", got, want, !want)
	}
	for _, tc := range []struct {
		name    string
		route   pristineRoute
		methods []string
		// templates is how many template databases the copy leaves.
		templates int64
	}{
		{"template", routeTemplate, []string{engine.CopyTemplate}, 1},
		{"files", routeFiles, []string{engine.CopyBytes, engine.CopyReflink}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(p.Data.Dir, "pristine-"+tc.name)
			kept, err := in.keepPristine(ctx, dir, tc.route)
			if err != nil {
				t.Fatalf("keep a pristine copy: %v", err)
			}
			if !slices.Contains(tc.methods, kept.Method) || kept.Bytes < 1<<20 {
				t.Errorf("keep = %+v, want a copy by %v", kept, tc.methods)
			}
			_, recErr := os.Stat(filepath.Join(dir, templateRecordFile))
			if (tc.route == routeTemplate) != (recErr == nil) {
				t.Errorf("the copy's record of a template database: %v", recErr)
			}
			for run := 1; run <= 2; run++ {
				// A run's changes: rows added and rows removed.
				if _, err := db.Exec("INSERT INTO loaded SELECT g FROM generate_series(10001, 10500) g; DELETE FROM loaded WHERE id <= 100"); err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
				restored, err := in.RestorePristine(ctx, dir)
				if err != nil {
					t.Fatalf("RestorePristine after run %d: %v", run, err)
				}
				if !slices.Contains(tc.methods, restored.Method) {
					t.Errorf("restore = %+v, want a copy by %v", restored, tc.methods)
				}
				if n := count(t, db, "SELECT count(*) FROM loaded"); n != 10000 {
					t.Errorf("after run %d and a reset: %d rows, want the 10000 loaded", run, n)
				}
				if n := count(t, db, "SELECT max(id) FROM loaded"); n != 10000 {
					t.Errorf("after run %d and a reset: ids up to %d, want 10000", run, n)
				}
				// The database is dbio's again, as the next start checks, and
				// the template stays one no one can connect to.
				if templates, dbios := databases(); templates != tc.templates || dbios != 1+tc.templates {
					t.Errorf("after run %d and a reset: %d templates of dbio's, %d databases of dbio's; want %d and %d",
						run, templates, dbios, tc.templates, 1+tc.templates)
				}
			}
			if tc.route == routeTemplate {
				// A template gone with the instance it was in (one created
				// again since) is said to be gone, and nothing is replaced.
				if err := in.dropTemplate(ctx, template); err != nil {
					t.Fatal(err)
				}
				if _, err := in.RestorePristine(ctx, dir); !errors.Is(err, engine.ErrPristineGone) {
					t.Errorf("RestorePristine without its template: %v, want %v", err, engine.ErrPristineGone)
				}
				if n := count(t, db, "SELECT count(*) FROM loaded"); n != 10000 {
					t.Errorf("a restore without its template left %d rows, want the 10000 there", n)
				}
			}
		})
	}
	select {
	case err := <-in.Exited():
		t.Errorf("Exited yielded %v after a reset", err)
	default:
	}
}

var benchPristineRows = flag.Int("pristine-rows", 700000, "BenchmarkPristineRoutes: rows of the synthetic table (700,000: about 220 MB with its index)")

// BenchmarkPristineRoutes times both routes of --data reset on one server
// and one database, round after round (one round an iteration, the
// routes' order alternating so that a drift in the machine's load weighs
// on both alike): each keeps a copy, a run changes a tenth of the rows,
// and the copy is restored. It reports the medians of the keeps and the
// restores, and the median of each round's ratio of the template's
// restore to the files', which holds on a loaded machine where the
// seconds do not. The data target is a temporary directory (a file
// system without clones makes the files' route a copy of every byte).
func BenchmarkPristineRoutes(b *testing.B) {
	e := realEngine(b)
	ctx := context.Background()
	p := engine.Placement{Data: reachableTarget(b, "data")}
	started, err := e.Start(ctx, p, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	in := started.(*Instance)
	defer in.Stop(ctx)
	db := in.DB()
	if _, err := db.Exec(fmt.Sprintf(`CREATE TABLE stock AS SELECT g AS id, g %% 100 AS qty,
  md5(random()::text) || md5(random()::text) || md5(random()::text) || md5(random()::text) ||
  md5(random()::text) || md5(random()::text) || md5(random()::text) || md5(random()::text) AS data
FROM generate_series(1, %d) g; ALTER TABLE stock ADD PRIMARY KEY (id); CHECKPOINT`, *benchPristineRows)); err != nil {
		b.Fatal(err)
	}
	var size int64
	if err := db.QueryRow("SELECT pg_database_size(current_database())").Scan(&size); err != nil {
		b.Fatal(err)
	}
	routes := []struct {
		name  string
		route pristineRoute
	}{{"files", routeFiles}, {"template", routeTemplate}}
	keeps, restores := make([][]float64, len(routes)), make([][]float64, len(routes))
	var ratios []float64
	b.ResetTimer()
	for i := range b.N {
		round := make([]float64, len(routes))
		for k := range routes {
			ri := (k + i) % len(routes)
			r := routes[ri]
			dir := filepath.Join(p.Data.Dir, fmt.Sprintf("pristine-%s-%d", r.name, i))
			began := time.Now()
			if _, err := in.keepPristine(ctx, dir, r.route); err != nil {
				b.Fatal(err)
			}
			kept := time.Since(began).Seconds()
			if _, err := db.Exec("UPDATE stock SET qty = qty + 1 WHERE id % 10 = 0"); err != nil {
				b.Fatal(err)
			}
			began = time.Now()
			c, err := in.RestorePristine(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			restored := time.Since(began).Seconds()
			keeps[ri], restores[ri] = append(keeps[ri], kept), append(restores[ri], restored)
			round[ri] = restored
			b.Logf("round %d, %s: kept in %.2f s, restored in %.2f s (%s of %d MB)", i+1, r.name, kept, restored, c.Method, c.Bytes>>20)
			if err := os.RemoveAll(dir); err != nil {
				b.Fatal(err)
			}
		}
		ratios = append(ratios, round[1]/round[0])
	}
	b.StopTimer()
	for ri, r := range routes {
		b.ReportMetric(median(keeps[ri]), r.name+"-keep-s")
		b.ReportMetric(median(restores[ri]), r.name+"-restore-s")
	}
	b.ReportMetric(median(ratios), "template/files")
	b.ReportMetric(float64(size)/(1<<20), "db-MB")
	slices.Sort(ratios)
	b.Logf("database %d MB; template/files restore ratios by round, sorted: %.2f", size>>20, ratios)
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
