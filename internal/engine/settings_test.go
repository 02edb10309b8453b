package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolvePath follows links where they stand and applies ".." to the
// directory reached, as the kernel does, on real files.
func TestResolvePath(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"t/dbio/sub", "outside/deep"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(filepath.Join(root, "outside", "deep"), filepath.Join(root, "t", "dbio", "abs"))
	os.Symlink("../../outside/deep", filepath.Join(root, "t", "dbio", "rel"))
	os.Symlink("loop", filepath.Join(root, "t", "dbio", "loop"))
	for in, want := range map[string]string{
		"/t/dbio/sub/x":              "/t/dbio/sub/x",
		"/t/dbio/abs/x":              "/outside/deep/x",
		"/t/dbio/rel/x":              "/outside/deep/x",
		"/t/dbio/abs/../x":           "/outside/x", // the kernel's "..": from where the link led
		"/t/dbio/missing/../x":       "/t/dbio/x",
		"/t/dbio/sub/./../../dbio/y": "/t/dbio/y",
		"/t/dbio/loop/x":             "/t/dbio/loop/x",
	} {
		if got := ResolvePath(root + in); got != root+want {
			t.Errorf("ResolvePath(%s) = %s, want %s", in, strings.TrimPrefix(got, root), want)
		}
	}
}

func TestClosest(t *testing.T) {
	known := []string{"work_mem", "maintenance_work_mem", "shared_buffers"}
	for name, want := range map[string]string{
		"wrok_mem":      " (did you mean work_mem?)",
		"shared_bufers": " (did you mean shared_buffers?)",
		"zzz":           "",
	} {
		if got := Closest(name, known); got != want {
			t.Errorf("Closest(%s) = %q, want %q", name, got, want)
		}
	}
}

func TestDatabaseNameProblem(t *testing.T) {
	for _, ok := range []string{"", "dbio_tpcc", "Bench2", "_x"} {
		if err := DatabaseNameProblem(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"a b", "a'b", "a-b", "1abc", "../../etc/x", "a\nb", strings.Repeat("x", 64)} {
		if err := DatabaseNameProblem(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
