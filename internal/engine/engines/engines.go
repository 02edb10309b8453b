// Package engines builds the registry of every engine dbio can run, from
// the process state its caller owns: the command runner that starts
// servers and their tools, and the process table their processes are
// listed from. cmd builds it once, so that the App's runner reaches every
// engine and no engine holds a runner of its own choosing.
package engines

import (
	"dbio/internal/engine"
	"dbio/internal/engine/mysql"
	"dbio/internal/engine/postgres"
	"dbio/internal/engine/sqlite"
	"dbio/internal/execx"
)

// Deps are what the engines need of the process that runs them.
type Deps struct {
	// Exec runs the servers and their programs (initdb, mariadb-backup...).
	Exec execx.Runner
	// ProcRoot is the process table (normally /proc) a server's processes
	// are listed from.
	ProcRoot string
}

// New returns a registry holding every engine, under each name it answers to.
func New(d Deps) *engine.Registry {
	// In the order help and messages list them: by name.
	r := engine.NewRegistry()
	for _, name := range []string{"mariadb", "mysql"} {
		r.Register(mysql.New(name, d.Exec, d.ProcRoot))
	}
	for _, name := range []string{"postgres", "postgresql"} {
		r.Register(postgres.New(name, d.Exec, d.ProcRoot))
	}
	r.Register(sqlite.Engine{})
	return r
}

// Names lists every engine name, in order, without building the engines.
func Names() []string { return New(Deps{}).Names() }
