// Package sqlite is the embedded engine: the real C SQLite (through cgo and
// mattn/go-sqlite3) with its database file in dbio's directory on the target.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"

	"github.com/mattn/go-sqlite3"

	"dbio/internal/engine"
	"dbio/internal/results"
	"dbio/internal/target"
)

// subdir is SQLite's directory in dbio's directory on the data target.
const subdir = "sqlite"

// Engine starts SQLite databases.
type Engine struct{}

var _ engine.Engine = Engine{}

// Name implements engine.Engine.
func (Engine) Name() string { return "sqlite" }

// Capabilities implements engine.Engine.
func (Engine) Capabilities() engine.Capabilities {
	return engine.Capabilities{SingleWriter: true}
}

// Start opens (creating if needed) <data target>/dbio/sqlite/<database>.db in
// WAL mode with a busy timeout and full synchronous commits.
func (Engine) Start(ctx context.Context, p engine.Placement, o engine.Options) (engine.Instance, error) {
	if o.DSN != "" {
		return nil, &engine.NoExternalModeError{Engine: "sqlite"}
	}
	if p.Data == nil {
		return nil, errors.New("sqlite needs a data target: pass --target DIR")
	}
	if p.Log != nil && p.Log.Path != p.Data.Path {
		return nil, errors.New("sqlite keeps its WAL beside the database file: --log-target cannot place it elsewhere; drop --log-target for SQLite")
	}
	// The preflight checked them; a caller that did not is refused here.
	if ps := settingProblems(ctx, o.Settings, engine.Confinement{Data: p.Data.Path}); len(ps) > 0 {
		return nil, ps[0]
	}
	dir, err := p.Data.Sub(subdir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, databaseFile(o))
	// SQLite opens its files by name: a link planted in their place would
	// take the database somewhere else.
	for _, suffix := range databaseSuffixes {
		if err := target.CheckFile(path + suffix); err != nil {
			return nil, err
		}
	}
	if o.Fresh {
		// Only files dbio created in its own marked directory.
		for _, suffix := range databaseSuffixes {
			if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("remove old database: %w", err)
			}
		}
	}
	var preallocNote string
	if o.Preallocate > 0 {
		n, err := preallocate(path, o.Preallocate)
		if err != nil {
			return nil, err
		}
		preallocNote = n
	}
	settings := map[string]string{
		"journal_mode": "WAL",
		"busy_timeout": "10000",
		"synchronous":  "FULL",
	}
	if o.BufferPool > 0 {
		// A negative cache_size is in KiB.
		settings["cache_size"] = strconv.FormatInt(-o.BufferPool/1024, 10)
	}
	for k, v := range o.Settings {
		settings[k] = v
	}
	dsn := "file:" + path + "?_txlock=deferred"
	db := sql.OpenDB(connector{dsn: dsn, drv: &sqlite3.SQLiteDriver{ConnectHook: applyPragmas(settings)}})
	sizePool(db)
	var version, mode string
	if err := db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&version); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if _, ok := settings["cache_size"]; !ok {
		// What the run used, when the user left SQLite's page cache alone.
		var pages int64
		if err := db.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&pages); err == nil {
			settings["cache_size"] = strconv.FormatInt(pages, 10) + " (engine default)"
		}
	}
	return &Instance{db: db, dsn: dsn, path: path, info: results.EngineInfo{
		Engine:   "sqlite",
		Version:  version,
		Managed:  true,
		DataDir:  dir,
		Database: path,
		Settings: settings,
		Notes:    nonEmpty("journal_mode reported by SQLite: "+mode, preallocNote),
	}}, nil
}

// Instance is an open SQLite database.
type Instance struct {
	db   *sql.DB
	dsn  string
	path string
	info results.EngineInfo
}

var (
	_ engine.Instance = (*Instance)(nil)
	_ engine.OwnFiles = (*Instance)(nil)
)

// OwnFiles implements engine.OwnFiles: the database file and those SQLite
// keeps beside it, not the other databases in dbio's directory.
func (i *Instance) OwnFiles() []string {
	out := make([]string, len(databaseSuffixes))
	for n, suffix := range databaseSuffixes {
		out[n] = i.path + suffix
	}
	return out
}

// DB implements engine.Instance.
func (i *Instance) DB() *sql.DB { return i.db }

// Driver implements engine.Instance.
func (i *Instance) Driver() string { return "sqlite3" }

// DSN implements engine.Instance.
func (i *Instance) DSN() string { return i.dsn }

// Info implements engine.Instance.
func (i *Instance) Info() results.EngineInfo { return i.info }

// Path is the database file.
func (i *Instance) Path() string { return i.path }

// Stop implements engine.Instance: a passive checkpoint folds the WAL back
// into the database file, then the handle closes.
func (i *Instance) Stop(ctx context.Context) error {
	_, _ = i.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	return i.db.Close()
}

// applyPragmas sets every setting on each new connection: PRAGMAs are per
// connection in SQLite, and mattn/go-sqlite3 knows only some of them as DSN options.
func applyPragmas(settings map[string]string) func(*sqlite3.SQLiteConn) error {
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	// journal_mode first: it decides how later settings apply.
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == "journal_mode") != (keys[j] == "journal_mode") {
			return keys[i] == "journal_mode"
		}
		return keys[i] < keys[j]
	})
	return func(c *sqlite3.SQLiteConn) error {
		for _, k := range keys {
			if _, err := c.Exec("PRAGMA "+k+" = "+pragmaText(k, settings[k]), nil); err != nil {
				return fmt.Errorf("PRAGMA %s = %s: %w", k, settings[k], err)
			}
		}
		return nil
	}
}

// connector opens connections through a driver value that carries this
// instance's PRAGMAs, rather than a globally registered driver name.
type connector struct {
	dsn string
	drv *sqlite3.SQLiteDriver
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.drv }

// preallocate reserves space for the database file and its WAL without
// changing their sizes (fallocate with FALLOC_FL_KEEP_SIZE): SQLite reads
// a file's size as its page count, so the reservation must stay beyond the
// end of file, where later growth lands in the reserved, contiguous extents.
func preallocate(path string, bytes int64) (string, error) {
	const keepSize = 0x01 // FALLOC_FL_KEEP_SIZE
	for _, p := range []struct {
		file string
		n    int64
	}{{path, bytes}, {path + "-wal", min(bytes/4, 256<<20)}} {
		f, err := target.OpenFile(p.file, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return "", fmt.Errorf("preallocate %s: %w", p.file, err)
		}
		err = syscall.Fallocate(int(f.Fd()), keepSize, 0, p.n)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("preallocate %s: %w (the filesystem may not support fallocate; drop --preallocate)", p.file, err)
		}
	}
	return fmt.Sprintf("preallocated %d MiB for the database file and %d MiB for its WAL beyond their ends (fallocate, keep size)", bytes>>20, min(bytes/4, 256<<20)>>20), nil
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}
