package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mattn/go-sqlite3"

	"dbio/internal/engine"
	"dbio/internal/target"
)

var _ engine.Backuper = (*Instance)(nil)

// backupAllPages copies the whole database in one backup step. In WAL mode
// that step reads one consistent snapshot while writers go on; smaller steps
// would restart from the beginning every time another connection writes,
// and under a steady workload never finish.
const backupAllPages = -1

// Backup copies the live database into dst/<name>.db with SQLite's online
// backup API, in steps, while the workload may keep running.
func (i *Instance) Backup(ctx context.Context, dst string) (engine.BackupResult, error) {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return engine.BackupResult{}, fmt.Errorf("backup directory: %w", err)
	}
	out := filepath.Join(dst, filepath.Base(i.path))
	if err := removeDatabaseFiles(out); err != nil {
		return engine.BackupResult{}, err
	}
	if err := copyOnline(ctx, i.db, openPlain(out)); err != nil {
		return engine.BackupResult{}, fmt.Errorf("sqlite backup to %s: %w", out, err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		return engine.BackupResult{}, err
	}
	return engine.BackupResult{Tool: "sqlite3_backup (online backup API)", Path: out, Bytes: fi.Size()}, nil
}

// Restore replaces the live database's content with the backup in src
// (a directory written by Backup, or the backup file itself).
func (i *Instance) Restore(ctx context.Context, src string) error {
	file := src
	if fi, err := os.Stat(src); err == nil && fi.IsDir() {
		file = filepath.Join(src, filepath.Base(i.path))
	}
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("sqlite restore: %w", err)
	}
	from := openPlain(file)
	defer from.Close()
	// Copy from the backup into the live database: the backup API writes the
	// destination under its own lock, so open readers see the old or the new
	// content, never a mix.
	return copyInto(ctx, from, i.db)
}

func openPlain(path string) *sql.DB {
	return sql.OpenDB(connector{dsn: "file:" + path, drv: &sqlite3.SQLiteDriver{}})
}

func removeDatabaseFiles(path string) error {
	for _, suffix := range databaseSuffixes {
		if err := target.CheckFile(path + suffix); err != nil {
			return err
		}
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// copyOnline copies src into a new database behind dst and closes dst.
func copyOnline(ctx context.Context, src, dst *sql.DB) error {
	defer dst.Close()
	return copyInto(ctx, src, dst)
}

// copyInto runs sqlite3_backup from src's main database into dst's.
func copyInto(ctx context.Context, src, dst *sql.DB) error {
	sc, err := src.Conn(ctx)
	if err != nil {
		return err
	}
	defer sc.Close()
	dc, err := dst.Conn(ctx)
	if err != nil {
		return err
	}
	defer dc.Close()
	return dc.Raw(func(d any) error {
		return sc.Raw(func(s any) error {
			dconn, ok1 := d.(*sqlite3.SQLiteConn)
			sconn, ok2 := s.(*sqlite3.SQLiteConn)
			if !ok1 || !ok2 {
				return errors.New("not a SQLite connection")
			}
			b, err := dconn.Backup("main", sconn, "main")
			if err != nil {
				return err
			}
			for {
				done, err := b.Step(backupAllPages)
				if err != nil {
					var se sqlite3.Error
					// A busy source is retried: a writer holds the lock for a moment.
					if errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked) {
						time.Sleep(5 * time.Millisecond)
						continue
					}
					b.Close()
					return err
				}
				if done {
					return b.Finish()
				}
				if ctx.Err() != nil {
					b.Close()
					return ctx.Err()
				}
			}
		})
	})
}
