package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

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
	// Address is where a configuration reaches the server: host:port, or
	// the socket's path.
	Address func(C) string
	// Scheme says which scheme a DSN names ("" for none) and whether it is
	// written for the engine: its schemes, or the driver's own form.
	Scheme func(dsn string) (scheme string, ours bool)
	// Refusal explains, in the user's words, why the server refused a
	// connection: what it said and what to check; ok is false for an error
	// it does not know.
	Refusal func(err error) (reason, hint string, ok bool)
}

// Where parses dsn and says where it reaches the server.
func (d DSN[C]) Where(dsn string) (string, error) {
	cfg, err := d.Parse(dsn)
	if err != nil {
		return "", err
	}
	return d.Address(cfg), nil
}

// Refused is err, met connecting to the server dsn reaches, as an
// engine.ConnectError when the engine can say what it means; err when not.
func (d DSN[C]) Refused(dsn string, err error) error {
	if err == nil || d.Refusal == nil {
		return err
	}
	reason, hint, ok := d.Refusal(err)
	if !ok {
		if reason, hint, ok = networkRefusal(err); !ok {
			return err
		}
	}
	where, aerr := d.Where(dsn)
	if aerr != nil {
		return err
	}
	return &engine.ConnectError{Reason: reason, Where: where, Hint: hint}
}

// networkRefusal explains the errors every engine meets before its
// server says anything: nothing listening, no answer, no such host.
func networkRefusal(err error) (reason, hint string, ok bool) {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", "nothing listens there: check the DSN's host and port, and that the server runs", true
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOENT):
		return "no such socket", "check the DSN's socket path, and that the server runs", true
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to the host", "check the DSN's host, and that this machine reaches it", true
	case errors.As(err, &dnsErr):
		return "host " + dnsErr.Name + " not found", "check the DSN's host", true
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "no answer", "check the DSN's host and port, and that a firewall lets dbio through", true
	}
	return "", "", false
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
