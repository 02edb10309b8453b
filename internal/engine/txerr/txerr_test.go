package txerr

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"

	"dbio/internal/engine"
)

// plain is an instance without a classification of its own.
type plain struct{ engine.Instance }

// coded is an instance that knows one retryable error.
type coded struct{ engine.Instance }

var errBusy = errors.New("busy")

func (coded) ClassifyError(err error) Class {
	if errors.Is(err, errBusy) {
		return Retry
	}
	return Fatal
}

func TestFor(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("transaction: %w", err) }
	tests := []struct {
		name string
		inst engine.Instance
		err  error
		want Class
	}{
		{"instance's own: retry", coded{}, wrap(errBusy), Retry},
		{"instance's own: fatal", coded{}, driver.ErrBadConn, Fatal},
		{"no classification: broken connection", plain{}, wrap(driver.ErrBadConn), Lost},
		{"no classification: EOF", plain{}, io.ErrUnexpectedEOF, Lost},
		{"no classification: anything else", plain{}, errBusy, Failed},
		{"no instance", nil, wrap(io.EOF), Lost},
	}
	for _, tt := range tests {
		if got := For(tt.inst)(tt.err); got != tt.want {
			t.Errorf("%s: %v classified %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
}

// full is an instance whose engine knows its full-disk code.
type full struct{ engine.Instance }

var errCode53100 = errors.New("wrote only 4096 of 8192 bytes")

func (full) DiskFull(err error) bool { return errors.Is(err, errCode53100) }

func TestDiskFull(t *testing.T) {
	tests := []struct {
		name string
		inst engine.Instance
		err  error
		want bool
	}{
		{"the engine's code", full{}, fmt.Errorf("prepare: %w", errCode53100), true},
		{"ENOSPC from dbio's own write", plain{}, &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, true},
		{"only the words left, from another process", nil, errors.New("pg_basebackup: error: could not write: No space left on device"), true},
		{"another error", full{}, io.ErrUnexpectedEOF, false},
		{"no error", full{}, nil, false},
	}
	for _, tt := range tests {
		if got := DiskFull(tt.inst, tt.err); got != tt.want {
			t.Errorf("%s: DiskFull(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
