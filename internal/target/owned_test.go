package target

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
)

// planted is a file outside any target that a planted link points at; the
// test checks it is still there with its content.
func planted(t *testing.T) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	file = filepath.Join(dir, "dbio_tpcc.db")
	if err := os.WriteFile(file, []byte("someone else's data"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

func untouched(t *testing.T, dir, file string) {
	t.Helper()
	if b, err := os.ReadFile(file); err != nil || string(b) != "someone else's data" {
		t.Fatalf("the file outside was touched: %q, %v", b, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("dbio wrote outside its directory: %v", names)
	}
}

func TestSubRefusesWhatDbioDidNotMake(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, at, outside string)
		want  string
	}{
		{"symbolic link", func(t *testing.T, at, outside string) { os.Symlink(outside, at) }, "is a symbolic link"},
		{"link to a marked directory", func(t *testing.T, at, outside string) {
			os.WriteFile(filepath.Join(outside, results.MarkerName), nil, 0o644)
			os.Symlink(outside, at)
		}, "is a symbolic link"},
		{"unmarked directory", func(t *testing.T, at, outside string) { os.Mkdir(at, 0o755) }, "without dbio's .dbio-owned marker"},
		{"marker is a link", func(t *testing.T, at, outside string) {
			os.Mkdir(at, 0o755)
			os.Symlink(filepath.Join(outside, "dbio_tpcc.db"), filepath.Join(at, results.MarkerName))
		}, "marker that is not a regular file"},
		{"file", func(t *testing.T, at, outside string) { os.WriteFile(at, nil, 0o644) }, "is not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			outside, file := planted(t)
			at := filepath.Join(tg.Dir, "sqlite")
			tc.plant(t, at, outside)
			before, _ := os.ReadDir(outside)
			_, err = tg.Sub("sqlite")
			if !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "dbio did not create") {
				t.Fatalf("Sub: %v, want a refusal saying %q", err, tc.want)
			}
			err = tg.RemoveSub("sqlite")
			if !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RemoveSub: %v, want a refusal saying %q", err, tc.want)
			}
			if _, err := os.Lstat(at); err != nil {
				t.Fatalf("what was planted was removed: %v", err)
			}
			if err := CheckOwned(at); !errors.Is(err, ErrNotOwned) {
				t.Fatalf("CheckOwned: %v", err)
			}
			if after, _ := os.ReadDir(outside); len(after) != len(before) {
				t.Fatalf("dbio wrote through the link: %d entries, had %d", len(after), len(before))
			}
			if b, _ := os.ReadFile(file); string(b) != "someone else's data" {
				t.Fatal("the file outside was touched")
			}
		})
	}
}

func TestOpenRefusesALinkedOrForeignDbioDirectory(t *testing.T) {
	outside, file := planted(t)
	linked := t.TempDir()
	os.Symlink(outside, filepath.Join(linked, DirName))
	markedOutside := t.TempDir()
	os.WriteFile(filepath.Join(markedOutside, results.MarkerName), nil, 0o644)
	linkedMarked := t.TempDir()
	os.Symlink(markedOutside, filepath.Join(linkedMarked, DirName))
	for _, root := range []string{linked, linkedMarked} {
		if _, err := Open(root); !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), "is a symbolic link") {
			t.Errorf("Open(%s) = %v, want a refusal of the link", root, err)
		}
		if _, problems := Inspect(HostFS(), root, false); len(problems) != 1 || !strings.Contains(problems[0].Error(), "is a symbolic link") {
			t.Errorf("Inspect(%s) = %v", root, problems)
		}
	}
	untouched(t, outside, file)
	if entries, _ := os.ReadDir(markedOutside); len(entries) != 1 {
		t.Errorf("dbio wrote into the directory the link points at: %v", entries)
	}
}

func TestWriteFileDoesNotFollowALink(t *testing.T) {
	outside, file := planted(t)
	tg, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tg.Dir, "conf")
	os.Symlink(file, link)
	if err := WriteFile(link, []byte("x"), 0o644); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("WriteFile through a link: %v", err)
	}
	if err := CheckFile(link); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("CheckFile of a link: %v", err)
	}
	if err := CheckFile(filepath.Join(tg.Dir, results.MarkerName)); err != nil {
		t.Fatalf("CheckFile of a regular file: %v", err)
	}
	untouched(t, outside, file)
}

func TestOwnedBytesCountsOnlyMarkedDirectories(t *testing.T) {
	tg, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := tg.Sub("sqlite")
	os.WriteFile(filepath.Join(sub, "dbio_tpcc.db"), make([]byte, 1<<20), 0o644)
	os.WriteFile(filepath.Join(sub, "dbio_tpcc.db-wal"), make([]byte, 64<<10), 0o644)
	// A sparse file frees nothing when removed.
	os.WriteFile(filepath.Join(sub, "dbio_tpcc.db-shm"), nil, 0o644)
	os.Truncate(filepath.Join(sub, "dbio_tpcc.db-shm"), 1<<30)
	os.Mkdir(filepath.Join(tg.Dir, "foreign"), 0o755)
	os.WriteFile(filepath.Join(tg.Dir, "foreign", "big"), make([]byte, 5000), 0o644)
	outside, _ := planted(t)
	os.Symlink(outside, filepath.Join(tg.Dir, "linked"))
	got := OwnedBytes(tg.Path, "sqlite/dbio_tpcc.db", "sqlite/dbio_tpcc.db-wal", "sqlite/dbio_tpcc.db-shm", "foreign", "linked", "../x")
	if want := uint64(1<<20 + 64<<10); got < want || got > want+64<<10 {
		t.Errorf("OwnedBytes = %d, want about %d (the space of dbio's database and WAL only)", got, want)
	}
}
