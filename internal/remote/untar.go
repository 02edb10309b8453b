package remote

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
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

// untar unpacks a tar stream into dir: regular files and directories, each
// inside dir, none replacing a link.
func untar(r io.Reader, dir string) (Fetched, error) {
	var got Fetched
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
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
				return got, err
			}
			got.Files++
			got.Bytes += n
		default:
			got.Skipped = append(got.Skipped, name)
		}
	}
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
