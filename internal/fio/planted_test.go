package fio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/target"
)

// TestRunRefusesWhatIsPlanted runs fio past dbio disk's preflight on a
// target whose fio directory, or whose working file, is a link to a file
// outside, or whose fio directory dbio did not make: refused before fio
// writes a byte, and the file outside keeps its content.
func TestRunRefusesWhatIsPlanted(t *testing.T) {
	requireFio(t)
	for _, tc := range []struct {
		name, what string
		plant      func(t *testing.T, tg *target.Target, outside string) string
	}{
		{"fio directory is a link", "is a symbolic link", func(t *testing.T, tg *target.Target, outside string) string {
			at := filepath.Join(tg.Dir, WorkSubdir)
			os.Symlink(filepath.Dir(outside), at)
			return at
		}},
		{"fio directory unmarked", "is a directory without dbio's .dbio-owned marker", func(t *testing.T, tg *target.Target, outside string) string {
			at := filepath.Join(tg.Dir, WorkSubdir)
			os.Mkdir(at, 0o755)
			return at
		}},
		{"working file is a link", "is a symbolic link", func(t *testing.T, tg *target.Target, outside string) string {
			dir, err := tg.Sub(WorkSubdir)
			if err != nil {
				t.Fatal(err)
			}
			at := filepath.Join(dir, workFile)
			os.Symlink(outside, at)
			return at
		}},
		{"probe file is a link", "is a symbolic link", func(t *testing.T, tg *target.Target, outside string) string {
			dir, err := tg.Sub(WorkSubdir)
			if err != nil {
				t.Fatal(err)
			}
			at := filepath.Join(dir, probeFile)
			os.Symlink(outside, at)
			return at
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			outside := filepath.Join(root, "outside", "work.dat")
			os.Mkdir(filepath.Dir(outside), 0o755)
			// The size of the working file asked for: a link to it would be "reused".
			if err := os.WriteFile(outside, []byte("someone else's data"), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Truncate(outside, testSize)
			tg, err := target.Create(filepath.Join(root, "target"))
			if err != nil {
				t.Fatal(err)
			}
			at := tc.plant(t, tg, outside)
			c := short(Config{Profile: "four-corners", Targets: []string{tg.Path}}, time.Second)
			_, err = Run(context.Background(), c, newDir(t, c), 0, execx.Real{Proc: "/proc"}, nil)
			want := at + " " + tc.what + ", which dbio did not create"
			if !errors.Is(err, target.ErrNotOwned) || !strings.Contains(err.Error(), want) {
				t.Fatalf("%v\nwant a refusal saying %q", err, want)
			}
			b, _ := os.ReadFile(outside)
			if len(b) != testSize || !strings.HasPrefix(string(b), "someone else's data\x00") {
				t.Error("the file outside was written")
			}
			if entries, _ := os.ReadDir(filepath.Dir(outside)); len(entries) != 1 {
				t.Errorf("fio wrote beside the file outside: %v", entries)
			}
		})
	}
}
