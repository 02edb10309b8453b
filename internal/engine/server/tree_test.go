package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCopyTreeKeepsModesLinksAndSkips(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	for _, d := range []string{"a/b", "skipped"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"top": "12345", "a/b/deep": "xy", "skipped/f": "no"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/elsewhere", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "dst")
	n, err := CopyTree(context.Background(), src, dst, User{Self: true}, func(rel string) bool { return rel == "skipped" })
	if err != nil {
		t.Fatal(err)
	}
	if n != 7 {
		t.Errorf("copied %d bytes, want 7", n)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "a/b/deep")); err != nil || string(b) != "xy" {
		t.Errorf("deep file: %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "top")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("top: %v, %v; want mode 0600", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "a")); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("directory a: %v, %v; want mode 0750", fi.Mode(), err)
	}
	if link, err := os.Readlink(filepath.Join(dst, "link")); err != nil || link != "/elsewhere" {
		t.Errorf("link: %q, %v", link, err)
	}
	if _, err := os.Stat(filepath.Join(dst, "skipped")); !os.IsNotExist(err) {
		t.Errorf("the skipped directory was copied (%v)", err)
	}
	if total, err := TreeBytes(dst); err != nil || total != 7 {
		t.Errorf("TreeBytes = %d, %v; want 7", total, err)
	}
	if _, err := CopyTree(context.Background(), src, dst, User{Self: true}, nil); err == nil {
		t.Error("CopyTree over an existing directory succeeded")
	}
}

func TestMoveAsideAndPutBack(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "old"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	moved, err := MoveAside(dir, base, "replaced-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(filepath.Dir(moved)), "replaced-") {
		t.Errorf("moved to %s", moved)
	}
	// A failed replacement is removed when the original goes back.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "half"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := PutBack(moved, dir); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "old" {
		t.Errorf("after PutBack %s holds %v", dir, entries)
	}
	if left, _ := filepath.Glob(filepath.Join(base, "replaced-*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	moved, err = MoveAside(dir, base, "replaced-")
	if err != nil {
		t.Fatal(err)
	}
	if err := DropAside(moved); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(base, "replaced-*")); len(left) != 0 {
		t.Errorf("DropAside left %v", left)
	}
}

func TestPrepareDestination(t *testing.T) {
	self := User{Self: true}
	base := t.TempDir()
	created, err := PrepareDestination(filepath.Join(base, "new", "cycle-1"), self)
	if err != nil || !created {
		t.Errorf("new destination: created %v, %v", created, err)
	}
	empty := filepath.Join(base, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if created, err := PrepareDestination(empty, self); err != nil || created {
		t.Errorf("empty destination: created %v, %v", created, err)
	}
	if err := os.WriteFile(filepath.Join(empty, "theirs"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for dst, want := range map[string]string{
		empty:                          "not empty",
		filepath.Join(empty, "theirs"): "is a file",
		"":                             "no backup destination",
	} {
		if _, err := PrepareDestination(dst, self); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("PrepareDestination(%q) = %v, want %q", dst, err, want)
		}
	}
}
