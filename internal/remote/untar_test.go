package remote

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type entry struct {
	name, body, link string
	typ              byte
}

func tarOf(t *testing.T, entries ...entry) *bytes.Buffer {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.link}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			if _, err := w.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// roomy is a budget no case here reaches.
var roomy = Budget{Bytes: 1 << 20, Entries: 100}

func TestUntar(t *testing.T) {
	cases := []struct {
		name    string
		entries []entry
		files   map[string]string
		skipped []string
		wantErr string
	}{
		{
			name: "a results directory",
			entries: []entry{{name: "./", typ: tar.TypeDir}, {name: "./run-1/", typ: tar.TypeDir},
				{name: "./run-1/run.json", body: "{}", typ: tar.TypeReg}, {name: "./run-1/steps/00-users-1/summary.json", body: "[]", typ: tar.TypeReg}},
			files: map[string]string{"run-1/run.json": "{}", "run-1/steps/00-users-1/summary.json": "[]"},
		},
		{
			name:    "links are left out",
			entries: []entry{{name: "./a", body: "x", typ: tar.TypeReg}, {name: "./l", link: "/etc/passwd", typ: tar.TypeSymlink}},
			files:   map[string]string{"a": "x"},
			skipped: []string{"l"},
		},
		{
			name:    "out of the directory",
			entries: []entry{{name: "../escape", body: "x", typ: tar.TypeReg}},
			wantErr: "leads out of the directory",
		},
		{
			name:    "absolute",
			entries: []entry{{name: "/tmp/abs", body: "x", typ: tar.TypeReg}},
			wantErr: "leads out of the directory",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			got, err := untar(tarOf(t, c.entries...), dir, roomy)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, body := range c.files {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(b) != body {
					t.Errorf("%s = %q, %v; want %q", name, b, err, body)
				}
			}
			if got.Files != len(c.files) || strings.Join(got.Skipped, ",") != strings.Join(c.skipped, ",") {
				t.Errorf("fetched %+v, want %d files, skipped %v", got, len(c.files), c.skipped)
			}
		})
	}
}

// TestUntarThroughALink: a link already in the directory is never
// written through.
func TestUntarThroughALink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "run")); err != nil {
		t.Fatal(err)
	}
	_, err := untar(tarOf(t, entry{name: "run/run.json", body: "{}", typ: tar.TypeReg}), dir, roomy)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("err = %v, want a refusal of the link", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "run.json")); err == nil {
		t.Error("wrote through the link")
	}
}
