package remote

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"dbio/internal/testenv"
)

// countOf is the line a host's fetch script starts its stream with.
func countOf(bytes int64, entries int) string {
	return fmt.Sprintf("%s %d %d\n", countLine, bytes, entries)
}

// plenty is a filesystem with room for anything.
func plenty(string) (uint64, uint64, error) { return 1 << 50, 1 << 40, nil }

// sparseTar is GNU tar's archive of a directory holding a 50 GB sparse
// file, in format (gnu or pax): about 10 KiB that stand for 50 GB of zeros.
func sparseTar(t *testing.T, format string) []byte {
	tarProgram := testenv.RequireProgram(t, "tar", "apt-get install -y tar")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	zeros := filepath.Join(dir, "zeros")
	if err := os.WriteFile(zeros, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(zeros, 50<<30); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tarProgram, "--sparse", "--format="+format, "-cf", "-", "-C", dir, ".").Output()
	if err != nil {
		t.Fatalf("tar --sparse: %v", err)
	}
	return out
}

// declaring is an archive whose one entry declares size bytes and holds
// only its first KiB.
func declaring(t *testing.T, size int64) []byte {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	if err := w.WriteHeader(&tar.Header{Name: "./zeros", Typeflag: tar.TypeReg, Mode: 0o644, Size: size}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	return buf.Bytes()
}

// emptyFiles is an archive of n empty files.
func emptyFiles(t *testing.T, n int) []byte {
	var entries []entry
	for i := range n {
		entries = append(entries, entry{name: fmt.Sprintf("./f%d", i), typ: tar.TypeReg})
	}
	return tarOf(t, entries...).Bytes()
}

// A host's results come back only within the host's own count of them
// (with a margin, and never beyond a ceiling), without sparse files, and
// only where there is room: anything else is refused with the reason, and
// the host's directory, which dbio made for them, goes with all it holds.
func TestUnpackRefuses(t *testing.T) {
	results := tarOf(t, entry{name: "./", typ: tar.TypeDir}, entry{name: "./run/", typ: tar.TypeDir},
		entry{name: "./run/run.json", body: `{"status":"completed"}`, typ: tar.TypeReg}).Bytes()
	tests := []struct {
		name   string
		stream func(t *testing.T) string
		free   func(string) (uint64, uint64, error)
		want   string
	}{
		{"a sparse file in GNU's format", func(t *testing.T) string { return countOf(20<<10, 3) + string(sparseTar(t, "gnu")) }, plenty,
			`entry "./zeros" is a sparse file (51200.0 MiB as written): a results directory holds none`},
		{"a sparse file in PAX's format", func(t *testing.T) string { return countOf(20<<10, 3) + string(sparseTar(t, "pax")) }, plenty,
			`entry "./zeros" is a sparse file`},
		{"an entry declaring more than the host counted", func(t *testing.T) string { return countOf(64<<10, 2) + string(declaring(t, 50<<30)) }, plenty,
			`entry "./zeros" declares 51200.0 MiB, more than the 1.1 MiB left of the host's own count of its results and a margin`},
		{"more entries than the host counted", func(t *testing.T) string { return countOf(0, 10) + string(emptyFiles(t, 200)) }, plenty,
			"the stream holds more than 26 entries, the host's own count of them and a margin"},
		{"a count over the ceiling", func(t *testing.T) string { return countOf(50<<30, 3) + string(results) }, plenty,
			"the host counts 51200.0 MiB in 3 entries there, more than dbio brings back from a host (4096.0 MiB, 100000 entries)"},
		{"more than the ceiling's entries", func(t *testing.T) string { return countOf(0, 200_000) + string(results) }, plenty,
			"in 200000 entries there, more than dbio brings back from a host"},
		{"no count", func(t *testing.T) string { return string(results) }, plenty,
			`the host's count of its results reads`},
		{"no stream at all", func(t *testing.T) string { return "" }, plenty,
			"the host sent no count of its results before them"},
		{"more than the space free here", func(t *testing.T) string { return countOf(8<<20, 3) + string(results) },
			func(string) (uint64, uint64, error) { return 1 << 20, 1 << 20, nil },
			"the host counts 8.0 MiB in 3 entries there, more than the 1.0 MiB and 1048576 inodes free in"},
		{"more than the inodes free here", func(t *testing.T) string { return countOf(1<<10, 3000) + string(results) },
			func(string) (uint64, uint64, error) { return 1 << 30, 100, nil },
			"more than the 1024.0 MiB and 100 inodes free in"},
		{"a stream going on after its archive", func(t *testing.T) string {
			return countOf(1<<10, 3) + string(results) + strings.Repeat("x", 2<<20)
		}, plenty, "the stream goes on for more than 1.0 MiB after its archive's end"},
		{"a cut stream", func(t *testing.T) string { return countOf(1<<10, 3) + string(results[:700]) }, plenty,
			"the archive, after 1 entries: unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "h1")
			_, err := unpack(strings.NewReader(tt.stream(t)), dir, tt.free)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if _, err := os.Lstat(dir); !os.IsNotExist(err) {
				t.Errorf("%s is left behind (%v)", dir, err)
			}
		})
	}
	t.Run("what the host counted", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "h1")
		got, err := unpack(strings.NewReader(countOf(4096*2+22, 3)+string(results)+strings.Repeat("\x00", 9<<10)), dir, plenty)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "run", "run.json")); err != nil || string(b) != `{"status":"completed"}` || got.Files != 1 {
			t.Errorf("run.json came back as %q (%v), %d files", b, err, got.Files)
		}
	})
	t.Run("a directory that exists already is not taken", func(t *testing.T) {
		dir := t.TempDir()
		theirs := filepath.Join(dir, "theirs")
		os.WriteFile(theirs, []byte("x"), 0o644)
		if _, err := unpack(strings.NewReader(countOf(1<<10, 3)+string(results)), dir, plenty); err == nil || !os.IsExist(err) {
			t.Errorf("err = %v, want the directory refused as existing", err)
		}
		if _, err := os.Stat(theirs); err != nil {
			t.Errorf("what was there went: %v", err)
		}
	})
}

// countingReader counts what is read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// A stream far bigger than its host's count is read only as far as the
// count allows: it is read as it comes, never held, and stops there.
func TestUnpackStopsAtTheBudget(t *testing.T) {
	pr, pw := io.Pipe()
	go func() {
		// 10 GiB in 1 MiB files, written until the reader stops.
		if _, err := io.WriteString(pw, countOf(1<<20, 3)); err != nil {
			return
		}
		w := tar.NewWriter(pw)
		mib := make([]byte, 1<<20)
		for i := range 10 << 10 {
			if err := w.WriteHeader(&tar.Header{Name: fmt.Sprintf("./f%d", i), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(mib))}); err != nil {
				return
			}
			if _, err := w.Write(mib); err != nil {
				return
			}
		}
		pw.CloseWithError(w.Close())
	}()
	r := &countingReader{r: pr}
	dir := filepath.Join(t.TempDir(), "h1")
	_, err := unpack(r, dir, plenty)
	pr.CloseWithError(io.ErrClosedPipe)
	if err == nil || !strings.Contains(err.Error(), `entry "./f2" declares 1.0 MiB, more than the 0.1 MiB left`) {
		t.Fatalf("err = %v, want the third MiB refused", err)
	}
	if n := r.n.Load(); n > 4<<20 {
		t.Errorf("read %d bytes of a stream whose host counted 1 MiB", n)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is left behind (%v)", dir, err)
	}
}
