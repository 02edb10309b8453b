package telemetry

import (
	"bytes"
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
			syscall.Close(fd)
			return &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	syscall.Close(fd)
	*bp = buf
	if err := parse(bytes.NewReader(buf)); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
}

// buffers holds read buffers; /proc/stat alone can be tens of kB on a large machine.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 8192); return &b }}
