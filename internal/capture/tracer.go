// Package capture records a database's block I/O while its own workload
// runs: the devices behind a target, the kernel's block tracepoints on them
// read through a tracing instance of dbio's own, the device's counters
// before and after as a check, and the capture's results directory.
package capture

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"dbio/internal/blocktrace"
)

// SetupError is a capture that cannot begin (no root, no tracing, a device
// that is not one): bad input, reported before anything is written.
type SetupError struct{ Msg string }

func (e *SetupError) Error() string { return e.Msg }

func setupf(format string, a ...any) error { return &SetupError{Msg: fmt.Sprintf(format, a...)} }

// NeedRoot refuses a capture by a user other than root: only root may
// read the kernel's tracepoints.
func NeedRoot(euid int) error {
	if euid != 0 {
		return setupf("capturing block I/O needs root (it reads the kernel's block tracepoints): run dbio capture with sudo")
	}
	return nil
}

// Tracer is dbio's tracing instance: the block_rq_issue and block_rq_complete
// events of the traced devices, in a buffer no other tracing user shares.
type Tracer struct {
	root    string // the tracing file system
	dir     string // dbio's instance in it
	mounted bool   // dbio mounted root and unmounts it
	devices []blocktrace.Device
	spans   []span
	token   string
}

// span is where a traced device's requests appear: a whole disk's on the
// disk itself; a partition's on its disk (the kernel issues requests to
// the disk), between its first sector and its end.
type span struct {
	disk       [2]uint32
	partition  bool
	start, end uint64 // sectors on the disk
}

// spanOf finds where d's requests appear through the /sys root sys, and
// refuses a device whose requests the kernel never issues itself
// (device-mapper and md devices hand theirs to the disks beneath).
func spanOf(sys string, d blocktrace.Device) (span, error) {
	dir := filepath.Join(sys, "dev", "block", d.Number())
	sp := span{disk: [2]uint32{d.Major, d.Minor}}
	for _, stacked := range []struct{ dir, what string }{{"dm", "device-mapper"}, {"md", "software RAID (md)"}} {
		if _, err := os.Stat(filepath.Join(dir, stacked.dir)); err == nil {
			return sp, setupf("%s is a %s device, whose requests the kernel issues to the devices beneath it: capture those (listed in /sys/dev/block/%s/slaves) with --device", d.Name, stacked.what, d.Number())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "partition")); err != nil {
		return sp, nil
	}
	read := func(rel string) (uint64, error) {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			return 0, err
		}
		return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	start, err1 := read("start")
	size, err2 := read("size")
	// The partition's directory in /sys sits in its disk's.
	real, err3 := filepath.EvalSymlinks(dir)
	var disk []byte
	if err3 == nil {
		disk, err3 = os.ReadFile(filepath.Join(filepath.Dir(real), "dev"))
	}
	if err := errors.Join(err1, err2, err3); err != nil {
		return sp, setupf("partition %s: cannot find its disk: %v", d.Name, err)
	}
	maj, min, _ := strings.Cut(strings.TrimSpace(string(disk)), ":")
	ma, err1 := strconv.ParseUint(maj, 10, 32)
	mi, err2 := strconv.ParseUint(min, 10, 32)
	if err1 != nil || err2 != nil {
		return sp, setupf("partition %s: its disk's number %q is not MAJOR:MINOR", d.Name, disk)
	}
	return span{disk: [2]uint32{uint32(ma), uint32(mi)}, partition: true, start: start, end: start + size}, nil
}

// place moves an event on a disk to the traced device it belongs to (a
// partition's sectors counted from the partition's start); false drops it.
// A flush is the whole disk's: it goes to the disk's first traced device.
func (t *Tracer) place(ev *blocktrace.Event) bool {
	for i, sp := range t.spans {
		if sp.disk != [2]uint32{ev.Major, ev.Minor} {
			continue
		}
		if sp.partition && ev.Sectors > 0 {
			if ev.Sector < sp.start || ev.Sector >= sp.end {
				continue
			}
			ev.Sector -= sp.start
		}
		ev.Major, ev.Minor = t.devices[i].Major, t.devices[i].Minor
		return true
	}
	return false
}

