package telemetry

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"dbio/internal/results"
)

// ReadHost reads the host's facts through fs: kernel release and hostname
// from /proc/sys/kernel, the OS name from os-release, CPU model and count
// from /proc/cpuinfo and total memory from /proc/meminfo. A fact that cannot
// be read is left empty and named in the returned error, so a run can still
// record the others.
func ReadHost(fs FS) (results.Host, error) {
	var h results.Host
	var errs []error
	try := func(what, path string, parse func(io.Reader) error) {
		if err := readWith(path, parse); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
	}
	line := func(dst *string) func(io.Reader) error {
		return func(r io.Reader) error {
			b, err := io.ReadAll(r)
			*dst = strings.TrimSpace(string(b))
			return err
		}
	}
	try("hostname", fs.proc("sys", "kernel", "hostname"), line(&h.Hostname))
	try("kernel release", fs.proc("sys", "kernel", "osrelease"), line(&h.Kernel))
	if fs.Etc != "" {
		try("os name", filepath.Join(fs.Etc, "os-release"), func(r io.Reader) (err error) { h.OS, err = parseOSRelease(r); return err })
	}
	try("cpu model", fs.proc("cpuinfo"), func(r io.Reader) (err error) { h.CPUModel, h.CPUs, err = parseCPUInfo(r); return err })
	try("memory size", fs.proc("meminfo"), func(r io.Reader) (err error) { h.MemoryBytes, err = parseMemTotal(r); return err })
	if err := errors.Join(errs...); err != nil {
		return h, fmt.Errorf("read host facts: %w", err)
	}
	return h, nil
}
