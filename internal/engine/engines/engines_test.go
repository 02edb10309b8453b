package engines

import (
	"slices"
	"strings"
	"testing"

	"dbio/internal/execx"
)

func TestNew(t *testing.T) {
	r := New(Deps{Exec: execx.Real{}, ProcRoot: "/proc"})
	want := []string{"mariadb", "mysql", "postgres", "postgresql", "sqlite"}
	if got := r.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("package Names() = %v, want %v", got, want)
	}
	tests := []struct {
		name   string
		server bool
	}{
		{"sqlite", false},
		{"postgres", true},
		{"postgresql", true},
		{"mariadb", true},
		{"mysql", true},
		{"PostgreSQL", true},
	}
	for _, tt := range tests {
		e, err := r.Lookup(tt.name)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tt.name, err)
			continue
		}
		if e.Name() != strings.ToLower(tt.name) {
			t.Errorf("Lookup(%q) found %q", tt.name, e.Name())
		}
		if e.Capabilities().ServerProcess != tt.server {
			t.Errorf("%s: ServerProcess = %v, want %v", tt.name, e.Capabilities().ServerProcess, tt.server)
		}
	}
	if _, err := r.Lookup("oracle"); err == nil {
		t.Error("Lookup(oracle) found an engine")
	}
}
