package server

import (
	"fmt"

	"dbio/internal/engine"
	"dbio/internal/secret"
)

// ExternalDSN checks what every engine needs of o before it connects to an
// existing server: no option only a managed server can honour, a DSN that
// parse understands (its error scrubbed of every piece of the DSN, which a
// malformed one may hide a password in, and followed by the accepted
// forms), and a --transport that agrees with the DSN's. parse returns the
// driver's configuration and the transport the DSN connects over.
func ExternalDSN[C any](o engine.Options, forms string, parse func(dsn string) (C, string, error)) (C, string, error) {
	var none C
	if err := o.ManagedOnly(); err != nil {
		return none, "", err
	}
	cfg, transport, err := parse(o.DSN)
	if err != nil {
		return none, "", fmt.Errorf("--dsn: %w (accepted forms: %s)", secret.ScrubError(err, secret.Values(o.DSN)), forms)
	}
	if o.Transport != "" && o.Transport != transport {
		return none, "", fmt.Errorf("--transport %s does not match --dsn, which connects over %s: with --dsn the DSN chooses the transport", o.Transport, transport)
	}
	return cfg, transport, nil
}
