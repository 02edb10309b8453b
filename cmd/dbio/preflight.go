package main

import (
	"errors"
	"fmt"

	"dbio/internal/engine"
	"dbio/internal/runner"
	"dbio/internal/secret"
	"dbio/internal/target"
)

// preflight finds, without writing anything, what is wrong with the places
// and the server a run names, so that resolve reports it together with the
// bad flags: the targets and results directory (missing, a file, read-only,
// not writable, a link or foreign directory in dbio's place, --limit on a
// filesystem without a disk), and for --dsn a DSN that does not parse (shown
// with its password masked) or an option only a managed server takes.
func (f *runFlags) preflight(sys target.SysFS, e engine.Engine, r resolved) []error {
	places := runner.Places{Results: f.results}
	if f.onHosts {
		return places.Problems(sys)
	}
	if f.dsn == "" {
		places = runner.Places{Data: f.target, Log: f.logTarget, Results: f.results, Create: f.createTarget, Engine: e, Limits: r.limits}
		return places.Problems(sys)
	}
	errs := places.Problems(sys)
	if f.bufferPool != "" {
		errs = append(errs, errors.New("--buffer-pool: applies to a server dbio runs on a target, not to --dsn: size the existing server's buffer pool in its own configuration, or drop --dsn"))
	}
	if f.serverMemory != "" {
		errs = append(errs, errors.New("--server-memory: applies to a server dbio runs on a target, not to --dsn: dbio cannot cap the memory of a server it did not start; drop one of them"))
	}
	if len(f.settings) > 0 {
		errs = append(errs, errors.New("--setting: applies to a server dbio runs on a target, not to --dsn: change the existing server's configuration, or drop --dsn"))
	}
	if e == nil {
		return errs
	}
	c, ok := e.(engine.DSNChecker)
	if !ok {
		return append(errs, fmt.Errorf("--dsn: %s has no external mode: it runs inside dbio on a target; drop --dsn and pass --target DIR", e.Name()))
	}
	masked, scrub := secret.RedactDSN(f.dsn), secret.Scrubber(f.dsn)
	transport, err := c.CheckDSN(f.dsn)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("--dsn %s does not parse: %s (forms: postgres://user:password@host:5432/db or 'host=... user=... dbname=...' for postgres, user:password@tcp(host:3306)/ for mariadb)", masked, scrub(err.Error())))
	case f.transport != "" && f.transport != transport:
		errs = append(errs, fmt.Errorf("--transport %s does not match --dsn %s, which connects over %s: with --dsn the DSN chooses the transport; drop --transport", f.transport, masked, transport))
	}
	return errs
}
