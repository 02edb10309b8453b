package postgres

import (
	"context"
	"errors"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
)

var _ engine.Resetter = (*Instance)(nil)

// errPristineExternal is why --data reset is refused on a server of the user's.
var errPristineExternal = errors.New("--data reset keeps a copy of the stopped server's files, which dbio has only for a server it runs itself: with --dsn use --data fresh (load again) or --data reuse (keep the data as earlier runs left it), or drop --dsn to let dbio run the server")

// KeepPristine implements engine.Resetter for a managed server: a copy of
// the stopped server's files (see server.Instance.KeepPristine).
func (in *Instance) KeepPristine(ctx context.Context, dir string) (engine.PristineCopy, error) {
	if in.managed == nil {
		return engine.PristineCopy{}, errPristineExternal
	}
	return in.Instance.KeepPristine(ctx, dir, in.pristine())
}

// RestorePristine implements engine.Resetter: the copy's files replace the
// server's and the server starts on them.
func (in *Instance) RestorePristine(ctx context.Context, dir string) (engine.PristineCopy, error) {
	if in.managed == nil {
		return engine.PristineCopy{}, errPristineExternal
	}
	return in.Instance.RestorePristine(ctx, dir, in.pristine())
}

func (in *Instance) pristine() server.Pristine {
	m := in.managed
	return server.Pristine{Layout: m.Layout, User: m.User, Launch: m.launch, Ready: m.setup}
}
