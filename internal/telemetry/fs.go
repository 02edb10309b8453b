package telemetry

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// FS locates the trees telemetry reads, so that tests and captured snapshots
// can stand in for the running system. Every file telemetry opens goes
// through it.
type FS struct {
	// Proc is where procfs is mounted ("/proc").
	Proc string
	// Etc holds os-release ("/etc").
	Etc string
}

// HostFS is the running system's /proc and /etc.
func HostFS() FS { return FS{Proc: "/proc", Etc: "/etc"} }

func (fs FS) proc(elem ...string) string {
	return filepath.Join(append([]string{fs.Proc}, elem...)...)
}

// readWith opens path and hands its content to parse, the only place files
// are opened: parsers only ever see an io.Reader. /proc files are read with
// plain system calls into a reused buffer: os.File's poller registration
// costs more than the read for these small files, and the sampler reads a
// few per server process every second.
func readWith(path string, parse func(io.Reader) error) error {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	return readFD(fd, path, parse)
}

// readFD reads the open file fd (path) from where it stands to its end
// into a reused buffer, and hands the content to parse.
func readFD(fd int, path string, parse func(io.Reader) error) error {
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	buf := (*bp)[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	*bp = buf
	if err := parse(bytes.NewReader(buf)); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
}

// buffers holds read buffers; /proc/stat alone can be tens of kB on a large machine.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 8192); return &b }}

// heldFiles keeps the /proc files of a group's processes and threads open
// from one sample to the next, read again from their start each time:
// opening one costs the kernel a path walk that takes longer than reading
// it (13 µs against 6 µs for a thread's stat on the development machine),
// and the sampler reads a few per server process, and one per thread of a
// threaded server, every second. Files a walk did not read are closed at
// its end (sweep). A file whose task is gone fails its read; it is opened
// once more, so that a pid the kernel gave to a new task is read afresh.
// At most maxHeldFiles stay open; beyond, files are opened for each read.
// The zero value is empty and ready.
type heldFiles struct {
	byPath map[string]*heldFile
}

// heldFile is one open file and whether this walk read it.
type heldFile struct {
	// f owns the descriptor, and closes it should the sampler be dropped
	// without a last sweep.
	f    *os.File
	fd   int
	read bool
}

// maxHeldFiles bounds the descriptors a group keeps open.
const maxHeldFiles = 4096

// read hands path's content to parse, through a held descriptor.
func (h *heldFiles) read(path string, parse func(io.Reader) error) error {
	if hf := h.byPath[path]; hf != nil {
		hf.read = true
		_, err := syscall.Seek(hf.fd, 0, io.SeekStart)
		if err == nil {
			err = readFD(hf.fd, path, parse)
		}
		var pe *os.PathError
		if err == nil || !errors.As(err, &pe) {
			return err // read, or read and not understood
		}
		hf.f.Close()
		delete(h.byPath, path)
	}
	if len(h.byPath) >= maxHeldFiles {
		return readWith(path, parse)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	if h.byPath == nil {
		h.byPath = map[string]*heldFile{}
	}
	hf := &heldFile{f: f, fd: int(f.Fd()), read: true}
	h.byPath[path] = hf
	return readFD(hf.fd, path, parse)
}

// sweep closes the files the walk since the last sweep did not read.
func (h *heldFiles) sweep() {
	for path, hf := range h.byPath {
		if !hf.read {
			hf.f.Close()
			delete(h.byPath, path)
			continue
		}
		hf.read = false
	}
}
