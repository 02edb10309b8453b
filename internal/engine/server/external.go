package server

import (
	"errors"
	"fmt"

	"dbio/internal/engine"
	"dbio/internal/secret"
)

// DSN is how an engine reads the DSN of an existing server: C is its
// driver's configuration.
type DSN[C any] struct {
	// Parse parses a DSN as the driver will to connect.
	Parse func(dsn string) (C, error)
	// Socket says whether a configuration connects over a Unix socket.
	Socket func(C) bool
	// Forms are the accepted forms, for a DSN that does not parse.
	Forms string
}

// parse parses dsn and says how it reaches the server.
func (d DSN[C]) parse(dsn string) (C, string, error) {
	cfg, err := d.Parse(dsn)
	if err != nil {
		return cfg, "", err
	}
	if d.Socket(cfg) {
		return cfg, "socket", nil
	}
	return cfg, "tcp", nil
}

// Check implements engine.DSNChecker: it parses dsn without connecting and
// says how it reaches the server, "socket" or "tcp".
func (d DSN[C]) Check(dsn string) (string, error) {
	_, transport, err := d.parse(dsn)
	return transport, err
}

// External checks what every engine needs of o before it connects to an
// existing server: no option only a managed server can honour, a DSN that
// parses (its error scrubbed of every piece of the DSN, which a malformed
// one may hide a password in, and followed by the accepted forms), and a
// --transport that agrees with the DSN's. It returns the driver's
// configuration and the transport.
func (d DSN[C]) External(o engine.Options) (C, string, error) {
	var none C
	if bad := o.ManagedOnly(); len(bad) > 0 {
		errs := make([]error, len(bad))
		for i, e := range bad {
			errs[i] = e
		}
		return none, "", errors.Join(errs...)
	}
	cfg, transport, err := d.parse(o.DSN)
	if err != nil {
		return none, "", fmt.Errorf("--dsn: %w (accepted forms: %s)", secret.ScrubError(err, secret.Values(o.DSN)), d.Forms)
	}
	if o.Transport != "" && o.Transport != transport {
		return none, "", fmt.Errorf("--transport %s does not match --dsn, which connects over %s: with --dsn the DSN chooses the transport", o.Transport, transport)
	}
	return cfg, transport, nil
}
