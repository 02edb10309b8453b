package engine

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
