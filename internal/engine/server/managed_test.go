package server

import (
	"testing"

	"dbio/internal/engine"
)

func TestOptionDefaults(t *testing.T) {
	for _, c := range []struct {
		name                string
		o                   engine.Options
		database, transport string
	}{
		{"defaults", engine.Options{}, "dbio", "socket"},
		{"given", engine.Options{Database: "bench", Transport: "tcp"}, "bench", "tcp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Database(c.o); got != c.database {
				t.Errorf("Database = %q, want %q", got, c.database)
			}
			if got := Transport(c.o); got != c.transport {
				t.Errorf("Transport = %q, want %q", got, c.transport)
			}
		})
	}
}
