package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
	"dbio/internal/target"
)

// TestPlantedInDbioIsRefused plants, where each engine and dbio disk keep
// their files in <target>/dbio/, a symbolic link to a directory outside
// (holding files named like dbio's) or a directory dbio did not make: every
// command refuses it with the same words and exit code 2, and nothing
// outside, or in the planted directory, is touched.
func TestPlantedInDbioIsRefused(t *testing.T) {
	commands := []struct {
		name string
		sub  string // dbio's subdirectory the command uses
		args []string
	}{
		{"sqlite", "sqlite", []string{"tpcc", "--engine", "sqlite"}},
		{"postgres", "postgres", []string{"tpcc", "--engine", "postgres"}},
		{"mariadb", "mariadb", []string{"sysbench", "--engine", "mariadb"}},
		{"postgres log target", "postgres-wal", []string{"tpcc", "--engine", "postgres", "--log-target", "%TARGET%"}},
		{"disk", "fio", []string{"disk", "--size", "64M", "--runtime", "1s"}},
	}
	plants := []struct {
		name string
		what string
		do   func(at, outside string)
	}{
		{"link", "is a symbolic link", func(at, outside string) { os.Symlink(outside, at) }},
		{"unmarked directory", "is a directory without dbio's .dbio-owned marker", func(at, outside string) {
			os.Mkdir(at, 0o755)
			os.WriteFile(filepath.Join(at, "dbio_tpcc.db"), []byte("someone else's data"), 0o644)
		}},
	}
	for _, c := range commands {
		for _, p := range plants {
			t.Run(c.name+"/"+p.name, func(t *testing.T) {
				root := t.TempDir()
				outside := filepath.Join(root, "outside")
				os.Mkdir(outside, 0o755)
				for _, f := range []string{"dbio_tpcc.db", "dbio_sysbench.db", "work.dat", results.MarkerName} {
					os.WriteFile(filepath.Join(outside, f), []byte("someone else's data"), 0o644)
				}
				tgt := filepath.Join(root, "target")
				logTgt := filepath.Join(root, "log")
				os.Mkdir(tgt, 0o755)
				os.Mkdir(logTgt, 0o755)
				place := tgt
				args := append([]string{}, c.args...)
				for i, a := range args {
					if a == "%TARGET%" {
						args[i], place = logTgt, logTgt
					}
				}
				for _, d := range []string{tgt, logTgt} {
					if _, err := target.Open(d); err != nil { // dbio's own directory, as an earlier run left it
						t.Fatal(err)
					}
				}
				at := filepath.Join(place, target.DirName, c.sub)
				p.do(at, outside)
				before := tree(t, root)
				var out bytes.Buffer
				args = append(args, "--target", tgt, "--results", filepath.Join(root, "results"))
				code := run(context.Background(), testApp(&out), args)
				if code != exitUsage {
					t.Errorf("exit code %d, want %d:\n%s", code, exitUsage, out.String())
				}
				want := at + " " + p.what + ", which dbio did not create: dbio neither follows, uses nor removes it; move it away or choose another target"
				if !strings.Contains(out.String(), want) {
					t.Errorf("the refusal does not say %q:\n%s", want, out.String())
				}
				if after := tree(t, root); after != before {
					t.Errorf("something was written:\nbefore:\n%s\nafter:\n%s", before, after)
				}
				if b, err := os.ReadFile(filepath.Join(outside, "dbio_tpcc.db")); err != nil || string(b) != "someone else's data" {
					t.Errorf("the file outside: %q, %v", b, err)
				}
			})
		}
	}
}
