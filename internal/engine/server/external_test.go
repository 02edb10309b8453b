package server

import (
	"errors"
	"strings"
	"testing"

	"dbio/internal/engine"
)

func TestExternalDSN(t *testing.T) {
	// The driver knows "tcp://..." and "unix://..."; anything else fails quoting the DSN.
	dsns := DSN[string]{
		Parse: func(dsn string) (string, error) {
			if !strings.HasPrefix(dsn, "tcp://") && !strings.HasPrefix(dsn, "unix://") {
				return "", errors.New("cannot parse " + dsn)
			}
			return "cfg " + dsn, nil
		},
		Socket: func(cfg string) bool { return strings.HasPrefix(cfg, "cfg unix://") },
		Forms:  "FORMS",
	}
	tests := []struct {
		name      string
		o         engine.Options
		transport string
		wantErr   string
	}{
		{"tcp", engine.Options{DSN: "tcp://u:pw@h"}, "tcp", ""},
		{"socket asked and given", engine.Options{DSN: "unix://u@/run", Transport: "socket"}, "socket", ""},
		{"transport disagrees", engine.Options{DSN: "tcp://u@h", Transport: "socket"}, "", "--transport socket does not match --dsn, which connects over tcp"},
		{"managed only", engine.Options{DSN: "tcp://u@h", BufferPool: 1 << 30, Settings: map[string]string{"work_mem": "8MB"}}, "", "--buffer-pool: applies to a server dbio runs on a target, not to --dsn: size the existing server's buffer pool in its own configuration, or drop --dsn\n--setting: applies to a server dbio runs on a target, not to --dsn"},
		{"unparsable, password scrubbed", engine.Options{DSN: "u:hunter2@x"}, "", "--dsn: cannot parse "},
		{"unparsable, forms named", engine.Options{DSN: "u:hunter2@x"}, "", "(accepted forms: FORMS)"},
	}
	for _, tt := range tests {
		cfg, transport, err := dsns.External(tt.o)
		if checked, cerr := dsns.Check(tt.o.DSN); err == nil && (checked != transport || cerr != nil) {
			t.Errorf("%s: Check = %q, %v; External found %q", tt.name, checked, cerr, transport)
		}
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s: the error shows the password: %v", tt.name, err)
			}
			continue
		}
		if err != nil || transport != tt.transport || cfg != "cfg "+tt.o.DSN {
			t.Errorf("%s: ExternalDSN = %q, %q, %v; want transport %q", tt.name, cfg, transport, err, tt.transport)
		}
	}
}
