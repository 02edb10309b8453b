package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"dbio/internal/engine"
	"dbio/internal/target"
)

var _ engine.Resetter = (*Instance)(nil)

// KeepPristine implements engine.Resetter: the WAL is folded into the
// database file and emptied, so that the file alone is the database, and
// the file is cloned (or copied) into dir.
func (i *Instance) KeepPristine(ctx context.Context, dir string) (engine.PristineCopy, error) {
	var busy, walPages, moved int
	if err := i.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &walPages, &moved); err != nil {
		return engine.PristineCopy{}, fmt.Errorf("keep a pristine copy: checkpoint: %w", err)
	}
	if busy != 0 {
		return engine.PristineCopy{}, errors.New("keep a pristine copy: the checkpoint could not finish while another connection used the database: nothing may run on it meanwhile")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return engine.PristineCopy{}, fmt.Errorf("keep a pristine copy: %w", err)
	}
	n, reflinked, err := engine.CloneFile(i.path, filepath.Join(dir, filepath.Base(i.path)), 0o644)
	if err != nil {
		return engine.PristineCopy{}, fmt.Errorf("keep a pristine copy: %w", err)
	}
	return engine.PristineCopy{Method: copyMethod(reflinked), Bytes: n}, nil
}

// RestorePristine implements engine.Resetter: every connection of the
// pool is closed (none may be in use), the WAL and shared-memory index
// are removed, and the copy is cloned into a new file that replaces the
// database file at once; the next query opens a connection on it.
func (i *Instance) RestorePristine(ctx context.Context, dir string) (engine.PristineCopy, error) {
	src := filepath.Join(dir, filepath.Base(i.path))
	if err := target.CheckFile(src); err != nil {
		return engine.PristineCopy{}, fmt.Errorf("restore the pristine copy: %w", err)
	}
	if _, err := os.Lstat(src); errors.Is(err, os.ErrNotExist) {
		return engine.PristineCopy{}, fmt.Errorf("restore the pristine copy: %w: %w", err, engine.ErrPristineGone)
	}
	i.db.SetMaxIdleConns(0)
	defer sizePool(i.db)
	if open := i.db.Stats().OpenConnections; open > 0 {
		return engine.PristineCopy{}, fmt.Errorf("restore the pristine copy: %d connections to %s are in use: stop the workload first", open, i.path)
	}
	if err := ctx.Err(); err != nil {
		return engine.PristineCopy{}, err
	}
	staged := i.path + ".reset"
	if err := removeDatabaseFiles(staged); err != nil {
		return engine.PristineCopy{}, err
	}
	n, reflinked, err := engine.CloneFile(src, staged, 0o644)
	if err != nil {
		return engine.PristineCopy{}, fmt.Errorf("restore the pristine copy: %w", err)
	}
	// The old WAL would be replayed onto the copy: it goes first, with
	// the index of it and any rollback journal.
	for _, suffix := range databaseSuffixes[1:] {
		if err := target.CheckFile(i.path + suffix); err != nil {
			return engine.PristineCopy{}, err
		}
		if err := os.Remove(i.path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return engine.PristineCopy{}, fmt.Errorf("restore the pristine copy: %w", err)
		}
	}
	if err := os.Rename(staged, i.path); err != nil {
		return engine.PristineCopy{}, fmt.Errorf("restore the pristine copy: %w", err)
	}
	return engine.PristineCopy{Method: copyMethod(reflinked), Bytes: n}, nil
}

func copyMethod(reflinked bool) string {
	if reflinked {
		return engine.CopyReflink
	}
	return engine.CopyBytes
}
