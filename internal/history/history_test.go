package history

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"dbio/internal/results"
)

// testdata are recorded results directories of the report's tests: a
// repeat set of five runs and single TPC-C runs.
const testdata = "../report/testdata"

func openStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "share", "dbio", "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestImportIsIdempotentAndEqualsWhatARunRecords(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	dirs := []string{filepath.Join(testdata, "repeats-fast"), filepath.Join(testdata, "tpcc-postgres")}
	imported, problems := s.Import(ctx, dirs, now)
	if len(problems) > 0 || len(imported) != 6 {
		t.Fatalf("imported %d runs, problems %v", len(imported), problems)
	}
	again, problems := s.Import(ctx, dirs, now)
	if len(problems) > 0 || len(again) != 6 {
		t.Fatalf("imported again %d runs, problems %v", len(again), problems)
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
	// What the store keeps of a run is what its directory records: the
	// run recorded by itself (RecordDir) equals the import.
	dir := filepath.Join(testdata, "tpcc-postgres")
	l, err := results.LoadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, l.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	figures := 0
	for _, st := range l.Steps {
		figures += len(st.Figures)
	}
	figures += len(l.Run.Figures)
	if len(got.Figures) != figures || got.Engine != "postgres" || got.Workload != "tpcc" || got.Kernel != l.Run.Environment.Kernel || got.Device == "" {
		t.Errorf("stored %d figures (want %d), engine %q, workload %q, kernel %q, device %q", len(got.Figures), figures, got.Engine, got.Workload, got.Kernel, got.Device)
	}
	for _, f := range got.Figures {
		if f.Unit != f.Name.Def().Unit && f.Name.Defined() {
			t.Errorf("figure %s stored in %q, the catalogue's unit is %q", f.Name, f.Unit, f.Name.Def().Unit)
		}
	}
}

func TestTrendListsAFigureInOrder(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	if _, problems := s.Import(ctx, []string{filepath.Join(testdata, "repeats-fast"), filepath.Join(testdata, "tpcc-postgres"), filepath.Join(testdata, "tpcc-paced-sqlite")}, time.Now()); len(problems) > 0 {
		t.Fatal(problems)
	}
	points, err := s.Trend(ctx, Filter{Engine: "postgres"}, results.FigureNOPM, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(points) == 0 {
		t.Fatal("no NOPM of PostgreSQL in the trend")
	}
	for i := 1; i < len(points); i++ {
		if points[i].Run.Started.Before(points[i-1].Run.Started) {
			t.Errorf("point %d (%s) is before point %d (%s)", i, points[i].Run.Started, i-1, points[i-1].Run.Started)
		}
	}
	for _, p := range points {
		if p.Run.Engine != "postgres" || p.Unit != "new-orders/min" || p.Value <= 0 {
			t.Errorf("point %+v", p)
		}
	}
	all, _ := s.List(ctx, Filter{})
	sqlite, _ := s.List(ctx, Filter{Engine: "sqlite"})
	if len(sqlite) == 0 || len(sqlite) >= len(all) {
		t.Errorf("%d SQLite runs of %d", len(sqlite), len(all))
	}
	if none, _ := s.List(ctx, Filter{Since: time.Now()}); len(none) != 0 {
		t.Errorf("%d runs since now", len(none))
	}
}

// TestTwoWritersAtOnceBothLand records runs from two stores opened on
// one file at the same moment, as two dbio processes ending together do.
func TestTwoWritersAtOnceBothLand(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	dirs, _ := filepath.Glob(filepath.Join(testdata, "repeats-fast", "2026*"))
	if len(dirs) < 4 {
		t.Fatalf("testdata: %v", dirs)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(dirs))
	for i, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(path)
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
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if all, _ := s.List(ctx, Filter{}); len(all) != len(dirs) {
		t.Errorf("%d runs landed, want %d", len(all), len(dirs))
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
