package mysql

import (
	"context"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
)

var _ engine.Resetter = (*Instance)(nil)

// KeepPristine implements engine.Resetter for a managed server: a copy of
// the stopped server's data directory, and of its redo log when it is
// apart (see server.Instance.KeepPristine). InnoDB's clean shutdown leaves
// files a copy can start on without recovery.
func (in *Instance) KeepPristine(ctx context.Context, dir string) (engine.PristineCopy, error) {
	return in.Instance.KeepPristine(ctx, dir, in.pristine())
}

// RestorePristine implements engine.Resetter: the copy's files replace the
// server's and the server starts on them.
func (in *Instance) RestorePristine(ctx context.Context, dir string) (engine.PristineCopy, error) {
	return in.Instance.RestorePristine(ctx, dir, in.pristine())
}

// pristine is how the managed server's files are copied and started
// again; nil for a server of the user's, which has no files of dbio's.
func (in *Instance) pristine() *server.Pristine {
	m := in.managed
	if m == nil {
		return nil
	}
	return &server.Pristine{Layout: m.Layout, User: m.User, Launch: m.launch}
}
