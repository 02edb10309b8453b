package report

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
)

// -o names one of the report's files by its extension; the others take
// the same name beside it, and HTML never goes into a file named otherwise.
func TestOutputForNamesEachFileByItsKind(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		path string
		want Output
		err  string
	}{
		{"r.html", Output{"r.html", "r.md", "r-csv"}, ""},
		{"r.HTM", Output{"r.HTM", "r.md", "r-csv"}, ""},
		{"r.md", Output{"r.html", "r.md", "r-csv"}, ""},
		{"r", Output{"r.html", "r.md", "r-csv"}, ""},
		{"out.d/r", Output{"out.d/r.html", "out.d/r.md", "out.d/r-csv"}, ""},
		{"r.csv", Output{}, "a report has one CSV file per table"},
		{"r.txt", Output{}, "name either one (-o r.html or -o r.md)"},
		{dir, Output{}, "is a directory"},
	}
	for _, c := range cases {
		got, err := OutputFor(c.path)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("OutputFor(%q) = %+v, %v; want an error saying %q", c.path, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("OutputFor(%q) = %+v, %v; want %+v", c.path, got, err, c.want)
		}
	}
	if got := OutputAt("r.csv"); got.HTML != "r.csv.html" {
		t.Errorf("OutputAt(r.csv) writes the page to %s", got.HTML)
	}
}

// The CSV directory is written only when dbio made it: a link to a
// directory that carries dbio's marker is refused (results.ErrNotOwned)
// before anything is written, and nothing behind it is touched; in dbio's
// own directory only regular CSV files of an earlier rendering are removed.
func TestCSVDirectoryIsNeverReachedThroughALink(t *testing.T) {
	runs := load(t, "quick-tmpfs")
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := results.MakeOwnedDir(victim, "created by dbio report\n"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(victim, "precious.csv"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := OutputAt(filepath.Join(dir, "r.html"))
	if err := os.Symlink(victim, out.CSVDir); err != nil {
		t.Fatal(err)
	}
	err := WriteReport(out, runs, testOptions())
	if !errors.Is(err, results.ErrNotOwned) || !strings.Contains(err.Error(), "r-csv is a symbolic link") {
		t.Fatalf("WriteReport through a link = %v", err)
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 2 {
		t.Errorf("the linked directory holds %d entries, want its 2", len(entries))
	}
	if _, err := os.Lstat(out.HTML); err == nil {
		t.Error("the page was written although the tables were refused")
	}

	// In dbio's own directory: a stale CSV goes, a link named .csv stays.
	os.Remove(out.CSVDir)
	if err := WriteReport(out, runs, testOptions()); err != nil {
		t.Fatal(err)
	}
	stale, link := filepath.Join(out.CSVDir, "gone.csv"), filepath.Join(out.CSVDir, "link.csv")
	os.WriteFile(stale, []byte("x\n"), 0o644)
	os.Symlink(filepath.Join(victim, "precious.csv"), link)
	if err := WriteReport(out, runs, testOptions()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale CSV kept: %v", err)
	}
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("a link dbio did not write was removed: %v", err)
	}
}
