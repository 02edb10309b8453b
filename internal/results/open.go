package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Results directories are handed around between people, so everything read
// from one is untrusted: a link may point anywhere, a named pipe would block a
// reader for ever, and a file may be any size. Every reader of a results
// directory opens its files here: regular files only, reached from the
// directory without following a link on the way, and read within a bound.

// ErrUntrusted marks what dbio refuses to read from a results directory
// because dbio never writes it so: a link, a named pipe or device, a file
// beyond any size dbio writes, a recorded path that leaves its directory.
var ErrUntrusted = errors.New("not as dbio writes a results directory")

// ErrNotResults marks a directory that holds no record dbio writes (no
// run.json, no suite.json): the user named another directory.
var ErrNotResults = errors.New("not a dbio results directory")

// notResultsError is ErrNotResults in the words of what was looked for.
type notResultsError struct{ msg string }

func (e *notResultsError) Error() string { return e.msg }
func (e *notResultsError) Unwrap() error { return ErrNotResults }

// notResults says what dir lacks: "no run.json".
func notResults(dir, what, lacks string) error {
	return &notResultsError{msg: fmt.Sprintf("%s is not a dbio %s (no %s): name a directory dbio wrote, as dbio runs lists them", dir, what, lacks)}
}

// MaxJSONBytes bounds every JSON record read from a results directory. The
// largest dbio writes are a fleet run's run.json and a fleet point's
// summary.json, well under a MiB for a thousand hosts.
const MaxJSONBytes = 64 << 20

// untrustedError is ErrUntrusted with the file it is about and what to
// do, and the error that found it, if any.
type untrustedError struct {
	msg string
	err error
}

func (e *untrustedError) Error() string { return e.msg }
func (e *untrustedError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrUntrusted}
	}
	return []error{ErrUntrusted, e.err}
}

// damaged refuses the file at path, which err found is not as dbio writes
// it: dbio writes each record whole (through a rename), so a record that
// does not decode was not left so by dbio.
func damaged(path string, err error) error {
	return &untrustedError{err: err, msg: fmt.Sprintf("%s: %v: dbio writes each of its records whole, so this one was changed since; ask whoever sent the directory for it as dbio wrote it",
		Printable(path), err)}
}

// untrusted refuses path for what it is ("is a symbolic link").
func untrusted(path, what string) error {
	return &untrustedError{msg: fmt.Sprintf("%s %s: dbio reads only the regular files it wrote in a results directory, never through a link nor outside the directory; ask whoever sent the directory for it as dbio wrote it, or put what dbio wrote in its place (cp -rL copies a link's target)",
		Printable(path), what)}
}

// leaves refuses rel, a path a record in root names, for leaving root.
func leaves(root, rel string) error {
	return &untrustedError{msg: fmt.Sprintf("%q leaves %s: dbio reads the paths a results directory records only inside it, never outside it nor through a link; ask whoever sent the directory for it as dbio wrote it",
		rel, Printable(root))}
}

// OpenIn opens the regular file rel inside the directory root for reading.
// root itself is taken as the caller names it (a user may reach a results
// directory through a link of their own); below it no link is followed, in
// rel's directories or at its last element, and anything but a regular
// file (a named pipe, a device, a socket, a directory) is refused without
// blocking. A refusal wraps ErrUntrusted; a missing file wraps
// fs.ErrNotExist.
func OpenIn(root, rel string) (*os.File, error) {
	path := filepath.Join(root, rel)
	dir, name, err := openParent(root, rel)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(dir)
	// O_NONBLOCK: opening a named pipe without a writer returns at once
	// instead of waiting for one; fstat then refuses it.
	fd, err := openat(dir, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, openError(path, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, untrusted(path, "is "+kindOf(st.Mode)+", not a regular file")
	}
	return os.NewFile(uintptr(fd), path), nil
}

// ReadDirIn lists the directory rel inside root (rel "." is root itself),
// reached without following a link below root. Its entries are as the
// directory holds them: a link's entry is a link, never its target.
func ReadDirIn(root, rel string) ([]os.DirEntry, error) {
	path := filepath.Join(root, rel)
	fd, err := openDirIn(root, rel)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// Within is the path of rel inside the directory root, for a path a
// results directory records (a suite's runs, a repeat set's repeats, a fleet
// host's directory): rel must stay inside root (no "..", not absolute), and
// no element of it may be a link. It checks what exists; a missing element
// is for the reader to report. A refusal wraps ErrUntrusted.
func Within(root, rel string) (string, error) {
	if !filepath.IsLocal(rel) {
		return "", leaves(root, rel)
	}
	p := root
	for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/") {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", untrusted(p, "is a symbolic link")
		}
	}
	return filepath.Join(root, rel), nil
}

