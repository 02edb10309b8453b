package engine

import "context"

// DSNChecker is implemented by engines that can work on an existing server
// (external mode, --dsn). An engine without it has no external mode.
type DSNChecker interface {
	// CheckDSN parses dsn without connecting and says how it reaches the
	// server: "socket" or "tcp". Its error may quote the DSN: show it
	// through secret.Scrubber.
	CheckDSN(dsn string) (transport string, err error)
}

// Layout is implemented by engines that keep their files in dbio's
// directory on the targets, so that a preflight can look at those places
// before anything is written.
type Layout interface {
	// Subdirs names the subdirectories of <target>/dbio the engine works in
	// on the data target, and on the log target when the log has its own.
	Subdirs(separateLog bool) (data, log []string)
	// Replaces lists the paths, relative to <data target>/dbio, that a fresh
	// start with o removes before it writes: their space counts as free.
	Replaces(o Options) []string
}

// DSNForms is implemented by engines with an external mode: which DSNs are
// written for the engine (a URL whose scheme names it, or the driver's own
// form), so that --dsn alone chooses the engine, and one that --engine
// contradicts is refused naming both.
type DSNForms interface {
	// DSNScheme is the scheme dsn names ("postgres", "mysql"...), "" for a
	// DSN without one, and whether dsn is written for this engine.
	DSNScheme(dsn string) (scheme string, ours bool)
	// DSNAddress is where dsn reaches the server, host:port or a socket's
	// path, for the line that says what dbio connects to.
	DSNAddress(dsn string) (string, error)
}

// ForDSN is the engine dsn is written for: the one named as its scheme
// names it (mysql:// is mysql, mariadb:// mariadb), else the first
// registered that takes its form; nil when none does.
func (r *Registry) ForDSN(dsn string) Engine {
	var first Engine
	for _, e := range r.All() {
		f, ok := e.(DSNForms)
		if !ok {
			continue
		}
		scheme, ours := f.DSNScheme(dsn)
		if !ours {
			continue
		}
		if scheme == e.Name() {
			return e
		}
		if first == nil {
			first = e
		}
	}
	return first
}

// ConnectError is an existing server refusing dbio's connection, in words
// a user acts on: what went wrong, where, and what to check.
type ConnectError struct {
	// Reason is what the server or the network said, e.g. role "x" does
	// not exist; Where is host:port or the socket; Hint what to check.
	Reason, Where, Hint string
}

func (e *ConnectError) Error() string {
	return e.Reason + " on " + e.Where + ": " + e.Hint
}

// OwnedDatabase is a database on an existing server that carries dbio's
// marker: dbio created it and may drop it.
type OwnedDatabase struct {
	Name  string
	Bytes int64
}

// OwnedDatabases is implemented by server engines: the databases dbio
// created on the existing server o.DSN reaches (those carrying its
// marker), and dropping one of them, for the line that ends a run,
// --drop-after and dbio clean --dsn. A database without the marker is
// never dropped, whatever is asked.
type OwnedDatabases interface {
	OwnedDatabases(ctx context.Context, o Options) ([]OwnedDatabase, error)
	DropOwned(ctx context.Context, o Options, name string) error
}
