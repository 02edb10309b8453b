package server

import (
	"context"
	"errors"
	"fmt"

	"dbio/internal/engine"
	"dbio/internal/execx"
)

// Engine is what the server engines (PostgreSQL, MariaDB) share: the name
// an engine answers to, the runner its programs run through, where they
// are, and the process table its server's processes are listed from. An
// engine embeds it and gives how it finds its programs and starts an instance.
type Engine struct {
	name string
	// Runner runs the server and its programs.
	Runner execx.Runner
	// BinDirs are searched after PATH for the server's programs; nil means
	// the engine's standard locations.
	BinDirs []string
	// ProcRoot is the process table the server's processes are listed from.
	ProcRoot string
	// FreePort chooses a loopback port; tests replace it to provoke a conflict.
	FreePort func() (int, error)
}

// NewEngine returns the shared part of the engine named name.
func NewEngine(name string, r execx.Runner, procRoot string) Engine {
	return Engine{name: name, Runner: r, ProcRoot: procRoot, FreePort: FreePort}
}

// Name implements engine.Engine.
func (e *Engine) Name() string { return e.name }

// Capabilities implements engine.Engine: a server process, with stored
// procedures and row locks.
func (e *Engine) Capabilities() engine.Capabilities {
	return engine.Capabilities{ServerProcess: true, StoredProcedures: true, SelectForUpdate: true}
}

// Start starts an instance the way every server engine does: on the
// existing server o.DSN reaches (external), else a managed server on p.
// label names the engine in the message for a missing data target.
func Start(ctx context.Context, p engine.Placement, o engine.Options, label string,
	external func(context.Context, engine.Options) (engine.Instance, error),
	managed func(context.Context, engine.Placement, engine.Options) (engine.Instance, error),
) (engine.Instance, error) {
	switch o.Transport {
	case "", "socket", "tcp":
	default:
		return nil, fmt.Errorf("transport %q: use socket or tcp", o.Transport)
	}
	switch {
	case o.DSN != "":
		return external(ctx, o)
	case p.Data == nil:
		return nil, errors.New(label + ": no data target: pass --target DIR or --dsn for an existing server")
	default:
		return managed(ctx, p, o)
	}
}
