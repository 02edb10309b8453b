// Package blocktrace is a database's block I/O as dbio captures and replays
// it: every request a device was given (when, which operation, where, how
// large, with which flags, by which process, how long it took and how many
// were in flight), the kernel's block tracepoints read into such requests,
// the compact compressed file a capture keeps them in, and the trace's
// signature (the figures a reader compares storage by).
package blocktrace

import (
	"fmt"
	"strings"
	"time"
)

// Op is what a request asks of the device.
type Op byte

const (
	Read    Op = 'R'
	Write   Op = 'W'
	Flush   Op = 'F' // a cache flush without data
	Discard Op = 'D'
)

func (o Op) String() string {
	switch o {
	case Read:
		return "read"
	case Write:
		return "write"
	case Flush:
		return "flush"
	case Discard:
		return "discard"
	}
	return fmt.Sprintf("op %q", byte(o))
}

// Flags are the request's modifiers that change what a replay must do or
// what a reader learns from it.
type Flags uint8

const (
	// FUA is a write that must reach stable media before it completes (a
	// database's write-through log write).
	FUA Flags = 1 << iota
	// Preflush asks for a cache flush before the request's data.
	Preflush
	// Sync marks a request someone waits for.
	Sync
	// Meta marks file-system metadata.
	Meta
	// Ahead marks a read-ahead.
	Ahead
	// Zeroes is a write of zeroes the device makes itself (write-zeroes).
	Zeroes
)

// flagLetters spell Flags in the trace file, in this order.
var flagLetters = []struct {
	flag   Flags
	letter byte
}{{FUA, 'f'}, {Preflush, 'p'}, {Sync, 's'}, {Meta, 'm'}, {Ahead, 'a'}, {Zeroes, 'z'}}

func (f Flags) letters() string {
	var b strings.Builder
	for _, l := range flagLetters {
		if f&l.flag != 0 {
			b.WriteByte(l.letter)
		}
	}
	return b.String()
}

// Request is one block request as the device saw it.
type Request struct {
	// At is when the request was issued to the device, from the trace's start.
	At time.Duration
	// Latency is issue to completion; negative when the trace ended first.
	Latency time.Duration
	Op      Op
	Flags   Flags
	// Device indexes Trace.Devices.
	Device int
	// Offset and Size are in bytes on the device.
	Offset int64
	Size   int64
	// Depth is the requests in flight on the device once this one was
	// issued, itself included.
	Depth int
	// Process indexes Trace.Processes: the task that issued it (often a
	// kernel worker acting for the database).
	Process int
}

// Completed says whether the trace saw the request end.
func (r Request) Completed() bool { return r.Latency >= 0 }

// End is the byte after the request's data.
func (r Request) End() int64 { return r.Offset + r.Size }

// Device is one traced block device.
type Device struct {
	Name  string
	Major uint32
	Minor uint32
}

// Number is the device's major:minor.
func (d Device) Number() string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

// Trace is a capture's requests, in the order they were issued.
type Trace struct {
	Devices   []Device
	Processes []string
	// Duration is how long the capture ran (requests may end before it).
	Duration time.Duration
	Requests []Request
}

// Active is the trace from its first request to its last completion (or
// last issue, for a request it did not see end), with times from the first
// request: the span a replay reproduces, whose rates and seconds compare
// with the replay's.
func (t Trace) Active() Trace {
	if len(t.Requests) == 0 {
		return t
	}
	a := t
	origin := t.Requests[0].At
	a.Requests = make([]Request, len(t.Requests))
	var end time.Duration
	for i, r := range t.Requests {
		r.At -= origin
		a.Requests[i] = r
		e := r.At
		if r.Completed() {
			e += r.Latency
		}
		end = max(end, e)
	}
	a.Duration = end
	return a
}
