package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"dbio/internal/engine"
)

// ErrPristineExternal is why --data reset is refused on a server of the
// user's: the copy is of the stopped server's files.
var ErrPristineExternal = errors.New("--data reset keeps a copy of the stopped server's files, which dbio has only for a server it runs itself: with --dsn use --data fresh (load again) or --data reuse (keep the data as earlier runs left it), or drop --dsn to let dbio run the server")

// Pristine is what keeping and restoring a managed server's pristine
// copy takes of its engine: where its files are, the user they belong to,
// and how the server starts on them (as after a restore).
type Pristine struct {
	Layout Layout
	User   User
	Launch func(ctx context.Context) (*Process, error)
	// Ready, when set, prepares the started server for dbio.
	Ready func(ctx context.Context) error
	// DropCache, for a server under a memory cap, drops the page cache of
	// the server's files that a copy read or wrote before the server starts
	// on them (see DropTreeCache): a fresh load leaves in memory only what
	// the capped server itself kept, and a reset must not leave more.
	DropCache bool
}

// The copy's directories inside the pristine copy's directory.
const (
	pristineData = "data"
	pristineLog  = "log"
)

// KeepPristine stops the managed server, clones its data directory (and
// its log directory when it is apart) into dir, which must not exist, and
// starts the server again on its own files. A stopped server's files are
// consistent on their own, which a copy of a running server's are not.
func (in *Instance) KeepPristine(ctx context.Context, dir string, f *Pristine) (engine.PristineCopy, error) {
	if f == nil {
		return engine.PristineCopy{}, ErrPristineExternal
	}
	in.ops.Lock()
	defer in.ops.Unlock()
	old := in.proc.Load()
	if old == nil || in.closed {
		return engine.PristineCopy{}, errors.New("keep a pristine copy: the instance is stopped")
	}
	if err := in.stopServer(ctx, old); err != nil {
		return engine.PristineCopy{}, fmt.Errorf("keep a pristine copy: stop the server: %w", err)
	}
	in.Reconnect()
	kept, copyErr := clonePristine(ctx, f.Layout, dir)
	if copyErr == nil && f.DropCache {
		copyErr = f.Layout.dropCache()
	}
	// The server starts again whatever the copy did: the run goes on, or
	// ends, with its server as it was.
	startCtx := context.WithoutCancel(ctx)
	p, err := f.Launch(startCtx)
	if err == nil && f.Ready != nil {
		if err = f.Ready(startCtx); err != nil {
			_ = in.stopServer(startCtx, p)
		}
	}
	if err != nil {
		return engine.PristineCopy{}, errors.Join(copyErr, fmt.Errorf("keep a pristine copy: the server did not start again on its own files: %w", err))
	}
	in.watch(p)
	in.Reconnect()
	if copyErr != nil {
		os.RemoveAll(dir)
		return engine.PristineCopy{}, fmt.Errorf("keep a pristine copy: %w", copyErr)
	}
	return kept, nil
}

// dropCache drops the page cache of the server's data and log files.
func (l Layout) dropCache() error {
	for _, d := range []string{l.Data, l.Log} {
		if d == "" {
			continue
		}
		if err := DropTreeCache(d); err != nil {
			return fmt.Errorf("drop the copied files from the page cache: %w", err)
		}
	}
	return nil
}

func clonePristine(ctx context.Context, l Layout, dir string) (engine.PristineCopy, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return engine.PristineCopy{}, err
	}
	dbio := User{Self: true}
	c, err := CloneTree(ctx, l.Data, filepath.Join(dir, pristineData), dbio, nil)
	if err != nil {
		return engine.PristineCopy{}, err
	}
	if l.Log != "" {
		lc, err := CloneTree(ctx, l.Log, filepath.Join(dir, pristineLog), dbio, nil)
		if err != nil {
			return engine.PristineCopy{}, err
		}
		c.Bytes += lc.Bytes
		c.Reflinked = c.Reflinked && lc.Reflinked
	}
	return pristineCopy(c), nil
}

func pristineCopy(c TreeCopy) engine.PristineCopy {
	if c.Reflinked {
		return engine.PristineCopy{Method: engine.CopyReflink, Bytes: c.Bytes}
	}
	return engine.PristineCopy{Method: engine.CopyBytes, Bytes: c.Bytes}
}

// RestorePristine replaces the managed server's files with the copy
// KeepPristine made in dir, in a restore's steps (RunRestore): the server
// stops, its files are set aside, the copy is cloned in their place for
// the server's user, and the server starts on it; the files set aside are
// removed once it is up, or put back when a step fails.
func (in *Instance) RestorePristine(ctx context.Context, dir string, f *Pristine) (engine.PristineCopy, error) {
	if f == nil {
		return engine.PristineCopy{}, ErrPristineExternal
	}
	l := f.Layout
	places := [][2]string{{filepath.Join(dir, pristineData), l.Data}}
	if l.Log != "" {
		places = append(places, [2]string{filepath.Join(dir, pristineLog), l.Log})
	}
	for _, pl := range places {
		if fi, err := os.Lstat(pl[0]); err != nil || !fi.IsDir() {
			return engine.PristineCopy{}, fmt.Errorf("restore the pristine copy: %s is not a directory the copy made: %w", pl[0], engine.ErrPristineGone)
		}
	}
	var total TreeCopy
	total.Reflinked = true
	err := in.RunRestore(ctx, &Restore{
		Src: dir,
		Replace: func(ctx context.Context, r *Restore) error {
			for _, pl := range places {
				if err := r.SetAside(pl[1], filepath.Dir(pl[1])); err != nil {
					return err
				}
				c, err := CloneTree(ctx, pl[0], pl[1], f.User, nil)
				if err != nil {
					return err
				}
				total.Bytes += c.Bytes
				total.Reflinked = total.Reflinked && c.Reflinked
			}
			if f.DropCache {
				return l.dropCache()
			}
			return nil
		},
		Launch: f.Launch,
		Ready:  f.Ready,
	})
	if err != nil {
		return engine.PristineCopy{}, err
	}
	return pristineCopy(total), nil
}
