package telemetry

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// readWith opens path and hands it to parse, the only place files are opened:
// parsers only ever see an io.Reader.
func readWith(path string, parse func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := parse(f); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
}
