package sqlite

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"dbio/internal/engine"
	"dbio/internal/target"
)

func start(t *testing.T, o engine.Options) *Instance {
	t.Helper()
	tg, err := target.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inst, err := Engine{}.Start(context.Background(), engine.Placement{Data: tg}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Stop(context.Background()) })
	return inst.(*Instance)
}

func TestStartSettings(t *testing.T) {
	inst := start(t, engine.Options{BufferPool: 64 << 20, Settings: map[string]string{"mmap_size": "0"}})
	var mode string
	var cache, sync int
	db := inst.DB()
	db.QueryRow("PRAGMA journal_mode").Scan(&mode)
	db.QueryRow("PRAGMA cache_size").Scan(&cache)
	db.QueryRow("PRAGMA synchronous").Scan(&sync)
	if mode != "wal" || cache != -65536 || sync != 2 {
		t.Errorf("journal_mode %s, cache_size %d, synchronous %d", mode, cache, sync)
	}
	if inst.Info().Settings["cache_size"] != "-65536" || inst.Info().Version == "" {
		t.Errorf("info %+v", inst.Info())
	}
}

// Left at SQLite's default, the page cache is still recorded, as SQLite
// reports it (-2000: 2000 KiB).
func TestDefaultCacheSizeIsRecorded(t *testing.T) {
	inst := start(t, engine.Options{})
	if got := inst.Info().Settings["cache_size"]; got != "-2000 (engine default)" {
		t.Errorf("cache_size recorded as %q, want SQLite's default marked as such", got)
	}
}

func TestStartRefuses(t *testing.T) {
	tg, _ := target.Open(t.TempDir())
	other, _ := target.Open(t.TempDir())
	for _, tt := range []struct {
		p    engine.Placement
		o    engine.Options
		want string
	}{
		{engine.Placement{Data: tg}, engine.Options{DSN: "x"}, "no external mode"},
		{engine.Placement{Data: tg, Log: other}, engine.Options{}, "WAL beside the database"},
		{engine.Placement{Data: tg}, engine.Options{Settings: map[string]string{"foo": "1"}}, `SQLite has no PRAGMA "foo"`},
	} {
		if _, err := (Engine{}).Start(context.Background(), tt.p, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.o, err, tt.want)
		}
	}
}

// TestBackupUnderWritesAndRestore backs up while a writer keeps inserting,
// then restores and sees exactly the backed-up rows.
func TestBackupUnderWritesAndRestore(t *testing.T) {
	inst := start(t, engine.Options{})
	db := inst.DB()
	ctx := context.Background()
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		db.Exec("INSERT INTO t (v) VALUES (?)", strings.Repeat("x", 200+i%50))
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			db.Exec("INSERT INTO t (v) VALUES ('during')")
		}
	}()
	res, err := inst.Backup(ctx, t.TempDir())
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes < 400000 || res.Tool == "" {
		t.Fatalf("backup %+v", res)
	}
	backupRows := func() int {
		b := openPlain(res.Path)
		defer b.Close()
		var n int
		b.QueryRow("SELECT COUNT(*) FROM t").Scan(&n)
		return n
	}()
	if backupRows < 2000 {
		t.Fatalf("backup holds %d rows", backupRows)
	}
	db.Exec("DELETE FROM t")
	if err := inst.Restore(ctx, res.Path); err != nil {
		t.Fatal(err)
	}
	var n int
	db.QueryRow("SELECT COUNT(*) FROM t").Scan(&n)
	if n != backupRows {
		t.Fatalf("after restore %d rows, backup had %d", n, backupRows)
	}
}
