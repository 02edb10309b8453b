package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// CloneFile copies a file's content and mode, whichever way the file system allows.
func TestCloneFile(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "from"), filepath.Join(dir, "to")
	want := []byte("pristine data\n")
	if err := os.WriteFile(from, want, 0o600); err != nil {
		t.Fatal(err)
	}
	n, _, err := CloneFile(from, to, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(to)
	if err != nil || string(got) != string(want) || n != int64(len(want)) {
		t.Errorf("copy holds %q (%d bytes counted), %v; want %q", got, n, err, want)
	}
	if fi, _ := os.Stat(to); fi.Mode().Perm() != 0o640 {
		t.Errorf("copy's mode %v, want 0640", fi.Mode().Perm())
	}
	if _, _, err := CloneFile(from, to, 0o640); err == nil {
		t.Error("CloneFile over an existing file: no error")
	}
}