// DefaultTraceFS is where the kernel's tracing file system is mounted.
const DefaultTraceFS = "/sys/kernel/tracing"

var events = []string{"block_rq_issue", "block_rq_complete"}

// OpenTracer sets up tracing of devices (found through the /sys root sys)
// under root, the tracing file system (mounted there when it is not),
// without starting it.
func OpenTracer(root, sys string, devices []blocktrace.Device) (*Tracer, error) {
	if len(devices) == 0 {
		return nil, setupf("no device to capture: give --device or --target")
	}
	t := &Tracer{root: root, devices: devices}
	disks := map[[2]uint32]bool{}
	var filter []string
	for _, d := range devices {
		sp, err := spanOf(sys, d)
		if err != nil {
			return nil, err
		}
		t.spans = append(t.spans, sp)
		if !disks[sp.disk] {
			disks[sp.disk] = true
			filter = append(filter, fmt.Sprintf("dev == %d", uint64(sp.disk[0])<<20|uint64(sp.disk[1])))
		}
	}
	if _, err := os.Stat(filepath.Join(root, "instances")); err != nil {
		if err := syscall.Mount("nodev", root, "tracefs", 0, ""); err != nil {
			return nil, setupf("the kernel's tracing file system is not at %s and cannot be mounted there (%v): mount it with 'mount -t tracefs nodev %s'", root, err, root)
		}
		t.mounted = true
	}
	if _, err := os.Stat(filepath.Join(root, "events", "block", "block_rq_issue")); err != nil {
		t.unmount()
		return nil, setupf("this kernel has no block tracepoints (%s/events/block): it was built without block tracing", root)
	}
	t.token = fmt.Sprintf("dbio-capture-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.dir = filepath.Join(root, "instances", t.token)
	if err := os.Mkdir(t.dir, 0o700); err != nil {
		t.unmount()
		return nil, setupf("cannot make a tracing instance in %s: %v", root, err)
	}
	steps := []struct{ file, value string }{
		{"trace_clock", "mono"},
		// Per CPU: a second at 200,000 requests a second fits.
		{"buffer_size_kb", "32768"},
	}
	for _, ev := range events {
		steps = append(steps, struct{ file, value string }{filepath.Join("events", "block", ev, "filter"), strings.Join(filter, " || ")})
	}
	for _, s := range steps {
		if err := os.WriteFile(filepath.Join(t.dir, s.file), []byte(s.value), 0); err != nil {
			t.Close()
			return nil, setupf("cannot set up block tracing (%s): %v", s.file, err)
		}
	}
	return t, nil
}

// Close stops tracing and removes dbio's instance (and the tracing file
// system, when dbio mounted it).
func (t *Tracer) Close() error {
	for _, ev := range events {
		os.WriteFile(filepath.Join(t.dir, "events", "block", ev, "enable"), []byte("0"), 0)
	}
	err := syscall.Rmdir(t.dir)
	if errors.Is(err, syscall.ENOENT) {
		err = nil
	}
	t.unmount()
	return err
}

func (t *Tracer) unmount() {
	if t.mounted {
		syscall.Unmount(t.root, 0)
		t.mounted = false
	}
}

func (t *Tracer) enable(ev, v string) error {
	return os.WriteFile(filepath.Join(t.dir, "events", "block", ev, "enable"), []byte(v), 0)
}

func (t *Tracer) mark(what string) error {
	return os.WriteFile(filepath.Join(t.dir, "trace_marker"), []byte(t.token+" "+what+"\n"), 0)
}

// Stats are what the tracer itself observed of its capture.
type Stats struct {
	// Lost are events the kernel's buffer overran and dropped.
	Lost int64
	// Unmatched are completions of requests issued before the capture.
	Unmatched int
	// EmptyWrites are the zero-length writes that end an fsync's flush
	// (see blocktrace.Assembler.EmptyWrites).
	EmptyWrites int
}

// Run traces for d (or until ctx ends) and returns the requests. atMarker,
// when given, is called right after the start and the end are marked in
// the trace ("start", "end"), so that the devices' own counters are read
// at the same instants.
func (t *Tracer) Run(ctx context.Context, d time.Duration, atMarker func(string) error) (blocktrace.Trace, Stats, error) {
	if atMarker == nil {
		atMarker = func(string) error { return nil }
	}
	var st Stats
	pipe, err := os.Open(filepath.Join(t.dir, "trace_pipe"))
	if err != nil {
		return blocktrace.Trace{}, st, err
	}
	defer pipe.Close()
	for _, ev := range events {
		if err := t.enable(ev, "1"); err != nil {
			return blocktrace.Trace{}, st, fmt.Errorf("start block tracing: %w", err)
		}
	}
	if err := t.mark("start"); err != nil {
		return blocktrace.Trace{}, st, fmt.Errorf("start block tracing: %w", err)
	}
	if err := atMarker("start"); err != nil {
		return blocktrace.Trace{}, st, err
	}
	type result struct {
		tr  blocktrace.Trace
		a   *blocktrace.Assembler
		err error
	}
	done := make(chan result, 1)
	go func() {
		tr, a, err := t.read(pipe)
		done <- result{tr, a, err}
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	case r := <-done:
		return r.tr, st, fmt.Errorf("block tracing ended early: %v", r.err)
	}
	if err := t.mark("end"); err != nil {
		return blocktrace.Trace{}, st, err
	}
	endErr := atMarker("end")
	for _, ev := range events {
		t.enable(ev, "0")
	}
	r := <-done
	if r.a != nil {
		st.Unmatched, st.EmptyWrites = r.a.Unmatched, r.a.EmptyWrites
	}
	st.Lost = t.lost()
	return r.tr, st, errors.Join(r.err, endErr)
}

// read assembles the events between dbio's start and end markers.
func (t *Tracer) read(pipe io.Reader) (blocktrace.Trace, *blocktrace.Assembler, error) {
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	var a *blocktrace.Assembler
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, t.token+" "); i >= 0 {
			at, err := markerTime(line)
			if err != nil {
				return blocktrace.Trace{}, nil, err
			}
			switch strings.TrimSpace(line[i+len(t.token)+1:]) {
			case "start":
				a = blocktrace.NewAssembler(at)
				for _, d := range t.devices {
					a.AddDevice(d)
				}
			case "end":
				if a == nil {
					return blocktrace.Trace{}, nil, errors.New("block tracing: end marker before the start marker")
				}
				return a.Trace(at), a, nil
			}
			continue
		}
		ev, err := blocktrace.ParseEvent(line)
		if errors.Is(err, blocktrace.ErrNotBlockEvent) || a == nil {
			continue
		}
		if err != nil {
			return blocktrace.Trace{}, nil, err
		}
		if t.place(&ev) {
			a.Add(ev)
		}
	}
	if err := sc.Err(); err != nil {
		return blocktrace.Trace{}, nil, err
	}
	return blocktrace.Trace{}, nil, errors.New("block tracing: the trace ended without dbio's end marker")
}

