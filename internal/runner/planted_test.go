package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/engine"
	"dbio/internal/engine/mysql"
	"dbio/internal/engine/postgres"
	"dbio/internal/engine/sqlite"
	"dbio/internal/execx"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// TestEnginesRefuseWhatIsPlanted starts each engine directly, past the
// preflight, on a target where a link or a directory dbio did not make sits
// in the engine's place inside dbio/: every engine refuses it with the same
// words, fresh or not, and nothing outside is touched.
func TestEnginesRefuseWhatIsPlanted(t *testing.T) {
	engines := []struct {
		name string
		e    engine.Engine
		sub  string
	}{
		{"sqlite", sqlite.Engine{}, "sqlite"},
		{"postgres", postgres.New("postgres", execx.Real{}, "/proc"), "postgres"},
		{"mariadb", mysql.New("mariadb", execx.Real{}, "/proc"), "mariadb"},
	}
	plants := []struct {
		name, what string
		do         func(at, outside string)
	}{
		{"link", "is a symbolic link", func(at, outside string) { os.Symlink(outside, at) }},
		{"unmarked directory", "is a directory without dbio's .dbio-owned marker", func(at, _ string) { os.Mkdir(at, 0o755) }},
	}
	for _, e := range engines {
		for _, p := range plants {
			for _, fresh := range []bool{true, false} {
				name := e.name + "/" + p.name
				if !fresh {
					name += "/reuse"
				}
				t.Run(name, func(t *testing.T) {
					testenv.RequireEngine(t, e.name)
					root := t.TempDir()
					os.Chmod(root, 0o755)
					outside := filepath.Join(root, "outside")
					os.Mkdir(outside, 0o755)
					// Marked and holding dbio's file names: a link to it must still not be followed.
					for _, f := range []string{results.MarkerName, "dbio_tpcc.db", ".dbio-created"} {
						os.WriteFile(filepath.Join(outside, f), []byte("someone else's data"), 0o644)
					}
					tg, err := target.Create(filepath.Join(root, "target"))
					if err != nil {
						t.Fatal(err)
					}
					at := filepath.Join(tg.Dir, e.sub)
					p.do(at, outside)
					inst, err := e.e.Start(context.Background(), engine.Placement{Data: tg},
						engine.Options{Database: "dbio_tpcc", Fresh: fresh, LogDir: t.TempDir()})
					if err == nil {
						inst.Stop(context.Background())
						t.Fatal("started on what was planted")
					}
					want := at + " " + p.what + ", which dbio did not create: dbio neither follows, uses nor removes it"
					if !errors.Is(err, target.ErrNotOwned) || !strings.Contains(err.Error(), want) {
						t.Fatalf("%v\nwant a refusal saying %q", err, want)
					}
					if _, err := os.Lstat(at); err != nil {
						t.Errorf("what was planted is gone: %v", err)
					}
					entries, _ := os.ReadDir(outside)
					if len(entries) != 3 {
						t.Errorf("the directory outside changed: %v", entries)
					}
					if b, _ := os.ReadFile(filepath.Join(outside, "dbio_tpcc.db")); string(b) != "someone else's data" {
						t.Error("the file outside was touched")
					}
				})
			}
		}
	}
}

// TestSQLiteRefusesALinkToItsDatabase plants a link in place of the
// database file inside dbio's own sqlite directory.
func TestSQLiteRefusesALinkToItsDatabase(t *testing.T) {
	for _, fresh := range []bool{true, false} {
		root := t.TempDir()
		outside := filepath.Join(root, "precious.db")
		os.WriteFile(outside, []byte("someone else's data"), 0o644)
		tg, err := target.Create(filepath.Join(root, "target"))
		if err != nil {
			t.Fatal(err)
		}
		dir, err := tg.Sub("sqlite")
		if err != nil {
			t.Fatal(err)
		}
		for _, suffix := range []string{"", "-wal"} {
			link := filepath.Join(dir, "dbio_tpcc.db"+suffix)
			os.Remove(filepath.Join(dir, "dbio_tpcc.db"))
			os.Symlink(outside, link)
			_, err = sqlite.Engine{}.Start(context.Background(), engine.Placement{Data: tg}, engine.Options{Database: "dbio_tpcc", Fresh: fresh})
			if !errors.Is(err, target.ErrNotOwned) || !strings.Contains(err.Error(), link+" is a symbolic link") {
				t.Fatalf("fresh=%v, link %s: %v", fresh, link, err)
			}
			os.Remove(link)
		}
		if b, _ := os.ReadFile(outside); string(b) != "someone else's data" {
			t.Fatal("the file outside was touched")
		}
	}
}
