package remote

import (
	"archive/tar"
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Fetched is what came back from a host.
type Fetched struct {
	Files int
	Bytes int64
	// Skipped are the entries left out: links and special files, which a
	// results directory does not hold and dbio does not follow.
	Skipped []string
}

// The most dbio brings back from one host, whatever the host counts: a
// tenant's results are about 0.4 MB for a ten-minute step (its per-second
// series, summaries, histograms and the server's log), so these leave
// room for days of steps while a host that went wrong (or a stream that
// lies) cannot fill the coordinator's disk or its inodes.
const (
	ceilingBytes   = 4 << 30
	ceilingEntries = 100_000
)

// Budget is the most one host's results may unpack into: its own count of
// them, taken before the transfer, with a margin.
type Budget struct {
	// Bytes are the contents of the regular files, Entries every entry of
	// the stream (files, directories and what is skipped).
	Bytes   int64
	Entries int
}

// Counted is a host's count of its results directory before the
// transfer: the apparent size of what it holds (du -sb) and its entries
// (find, the directory itself included).
type Counted struct {
	Bytes   int64
	Entries int
}

// countLine starts the stream Fetch reads, before the tar archive.
const countLine = "dbio-results"

// budget is what c may unpack into: the count with a margin (du counts
// directories' own sizes too, so the margin is for the unexpected, not
// for growth: the tenant has ended), refused when it is over the ceiling.
func (c Counted) budget() (Budget, error) {
	if c.Bytes > ceilingBytes || c.Entries > ceilingEntries {
		return Budget{}, fmt.Errorf("the host counts %s in %d entries there, more than dbio brings back from a host (%s, %d entries): a tenant's results are far smaller, so look at what the directory holds",
			mib(c.Bytes), c.Entries, mib(ceilingBytes), ceilingEntries)
	}
	return Budget{Bytes: min(c.Bytes+c.Bytes/8+1<<20, ceilingBytes), Entries: min(c.Entries+16, ceilingEntries)}, nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// readCount reads the host's count, the stream's first line.
func readCount(r *bufio.Reader) (Counted, error) {
	line, err := r.ReadSlice('\n')
	if len(line) == 0 && errors.Is(err, io.EOF) {
		return Counted{}, fmt.Errorf("the host sent no count of its results before them (%w)", io.ErrUnexpectedEOF)
	}
	var c Counted
	f := strings.Fields(string(line))
	if err == nil && len(f) == 3 && f[0] == countLine {
		var errB, errN error
		c.Bytes, errB = strconv.ParseInt(f[1], 10, 64)
		c.Entries, errN = strconv.Atoi(f[2])
		if errB == nil && errN == nil && c.Bytes >= 0 && c.Entries >= 0 {
			return c, nil
		}
	}
	return Counted{}, fmt.Errorf("the host's count of its results reads %q, not %q: the host needs du (GNU coreutils) and find", line[:min(len(line), 64)], countLine+" BYTES ENTRIES")
}

// trailing is the most a stream may hold after its archive's end: tar
// pads its archive to a whole record (10 KiB by default) with zeros.
const trailing = 1 << 20

// unpack makes dir and unpacks into it the stream Fetch reads (the host's
// count, then a tar archive), within the budget the count gives and what
// free (the space and inodes free where dir is made) leaves. On any error
// dir, which it made, goes with all it holds: a host's results come back
// whole or not at all. The stream is read as it comes, never held.
func unpack(r io.Reader, dir string, free func(string) (bytes uint64, inodes uint64, err error)) (Fetched, error) {
	br := bufio.NewReader(r)
	c, err := readCount(br)
	if err != nil {
		return Fetched{}, err
	}
	b, err := c.budget()
	if err != nil {
		return Fetched{}, err
	}
	if bytes, inodes, err := free(filepath.Dir(dir)); err == nil && (uint64(c.Bytes) > bytes || uint64(c.Entries) > inodes) {
		return Fetched{}, fmt.Errorf("the host counts %s in %d entries there, more than the %s and %d inodes free in %s: free some space there, or fetch them yourself",
			mib(c.Bytes), c.Entries, mib(int64(min(bytes, 1<<62))), inodes, filepath.Dir(dir))
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return Fetched{}, err
	}
	got, err := untar(br, dir, b)
	if err == nil {
		// What follows the archive's end is tar's padding, and nothing more.
		if n, _ := io.Copy(io.Discard, io.LimitReader(br, trailing+1)); n > trailing {
			err = fmt.Errorf("the stream goes on for more than %s after its archive's end", mib(trailing))
		}
	}
	if err != nil {
		if rerr := os.RemoveAll(dir); rerr != nil {
			err = fmt.Errorf("%w (and %s, which dbio made for them, could not be removed: %v)", err, dir, rerr)
		}
		return Fetched{}, err
	}
	return got, nil
}

// untar unpacks a tar stream into dir: regular files and directories, each
// inside dir, none replacing a link, within b. A sparse file is refused
// (a results directory holds none, and a few KiB of one can stand for
// gigabytes of zeros), and so is an entry declaring more bytes than b has
// left, before anything of it is written.
func untar(r io.Reader, dir string, b Budget) (Fetched, error) {
	var got Fetched
	entries := 0
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, fmt.Errorf("the archive, after %d entries: %w", entries, err)
		}
		if entries++; entries > b.Entries {
			return got, fmt.Errorf("the stream holds more than %d entries, the host's own count of them and a margin: dbio stops there", b.Entries)
		}
		if sparse(hdr) {
			return got, fmt.Errorf("entry %q is a sparse file (%s as written): a results directory holds none, and dbio does not expand one", hdr.Name, mib(hdr.Size))
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		if name == "." {
			continue
		}
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return got, fmt.Errorf("entry %q leads out of the directory", hdr.Name)
		}
		dest := filepath.Join(dir, filepath.FromSlash(name))
		if err := noLinkOnTheWay(dir, name); err != nil {
			return got, err
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dest, 0o755); err != nil {
				return got, err
			}
		case tar.TypeReg:
			if left := b.Bytes - got.Bytes; hdr.Size > left {
				return got, fmt.Errorf("entry %q declares %s, more than the %s left of the host's own count of its results and a margin (%s): dbio stops there", hdr.Name, mib(hdr.Size), mib(left), mib(b.Bytes))
			}
			if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
				return got, err
			}
			f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return got, err
			}
			n, err := io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return got, fmt.Errorf("entry %q: %w", hdr.Name, err)
			}
			got.Files++
			got.Bytes += n
		default:
			got.Skipped = append(got.Skipped, name)
		}
	}
}

// sparse says whether hdr is a sparse file, in GNU's old format or PAX's.
func sparse(hdr *tar.Header) bool {
	if hdr.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// noLinkOnTheWay refuses a path under dir whose existing parts include a
// symbolic link: unpacking never follows one out of the directory.
func noLinkOnTheWay(dir, name string) error {
	p := dir
	for _, part := range strings.Split(name, "/") {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link: dbio does not unpack through it", p)
		}
	}
	return nil
}