// readJSONIn decodes the JSON file rel inside root into v: opened by
// OpenIn, at most MaxJSONBytes, its strings made printable (see
// printableJSON) before they are decoded.
func readJSONIn(root, rel string, v any) error {
	b, err := readFileIn(root, rel, MaxJSONBytes)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(printableJSON(b), v); err != nil {
		return damaged(filepath.Join(root, rel), err)
	}
	return nil
}

// readJSON is readJSONIn for a file named by its whole path: its directory
// is the root, as the caller named it.
func readJSON(path string, v any) error {
	return readJSONIn(filepath.Dir(path), filepath.Base(path), v)
}

// readFileIn reads the regular file rel inside root, refusing one larger
// than limit bytes.
func readFileIn(root, rel string, limit int64) ([]byte, error) {
	f, err := OpenIn(root, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return nil, tooLarge(f.Name(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(f.Name(), limit)
	}
	return b, nil
}

func tooLarge(path string, limit int64) error {
	return untrusted(path, fmt.Sprintf("is larger than %d MiB, more than dbio writes there", limit>>20))
}

// openParent opens the directory that holds rel's last element, reached
// from root without following a link, and returns it with that element's
// name.
func openParent(root, rel string) (int, string, error) {
	if !filepath.IsLocal(rel) {
		return -1, "", leaves(root, rel)
	}
	rel = filepath.Clean(rel)
	fd, err := openDirIn(root, filepath.Dir(rel))
	if err != nil {
		return -1, "", err
	}
	return fd, filepath.Base(rel), nil
}

// openDirIn opens the directory rel inside root, one element at a time,
// none of them followed if it is a link.
func openDirIn(root, rel string) (int, error) {
	fd, err := syscall.Open(root, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: root, Err: err}
	}
	if rel == "." || rel == "" {
		return fd, nil
	}
	if !filepath.IsLocal(rel) {
		syscall.Close(fd)
		return -1, leaves(root, rel)
	}
	p := root
	for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/") {
		p = filepath.Join(p, part)
		next, err := openat(fd, part, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
		if err != nil {
			err = openError(p, err)
			syscall.Close(fd)
			return -1, err
		}
		syscall.Close(fd)
		fd = next
	}
	return fd, nil
}

// openat retries an open interrupted by a signal.
func openat(dir int, name string, flags int) (int, error) {
	for {
		fd, err := syscall.Openat(dir, name, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// openError says why path could not be opened: a link, or a file where a
// directory belongs, is refused as untrusted; anything else is the
// system's error.
func openError(path string, err error) error {
	// A link (ELOOP), a file where a directory belongs (ENOTDIR), a socket (ENXIO).
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ENXIO) {
		var st syscall.Stat_t
		if syscall.Lstat(path, &st) == nil {
			return untrusted(path, "is "+kindOf(st.Mode))
		}
	}
	return &os.PathError{Op: "open", Path: path, Err: err}
}

// kindOf names a file's type for a refusal.
func kindOf(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		return "a symbolic link"
	case syscall.S_IFIFO:
		return "a named pipe"
	case syscall.S_IFCHR, syscall.S_IFBLK:
		return "a device"
	case syscall.S_IFSOCK:
		return "a socket"
	case syscall.S_IFDIR:
		return "a directory"
	case syscall.S_IFREG:
		return "a regular file where a directory belongs"
	}
	return "not a regular file"
}

// Damaged refuses the file at path, as a record that does not decode is
// refused, for readers of what else dbio keeps in a results directory
// (fio's logs): dbio wrote it whole, so it was changed since.
func Damaged(path string, err error) error { return damaged(path, err) }

// Untrusted refuses path for what it is ("holds more than ..."), as dbio
// refuses what it never writes in a results directory.
func Untrusted(path, what string) error { return untrusted(path, what) }
