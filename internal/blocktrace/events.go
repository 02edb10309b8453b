package blocktrace

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Event is one line of the kernel's block_rq_issue or block_rq_complete
// tracepoint, as the tracing file system prints it.
type Event struct {
	Complete bool
	// Time is the tracing clock's reading.
	Time         time.Duration
	Major, Minor uint32
	Op           Op
	Flags        Flags
	// Sector and Sectors are in 512-byte units, as the kernel counts them.
	Sector  uint64
	Sectors uint64
	// Comm is the issuing task (issue events only).
	Comm string
}

// ErrNotBlockEvent is a line that is not a request's issue or completion
// (the tracing file system's comments, other events): callers skip it.
var ErrNotBlockEvent = errors.New("not a block request event")

// ParseEvent reads one line of trace_pipe, for example
//
//	fio-12453 [001] ..... 304.537438: block_rq_issue: 7,0 WS 4096 () 2048 + 8 be,0,4 [fio]
//	<idle>-0 [000] ..s.. 304.537531: block_rq_complete: 7,0 WS () 2048 + 8 be,0,4 [0]
func ParseEvent(line string) (Event, error) {
	var ev Event
	var body string
	i := strings.Index(line, ": block_rq_issue: ")
	if i >= 0 {
		body = line[i+len(": block_rq_issue: "):]
	} else if i = strings.Index(line, ": block_rq_complete: "); i >= 0 {
		ev.Complete = true
		body = line[i+len(": block_rq_complete: "):]
	} else {
		return ev, ErrNotBlockEvent
	}
	prefix := strings.Fields(line[:i])
	if len(prefix) == 0 {
		return ev, fmt.Errorf("block event without a timestamp: %q", line)
	}
	t, err := parseSeconds(prefix[len(prefix)-1])
	if err != nil {
		return ev, fmt.Errorf("block event's timestamp: %w in %q", err, line)
	}
	ev.Time = t
	f := strings.Fields(body)
	if len(f) < 3 {
		return ev, fmt.Errorf("short block event: %q", line)
	}
	maj, min, ok := strings.Cut(f[0], ",")
	if !ok {
		return ev, fmt.Errorf("block event's device %q is not major,minor", f[0])
	}
	ma, err1 := strconv.ParseUint(maj, 10, 32)
	mi, err2 := strconv.ParseUint(min, 10, 32)
	if err1 != nil || err2 != nil {
		return ev, fmt.Errorf("block event's device %q is not major,minor", f[0])
	}
	ev.Major, ev.Minor = uint32(ma), uint32(mi)
	if ev.Op, ev.Flags, err = parseRWBS(f[1]); err != nil {
		return ev, err
	}
	// The command is printed in parentheses and may hold spaces; the
	// sector follows it.
	paren := strings.Index(body, ") ")
	if paren < 0 {
		return ev, fmt.Errorf("block event without its command field: %q", line)
	}
	rest := strings.Fields(body[paren+2:])
	if len(rest) < 3 || rest[1] != "+" {
		return ev, fmt.Errorf("block event without sector + count: %q", line)
	}
	if ev.Sector, err = strconv.ParseUint(rest[0], 10, 64); err != nil {
		return ev, fmt.Errorf("block event's sector: %w", err)
	}
	if ev.Sectors, err = strconv.ParseUint(rest[2], 10, 32); err != nil {
		return ev, fmt.Errorf("block event's sector count: %w", err)
	}
	if !ev.Complete {
		tail := body[paren+2:]
		if o := strings.Index(tail, "["); o >= 0 && strings.HasSuffix(tail, "]") {
			ev.Comm = tail[o+1 : len(tail)-1]
		}
	}
	return ev, nil
}

// parseSeconds reads the tracing clock's "seconds.micros".
func parseSeconds(s string) (time.Duration, error) {
	s = strings.TrimSuffix(s, ":")
	whole, frac, _ := strings.Cut(s, ".")
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, err
	}
	if len(frac) > 9 {
		frac = frac[:9]
	}
	ns := int64(0)
	if frac != "" {
		n, err := strconv.ParseInt(frac, 10, 64)
		if err != nil {
			return 0, err
		}
		for range 9 - len(frac) {
			n *= 10
		}
		ns = n
	}
	return time.Duration(sec)*time.Second + time.Duration(ns), nil
}

