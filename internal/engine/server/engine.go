package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"dbio/internal/engine"
	"dbio/internal/execx"
)

// Engine is what the server engines (PostgreSQL, MariaDB) share: the name
// an engine answers to, the runner its programs run through, where they
// are, the process table its server's processes are listed from, and how
// Start and CheckDSN go. An engine embeds it and gives its Specific steps.
type Engine struct {
	name string
	own  Specific
	// Runner runs the server and its programs.
	Runner execx.Runner
	// BinDirs are searched after PATH for the server's programs; nil means
	// the engine's standard locations.
	BinDirs []string
	// ProcRoot is the process table the server's processes are listed from.
	ProcRoot string
	// FreePort chooses a loopback port; tests replace it to provoke a conflict.
	FreePort func() (int, error)
	// known is the installed server's list of settings, once read.
	known *knownCache
}

// Specific is what an engine gives of its own to the shared Start and CheckDSN.
type Specific struct {
	// Label names the engine in the message for a missing data target.
	Label string
	// Settings is how the engine's configuration names its settings, by
	// which the user's are matched to the ones dbio reads and judged.
	Settings SettingNames
	// ListSettings lists the settings the installed server takes, which
	// the user's names are checked against; nil checks none.
	ListSettings ListSettings
	// External starts an instance on the existing server o.DSN reaches;
	// Managed starts a server dbio runs on p.
	External func(ctx context.Context, o engine.Options) (engine.Instance, error)
	Managed  func(ctx context.Context, p engine.Placement, o engine.Options) (engine.Instance, error)
	// CheckDSN reads a DSN as the engine's driver does (DSN.Check);
	// DSNScheme and DSNAddress are engine.DSNForms (DSN.Scheme and
	// DSN.Where), and ConnectError explains a refused connection
	// (DSN.Refused).
	CheckDSN     func(dsn string) (transport string, err error)
	DSNScheme    func(dsn string) (scheme string, ours bool)
	DSNAddress   func(dsn string) (string, error)
	ConnectError func(dsn string, err error) error
	// ExternalAdmin opens a pool on the existing server o.DSN reaches that
	// needs nothing dbio would create there (its database may not exist
	// yet); MaxConnectionsQuery reads that server's max_connections as an
	// integer on it.
	ExternalAdmin       func(o engine.Options) (*sql.DB, error)
	MaxConnectionsQuery string
	// Memory is what the engine's managed server holds, for MemoryNeed.
	Memory Memory
	// StandardDirs are where the engine's programs are installed, searched
	// after PATH unless Engine.BinDirs says otherwise.
	StandardDirs func() []string
}

var (
	_ engine.Engine          = (*Engine)(nil)
	_ engine.DSNChecker      = (*Engine)(nil)
	_ engine.DSNForms        = (*Engine)(nil)
	_ engine.SettingsChecker = (*Engine)(nil)
)

// NewEngine returns the shared part of the engine named name, which
// starts instances and checks DSNs as own says.
func NewEngine(name string, r execx.Runner, procRoot string, own Specific) Engine {
	return Engine{name: name, own: own, Runner: r, ProcRoot: procRoot, FreePort: FreePort, known: &knownCache{}}
}

// Name implements engine.Engine.
func (e *Engine) Name() string { return e.name }

// Capabilities implements engine.Engine: a server process, with stored
// procedures and row locks.
func (e *Engine) Capabilities() engine.Capabilities {
	return engine.Capabilities{ServerProcess: true, StoredProcedures: true, SelectForUpdate: true}
}

// Start implements engine.Engine the way every server engine does: on the
// existing server o.DSN reaches (external), else a managed server on p.
func (e *Engine) Start(ctx context.Context, p engine.Placement, o engine.Options) (engine.Instance, error) {
	switch o.Transport {
	case "", "socket", "tcp":
	default:
		return nil, fmt.Errorf("transport %q: use socket or tcp", o.Transport)
	}
	if err := engine.DatabaseNameProblem(o.Database); err != nil {
		return nil, err
	}
	switch {
	case o.DSN != "":
		return e.own.External(ctx, o)
	case p.Data == nil:
		return nil, errors.New(e.own.Label + ": no data target: pass --target DIR or --dsn for an existing server")
	default:
		return e.own.Managed(ctx, p, o)
	}
}

// SearchDirs are the directories searched for the server's programs after
// PATH: BinDirs when set, else the engine's standard ones.
func (e *Engine) SearchDirs() []string {
	if e.BinDirs != nil {
		return e.BinDirs
	}
	return e.own.StandardDirs()
}

// CheckDSN implements engine.DSNChecker.
func (e *Engine) CheckDSN(dsn string) (string, error) { return e.own.CheckDSN(dsn) }

// DSNScheme implements engine.DSNForms.
func (e *Engine) DSNScheme(dsn string) (string, bool) { return e.own.DSNScheme(dsn) }

// DSNAddress implements engine.DSNForms.
func (e *Engine) DSNAddress(dsn string) (string, error) { return e.own.DSNAddress(dsn) }