// markerTime reads the tracing clock from a trace_marker line
// ("<...>-12 [000] ..... 304.5: tracing_mark_write: TOKEN start").
func markerTime(line string) (time.Duration, error) {
	i := strings.Index(line, ": tracing_mark_write:")
	if i < 0 {
		return 0, fmt.Errorf("block tracing: marker line %q has no timestamp", line)
	}
	f := strings.Fields(line[:i])
	if len(f) == 0 {
		return 0, fmt.Errorf("block tracing: marker line %q has no timestamp", line)
	}
	whole, frac, _ := strings.Cut(f[len(f)-1], ".")
	s, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("block tracing: marker timestamp %q: %w", f[len(f)-1], err)
	}
	for len(frac) < 9 {
		frac += "0"
	}
	ns, err := strconv.ParseInt(frac[:9], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("block tracing: marker timestamp %q: %w", f[len(f)-1], err)
	}
	return time.Duration(s)*time.Second + time.Duration(ns), nil
}

// lost sums the events the instance's per-CPU buffers overran.
func (t *Tracer) lost() int64 {
	cpus, _ := filepath.Glob(filepath.Join(t.dir, "per_cpu", "cpu*", "stats"))
	var n int64
	for _, c := range cpus {
		b, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(l, ":")
			if ok && (k == "overrun" || k == "dropped events") {
				x, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += x
			}
		}
	}
	return n
}
