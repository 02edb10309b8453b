package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/engine"
	"dbio/internal/target"
)

// TestSettingProblems: a SQLite setting is one of the PRAGMAs dbio sets,
// its value a number or a word (nothing that ends the PRAGMA and starts
// another statement), and a directory it names is inside dbio's directory.
func TestSettingProblems(t *testing.T) {
	tg := t.TempDir()
	on := engine.Confinement{Data: tg}
	tests := []struct {
		name, value string
		want        string
	}{
		{"journal_mode", "WAL", ""},
		{"cache_size", "-65536", ""},
		{"temp_store_directory", tg + "/dbio/sqlite", ""},
		{"temp_store_directory", "/tmp", "temp_store_directory=/tmp: /tmp is outside dbio's directory on the targets"},
		{"temp_store_directory", tg + "/dbio/../x", "is outside"},
		{"cache_sise", "1", `cache_sise=1: SQLite has no PRAGMA "cache_sise" (did you mean cache_size?)`},
		{"writable_schema", "1", "writable_schema=1: dbio does not set SQLite's PRAGMA writable_schema: use one of"},
		{"cache_size", "1; ATTACH DATABASE '/tmp/x.db' AS x", "give a number or a word"},
		{"journal_mode", "WAL\n", `"journal_mode=WAL\n": the setting holds a line break`},
	}
	for _, tt := range tests {
		ps := settingProblems(context.Background(), map[string]string{tt.name: tt.value}, on)
		got := ""
		if len(ps) > 0 {
			got = ps[0].Error()
		}
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s=%s: %q, want %q", tt.name, tt.value, got, tt.want)
		}
	}
}

// TestStartRefusesASettingThatEscapes: Start refuses, before it opens
// anything, a PRAGMA that would write outside dbio's directory or run a
// statement of its own; a directory inside it is used as given.
func TestStartRefusesASettingThatEscapes(t *testing.T) {
	tg, err := target.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	for _, bad := range []map[string]string{{"temp_store_directory": elsewhere}, {"cache_size": "1; ATTACH DATABASE '" + elsewhere + "/x.db' AS x"}} {
		if in, err := (Engine{}).Start(context.Background(), engine.Placement{Data: tg}, engine.Options{Settings: bad, Fresh: true}); err == nil {
			in.Stop(context.Background())
			t.Errorf("Start with %v succeeded", bad)
		}
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Errorf("a refused start wrote in %s", elsewhere)
	}
	tmp := filepath.Join(tg.Dir, "sqlite")
	in, err := Engine{}.Start(context.Background(), engine.Placement{Data: tg}, engine.Options{Settings: map[string]string{"temp_store_directory": tmp}, Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	if err := in.DB().PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}
}
