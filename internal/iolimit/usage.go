package iolimit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"dbio/internal/cgroup"
)

// Served is what a group's processes were served on one device since the
// group was created, as the group's own counters have it: I/Os and bytes,
// per direction. These are the I/Os the caps count, as they leave the
// throttle: a request the device later merges with another is still two.
type Served struct {
	ReadIOs, WriteIOs, ReadBytes, WriteBytes uint64
}

// Usage is a group's counters at one reading.
type Usage struct {
	// Devices holds what each of the group's capped devices served it,
	// by "major:minor"; a device it has done no I/O on yet may be absent.
	Devices map[string]Served
	// Pressure is the group's own I/O stall (v2's io.pressure): the time
	// some, and all, of its tasks were stalled on I/O, the cap's queueing
	// included. HasPressure says the kernel keeps it for the group; cgroup
	// v1 does not.
	Pressure    cgroup.Pressure
	HasPressure bool
}

// Usage reads the group's counters now: cgroup v1's
// blkio.throttle.io_serviced and blkio.throttle.io_service_bytes, or v2's
// io.stat and io.pressure.
func (g *Group) Usage() (Usage, error) {
	all := map[string]Served{}
	switch g.Version {
	case "v2-io":
		if err := readFile(filepath.Join(g.Path, "io.stat"), func(r io.Reader) (err error) { all, err = parseIOStat(r); return err }); err != nil {
			return Usage{}, err
		}
	default:
		var ios, bytes map[string]readWrite
		if err := readFile(filepath.Join(g.Path, "blkio.throttle.io_serviced"), func(r io.Reader) (err error) { ios, err = parseV1Stat(r); return err }); err != nil {
			return Usage{}, err
		}
		if err := readFile(filepath.Join(g.Path, "blkio.throttle.io_service_bytes"), func(r io.Reader) (err error) { bytes, err = parseV1Stat(r); return err }); err != nil {
			return Usage{}, err
		}
		for dev, n := range ios {
			s := all[dev]
			s.ReadIOs, s.WriteIOs = n.read, n.write
			all[dev] = s
		}
		for dev, n := range bytes {
			s := all[dev]
			s.ReadBytes, s.WriteBytes = n.read, n.write
			all[dev] = s
		}
	}
	// The group's processes may do I/O elsewhere too (a server's own log
	// on the system disk): only the capped devices are its cap's.
	u := Usage{Devices: make(map[string]Served, len(g.Devices))}
	for _, d := range g.Devices {
		if s, ok := all[d]; ok {
			u.Devices[d] = s
		}
	}
	if g.Version == "v2-io" {
		err := readFile(filepath.Join(g.Path, "io.pressure"), func(r io.Reader) (err error) { u.Pressure, err = cgroup.ParsePressure(r); return err })
		u.HasPressure = err == nil
	}
	return u, nil
}

// readFile opens path and hands it to parse.
func readFile(path string, parse func(io.Reader) error) error {
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

// readWrite is one device's line pair of a cgroup v1 blkio statistics file.
type readWrite struct{ read, write uint64 }

// parseV1Stat reads a cgroup v1 blkio statistics file
// (blkio.throttle.io_serviced, blkio.throttle.io_service_bytes): lines
// "major:minor Op N" for the operations Read, Write, Sync, Async, Discard
// and Total of each device, then "Total N" for the group. It keeps Read
// and Write, per device.
func parseV1Stat(r io.Reader) (map[string]readWrite, error) {
	out := map[string]readWrite{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			if len(f) == 0 || len(f) == 2 && f[0] == "Total" {
				continue
			}
			return nil, fmt.Errorf("line %d: %q is not \"major:minor operation count\"", line, sc.Text())
		}
		if f[1] != "Read" && f[1] != "Write" {
			continue
		}
		if !isDevNumber(f[0]) {
			return nil, fmt.Errorf("line %d: %q is not a major:minor device number", line, f[0])
		}
		n, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d (%s %s): %w", line, f[0], f[1], err)
		}
		rw := out[f[0]]
		if f[1] == "Read" {
			rw.read = n
		} else {
			rw.write = n
		}
		out[f[0]] = rw
	}
	return out, sc.Err()
}

// parseIOStat reads a cgroup v2 io.stat: a line per device, "major:minor"
// then key=value pairs (rbytes, wbytes, rios, wios, dbytes, dios, and
// those of the io.cost and io.latency controllers where they run, which
// are left alone).
func parseIOStat(r io.Reader) (map[string]Served, error) {
	out := map[string]Served{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if !isDevNumber(f[0]) {
			return nil, fmt.Errorf("line %d: %q is not a major:minor device number", line, f[0])
		}
		var s Served
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("line %d (%s): %q is not key=value", line, f[0], kv)
			}
			var into *uint64
			switch k {
			case "rios":
				into = &s.ReadIOs
			case "wios":
				into = &s.WriteIOs
			case "rbytes":
				into = &s.ReadBytes
			case "wbytes":
				into = &s.WriteBytes
			default:
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d (%s) %s: %w", line, f[0], k, err)
			}
			*into = n
		}
		out[f[0]] = s
	}
	return out, sc.Err()
}

// isDevNumber says whether s is "major:minor".
func isDevNumber(s string) bool {
	major, minor, ok := strings.Cut(s, ":")
	_, errMajor := strconv.ParseUint(major, 10, 32)
	_, errMinor := strconv.ParseUint(minor, 10, 32)
	return ok && errMajor == nil && errMinor == nil
}