// parseRWBS reads the kernel's operation string: an optional F for a
// preflush, the operation (W, R, D, F, or N for another one such as
// write-zeroes), then F for FUA, A read-ahead, S sync, M metadata (and E
// for a secure erase).
func parseRWBS(s string) (Op, Flags, error) {
	var flags Flags
	if len(s) >= 2 && s[0] == 'F' && strings.IndexByte("WRDFN", s[1]) >= 0 {
		flags |= Preflush
		s = s[1:]
	}
	if s == "" {
		return 0, 0, errors.New("block event without an operation")
	}
	var op Op
	switch s[0] {
	case 'W':
		op = Write
	case 'R':
		op = Read
	case 'D':
		op = Discard
	case 'F':
		op = Flush
	case 'N':
		op, flags = Write, flags|Zeroes
	default:
		return 0, 0, fmt.Errorf("block event's operation %q is not one the kernel prints", s)
	}
	for _, c := range s[1:] {
		switch c {
		case 'F':
			flags |= FUA
		case 'A':
			flags |= Ahead
		case 'S':
			flags |= Sync
		case 'M':
			flags |= Meta
		case 'E':
		default:
			return 0, 0, fmt.Errorf("block event's operation %q has flag %q the kernel does not print", s, c)
		}
	}
	return op, flags, nil
}

// Assembler matches issues with completions into a Trace's requests.
type Assembler struct {
	start    time.Duration
	trace    Trace
	devices  map[[2]uint32]int
	procs    map[string]int
	inFlight map[flightKey][]int
	depth    map[int]int
	// Unmatched counts completions of requests issued before the trace
	// began, which no request stands for.
	Unmatched int
	// EmptyWrites counts completions of writes without data that were
	// never issued: an fsync's cache flush, sent as a flush request (which
	// the trace has) and ended as a zero-length write, which /proc/diskstats
	// counts among its writes.
	EmptyWrites int
}

type flightKey struct {
	device          int
	flush           bool
	sector, sectors uint64
}

// NewAssembler starts a trace whose clock zero is start (a tracing clock
// reading taken as the capture began).
func NewAssembler(start time.Duration) *Assembler {
	return &Assembler{
		start:   start,
		devices: map[[2]uint32]int{}, procs: map[string]int{},
		inFlight: map[flightKey][]int{}, depth: map[int]int{},
	}
}

// AddDevice names a traced device before its first event, so that a
// device without requests still appears in the trace.
func (a *Assembler) AddDevice(d Device) {
	a.device(d.Major, d.Minor, d.Name)
}

func (a *Assembler) device(major, minor uint32, name string) int {
	k := [2]uint32{major, minor}
	if i, ok := a.devices[k]; ok {
		return i
	}
	if name == "" {
		name = fmt.Sprintf("%d:%d", major, minor)
	}
	a.devices[k] = len(a.trace.Devices)
	a.trace.Devices = append(a.trace.Devices, Device{Name: name, Major: major, Minor: minor})
	return a.devices[k]
}

func (a *Assembler) process(comm string) int {
	if i, ok := a.procs[comm]; ok {
		return i
	}
	a.procs[comm] = len(a.trace.Processes)
	a.trace.Processes = append(a.trace.Processes, comm)
	return a.procs[comm]
}

// Add takes the next event, in the order the kernel printed them. Events
// from before start are dropped.
func (a *Assembler) Add(ev Event) {
	if ev.Time < a.start {
		return
	}
	dev := a.device(ev.Major, ev.Minor, "")
	key := flightKey{device: dev, flush: ev.Op == Flush}
	if !key.flush {
		key.sector, key.sectors = ev.Sector, ev.Sectors
	}
	if ev.Complete {
		pending := a.inFlight[key]
		if len(pending) == 0 {
			if ev.Op == Write && ev.Sectors == 0 {
				a.EmptyWrites++
			} else {
				a.Unmatched++
			}
			return
		}
		i := pending[0]
		if len(pending) == 1 {
			delete(a.inFlight, key)
		} else {
			a.inFlight[key] = pending[1:]
		}
		r := &a.trace.Requests[i]
		r.Latency = ev.Time - a.start - r.At
		a.depth[dev]--
		return
	}
	a.depth[dev]++
	r := Request{
		At: ev.Time - a.start, Latency: -1, Op: ev.Op, Flags: ev.Flags, Device: dev,
		Offset: int64(ev.Sector) * 512, Size: int64(ev.Sectors) * 512,
		Depth: a.depth[dev], Process: a.process(ev.Comm),
	}
	if r.Op == Flush {
		r.Offset, r.Size = 0, 0
	}
	a.inFlight[key] = append(a.inFlight[key], len(a.trace.Requests))
	a.trace.Requests = append(a.trace.Requests, r)
}

// Trace ends the trace at end (a tracing clock reading); requests still in
// flight keep a negative latency.
func (a *Assembler) Trace(end time.Duration) Trace {
	t := a.trace
	t.Duration = end - a.start
	return t
}
