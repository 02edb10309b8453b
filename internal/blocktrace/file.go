package blocktrace

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// FileName is the trace's file in a capture's results directory.
const FileName = "trace.dbt.gz"

// header opens every trace file; the number is the format's version.
const header = "dbio block trace 1"

// Limits of what Decode accepts, so that a damaged or hostile file cannot
// take the machine's memory.
const (
	maxLine     = 4096
	maxRequests = 200_000_000
	maxNames    = 1 << 16
	// maxOffset is 8 EiB's half, more than any device holds, so that a
	// request's end (Offset+Size) cannot overflow; maxSize is far above
	// the largest request a block device takes.
	maxOffset = 1 << 62
	maxSize   = 1 << 30
)

// Encode writes t gzip-compressed in dbio's trace format: a header, the
// duration, the devices and processes by index, then one line per request
// with its issue time as microseconds since the previous request's:
//
//	dbio block trace 1
//	duration_us 10000000
//	device 0 7:0 loop0
//	process 0 postgres
//	<delta_us> <op><flags> <device> <offset> <size> <latency_us|-> <depth> <process>
//
// Times are kept to the microsecond, which is the tracing clock's precision
// as the kernel prints it.
func Encode(w io.Writer, t Trace) error {
	zw := gzip.NewWriter(w)
	bw := bufio.NewWriter(zw)
	fmt.Fprintf(bw, "%s\nduration_us %d\n", header, t.Duration.Microseconds())
	for i, d := range t.Devices {
		if err := name(d.Name); err != nil {
			return fmt.Errorf("device %d: %w", i, err)
		}
		fmt.Fprintf(bw, "device %d %d:%d %s\n", i, d.Major, d.Minor, d.Name)
	}
	for i, p := range t.Processes {
		// A task's name may hold spaces; the line's rest is the name.
		if strings.ContainsAny(p, "\n\r") {
			return fmt.Errorf("process %d's name holds a line break", i)
		}
		fmt.Fprintf(bw, "process %d %s\n", i, p)
	}
	prev := int64(0)
	for i, r := range t.Requests {
		at := r.At.Microseconds()
		if at < prev {
			return fmt.Errorf("request %d was issued before the one written before it", i)
		}
		lat := "-"
		if r.Completed() {
			lat = strconv.FormatInt(r.Latency.Microseconds(), 10)
		}
		fmt.Fprintf(bw, "%d %c%s %d %d %d %s %d %d\n", at-prev, r.Op, r.Flags.letters(),
			r.Device, r.Offset, r.Size, lat, r.Depth, r.Process)
		prev = at
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

func name(s string) error {
	if s == "" || strings.ContainsAny(s, " \t\n\r") {
		return fmt.Errorf("name %q is empty or holds white space", s)
	}
	return nil
}

// Decode reads a trace Encode wrote. Every error names the line it is on.
func Decode(r io.Reader) (Trace, error) {
	var t Trace
	zr, err := gzip.NewReader(r)
	if err != nil {
		return t, fmt.Errorf("not a dbio block trace (not gzip-compressed): %w", err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, maxLine), maxLine)
	line := 0
	bad := func(format string, a ...any) error {
		return fmt.Errorf("block trace line %d: %s", line, fmt.Sprintf(format, a...))
	}
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		line++
		return sc.Text(), true
	}
	if h, ok := next(); !ok || h != header {
		if err := sc.Err(); err != nil {
			return t, fmt.Errorf("block trace: %w", err)
		}
		return t, errors.New("not a dbio block trace (no \"" + header + "\" header)")
	}
	d, ok := next()
	us, found := strings.CutPrefix(d, "duration_us ")
	if !ok || !found {
		return t, bad("want duration_us")
	}
	dur, err := strconv.ParseInt(us, 10, 64)
	if err != nil || dur < 0 {
		return t, bad("duration %q is not a count of microseconds", us)
	}
	t.Duration = time.Duration(dur) * time.Microsecond
	at := int64(0)
	for {
		s, ok := next()
		if !ok {
			break
		}
		if rest, found := strings.CutPrefix(s, "device "); found {
			if len(t.Requests) > 0 || len(t.Processes) > 0 || len(t.Devices) >= maxNames {
				return t, bad("device out of place")
			}
			f := strings.Fields(rest)
			if len(f) != 3 || f[0] != strconv.Itoa(len(t.Devices)) {
				return t, bad("want device %d MAJOR:MINOR NAME", len(t.Devices))
			}
			maj, min, _ := strings.Cut(f[1], ":")
			ma, err1 := strconv.ParseUint(maj, 10, 32)
			mi, err2 := strconv.ParseUint(min, 10, 32)
			if err1 != nil || err2 != nil {
				return t, bad("device number %q is not MAJOR:MINOR", f[1])
			}
			t.Devices = append(t.Devices, Device{Name: f[2], Major: uint32(ma), Minor: uint32(mi)})
			continue
		}
		if rest, found := strings.CutPrefix(s, "process "); found {
			if len(t.Requests) > 0 || len(t.Processes) >= maxNames {
				return t, bad("process out of place")
			}
			idx, name, _ := strings.Cut(rest, " ")
			if idx != strconv.Itoa(len(t.Processes)) {
				return t, bad("want process %d", len(t.Processes))
			}
			t.Processes = append(t.Processes, name)
			continue
		}
		if len(t.Requests) >= maxRequests {
			return t, bad("more than %d requests", maxRequests)
		}
		r, delta, err := parseRequest(s, len(t.Devices), len(t.Processes))
		if err != nil {
			return t, bad("%v", err)
		}
		at += delta
		r.At = time.Duration(at) * time.Microsecond
		t.Requests = append(t.Requests, r)
	}
	if err := sc.Err(); err != nil {
		return t, bad("%v", err)
	}
	return t, nil
}

func parseRequest(s string, devices, processes int) (Request, int64, error) {
	var r Request
	f := strings.Fields(s)
	if len(f) != 8 {
		return r, 0, fmt.Errorf("want 8 fields, not %d", len(f))
	}
	var n [7]int64
	for i, j := range []int{0, 2, 3, 4, 6, 7} {
		v, err := strconv.ParseInt(f[j], 10, 64)
		if err != nil || v < 0 {
			return r, 0, fmt.Errorf("field %d (%q) is not a count", j+1, f[j])
		}
		n[i] = v
	}
	delta := n[0]
	r.Device, r.Offset, r.Size, r.Depth, r.Process = int(n[1]), n[2], n[3], int(n[4]), int(n[5])
	if r.Offset > maxOffset || r.Size > maxSize {
		return r, 0, fmt.Errorf("offset %d or size %d is beyond any device's", r.Offset, r.Size)
	}
	if r.Device >= devices {
		return r, 0, fmt.Errorf("device %d is not declared", r.Device)
	}
	if r.Process >= processes {
		return r, 0, fmt.Errorf("process %d is not declared", r.Process)
	}
	if f[5] == "-" {
		r.Latency = -1
	} else {
		us, err := strconv.ParseInt(f[5], 10, 64)
		if err != nil || us < 0 {
			return r, 0, fmt.Errorf("latency %q is not microseconds or -", f[5])
		}
		r.Latency = time.Duration(us) * time.Microsecond
	}
	op := f[1]
	switch Op(op[0]) {
	case Read, Write, Flush, Discard:
		r.Op = Op(op[0])
	default:
		return r, 0, fmt.Errorf("operation %q is not R, W, F or D", op[:1])
	}
	for _, c := range []byte(op[1:]) {
		found := false
		for _, l := range flagLetters {
			if l.letter == c && r.Flags&l.flag == 0 {
				r.Flags |= l.flag
				found = true
			}
		}
		if !found {
			return r, 0, fmt.Errorf("flag %q is not one of fpsmaz (or is repeated)", c)
		}
	}
	return r, delta, nil
}
