package main

import (
	"context"
	"errors"
	"fmt"

	"dbio/internal/controlchars"
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
	errs := f.textProblems()
	if err := engine.DatabaseNameProblem(f.database); err != nil {
		errs = append(errs, fmt.Errorf("--database: %w", err))
	}
	places := runner.Places{Results: f.results}
	if f.onHosts {
		return append(errs, places.Problems(sys)...)
	}
	if f.dropAfter && f.dsn == "" {
		errs = append(errs, errors.New("--drop-after: applies to your own server (--dsn); a managed server's files are in dbio's directory on the target (see dbio clean): drop --drop-after"))
	}
	if f.dsn == "" {
		places = runner.Places{Data: f.target, Log: f.logTarget, Results: f.results, Create: f.createTarget, Engine: e, Limits: r.limits}
		errs = append(errs, places.Problems(sys)...)
		if sc, ok := e.(engine.SettingsChecker); ok && len(r.options.Settings) > 0 {
			for _, err := range sc.SettingProblems(context.Background(), r.options.Settings, engine.Confinement{Data: f.target, Log: f.logTarget}) {
				errs = append(errs, fmt.Errorf("--setting %w", err))
			}
		}
		return errs
	}
	errs = append(errs, places.Problems(sys)...)
	// The flags as given, not r.options: one that does not parse is still
	// one an existing server cannot take.
	for _, m := range []struct {
		given  bool
		option engine.ManagedOption
	}{
		{f.bufferPool != "", engine.BufferPoolOption},
		{f.serverMemory != "", engine.ServerMemoryOption},
		{len(f.settings) > 0, engine.SettingOption},
		{f.limit != "", engine.LimitOption},
	} {
		if m.given {
			errs = append(errs, &engine.ManagedOnlyError{Option: m.option})
		}
	}
	if e == nil {
		return errs
	}
	c, ok := e.(engine.DSNChecker)
	if !ok {
		return append(errs, &engine.NoExternalModeError{Engine: e.Name()})
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

// textProblems are the flags whose text would reach a configuration
// file, a job file or the terminal with a control character in it, beside
// the places Places.Problems checks itself: a target on a host (checked
// there too, but after this dbio has written its command line), the
// results directory's name and the DSN (shown with its password masked).
func (f *runFlags) textProblems() []error {
	var errs []error
	check := func(flag, value string) {
		if err := controlchars.Check(value); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w: give it without control characters", flag, value, err))
		}
	}
	if f.onHosts {
		for _, t := range f.targets {
			check("--target", t)
		}
		check("--log-target", f.logTarget)
	}
	check("--name", f.name)
	if err := controlchars.Check(f.dsn); err != nil {
		errs = append(errs, fmt.Errorf("--dsn %q: %w: give it without control characters", secret.RedactDSN(f.dsn), err))
	}
	return errs
}
