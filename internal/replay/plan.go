// Package replay plays a captured block trace with fio on a working file of
// candidate storage: the device offsets mapped into the file, flushes as
// fdatasync, FUA writes as a write and an fdatasync, at the recorded pace
// (open loop) or as fast as the recorded order and concurrency allow; and
// what the candidate did: latency by direction and of the syncs, second by
// second, and whether it kept up with the recorded pace.
package replay

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"dbio/internal/blocktrace"
)

// Pace says when a replayed request is issued.
type Pace string

const (
	// Recorded issues every request at its recorded time (scaled by Speed):
	// the candidate's latency under the captured offered load.
	Recorded Pace = "recorded"
	// Max issues requests as soon as the recorded order and concurrency
	// allow: the candidate's headroom for the workload.
	Max Pace = "max"
)

// ParsePace reads --pace.
func ParsePace(s string) (Pace, error) {
	switch Pace(s) {
	case Recorded, Max:
		return Pace(s), nil
	}
	return "", fmt.Errorf("--pace %q is not recorded or max", s)
}

// regionAlign aligns each device's region in the working file.
const regionAlign = 1 << 20

// Layout maps each traced device's span into one working file: device d's
// byte o is the file's byte o - Base[d] + Region[d].
type Layout struct {
	Base   []int64
	Region []int64
	// Size is the working file's size.
	Size int64
}

// PlanLayout sizes the working file to cover every device's captured span.
func PlanLayout(tr blocktrace.Trace) Layout {
	n := len(tr.Devices)
	lo, hi := make([]int64, n), make([]int64, n)
	seen := make([]bool, n)
	for _, r := range tr.Requests {
		if !carriesData(r) {
			continue
		}
		d := r.Device
		if !seen[d] || r.Offset < lo[d] {
			lo[d] = r.Offset
		}
		if !seen[d] || r.End() > hi[d] {
			hi[d] = r.End()
		}
		seen[d] = true
	}
	l := Layout{Base: make([]int64, n), Region: make([]int64, n)}
	for d := range n {
		if !seen[d] {
			continue
		}
		l.Base[d] = lo[d] / regionAlign * regionAlign
		l.Region[d] = l.Size
		l.Size += (hi[d] - l.Base[d] + regionAlign - 1) / regionAlign * regionAlign
	}
	return l
}

// FileOffset is where r's data is in the working file.
func (l Layout) FileOffset(r blocktrace.Request) int64 {
	return r.Offset - l.Base[r.Device] + l.Region[r.Device]
}

func carriesData(r blocktrace.Request) bool {
	return (r.Op == blocktrace.Read || r.Op == blocktrace.Write) && r.Size > 0
}

// LogStats says what the I/O logs hold of the trace.
type LogStats struct {
	Reads, Writes, Syncs int64
	// Discards are not replayed: a file has no discard fio can send with
	// the trace's timing.
	Discards int64
	// Lanes is the replay's concurrency: how many I/O logs fio replays at
	// once (see AssignLanes).
	Lanes int
	// LastIssue is when the last request was issued, from the trace's start.
	LastIssue time.Duration
}

// maxLanes bounds the replay's concurrency.
const maxLanes = 64

// AssignLanes spreads the trace's requests over lanes, each replayed by
// one fio job with synchronous I/O: a request goes to a lane whose previous
// request had completed (as recorded) when it was issued, so that the
// lanes together keep the trace's concurrency and each request's order
// behind the ones it followed. Synchronous jobs make fio's latency the
// request's own: an asynchronous job pacing a log reaps completions only
// between its sleeps (fio 3.33), which adds the gap between requests.
func AssignLanes(tr blocktrace.Trace) (lane []int, lanes int) {
	lane = make([]int, len(tr.Requests))
	var free []time.Duration // when each lane's last request completed
	for i, r := range tr.Requests {
		end := r.At
		if r.Completed() {
			end += r.Latency
		}
		pick := -1
		for l, f := range free {
			if f <= r.At {
				pick = l
				break
			}
		}
		if pick < 0 && len(free) < maxLanes {
			free = append(free, 0)
			pick = len(free) - 1
		}
		if pick < 0 {
			// Every lane busy: the one that frees first.
			pick = 0
			for l, f := range free {
				if f < free[pick] {
					pick = l
				}
			}
		}
		lane[i] = pick
		free[pick] = max(free[pick], end)
	}
	return withData(tr, lane, max(len(free), 1))
}

// withData folds every lane that would carry no read or write into the
// first lane that does, and numbers the lanes left in order: fio refuses
// an I/O log without one ("failed initializing iolog"), and a lane of
// flushes alone (the device's own flushes between two writes) is as well
// issued beside a lane's data.
func withData(tr blocktrace.Trace, lane []int, lanes int) ([]int, int) {
	data := make([]bool, lanes)
	for i, r := range tr.Requests {
		if carriesData(r) {
			data[lane[i]] = true
		}
	}
	renumber := make([]int, lanes)
	kept, first := 0, -1
	for l := range lanes {
		if data[l] {
			if first < 0 {
				first = kept
			}
			renumber[l] = kept
			kept++
		}
	}
	if first < 0 {
		return lane, lanes // no data at all: nothing to fold into
	}
	for l := range lanes {
		if !data[l] {
			renumber[l] = first
		}
	}
	for i := range lane {
		lane[i] = renumber[lane[i]]
	}
	return lane, kept
}

// Count says what the I/O logs of tr will hold.
func Count(tr blocktrace.Trace) LogStats {
	var st LogStats
	for _, r := range tr.Requests {
		st.LastIssue = r.At
		switch {
		case r.Op == blocktrace.Discard:
			st.Discards++
			continue
		case r.Op == blocktrace.Flush:
			st.Syncs++
			continue
		}
		if r.Flags&blocktrace.Preflush != 0 {
			st.Syncs++
		}
		if !carriesData(r) {
			continue
		}
		if r.Op == blocktrace.Write {
			st.Writes++
			if r.Flags&blocktrace.FUA != 0 {
				st.Syncs++
			}
		} else {
			st.Reads++
		}
	}
	return st
}

// Lead is how long after fio starts a paced replay's first request is
// due: fio starts its lanes one after another (a tenth of a second for
// one lane, 0.4 s for 32, on a quiet machine), and a request due before its
// lane started would be issued late, in a burst with the ones after it.
const Lead = time.Second

// WriteIOLog writes the requests of one lane as fio's version 2 I/O log
// on file. At the recorded pace, each request is preceded by a wait until
// its time (scaled by speed) from the trace's first request plus Lead,
// in whole milliseconds since fio started: fio 3.33 reads a version 2
// "wait" as that instant, the same for every lane, so a lane that is late
// catches up rather than staying late. (A version 3 log's timestamps are
// replayed as gaps from the previous request's issue, and fio drops a
// lateness longer than the next gap: on a busy machine, where a lane
// wakes late, the replay fell further behind with every request, 40 to
// 115 % over a 5 s capture at load average 8.) Requests due in the same
// millisecond are issued one after another. As fast as possible (max),
// there is no wait. A flush, and a write's preflush, become an fdatasync
// before it; a FUA write is a write followed by an fdatasync, which is
// what makes a file's write durable.
func WriteIOLog(w io.Writer, tr blocktrace.Trace, l Layout, file string, lanes []int, lane int, pace Pace, speed float64) error {
	if strings.ContainsAny(file, " \t\n\r") {
		return fmt.Errorf("working file %q holds white space, which fio's I/O log cannot hold", file)
	}
	if speed <= 0 {
		return fmt.Errorf("speed %g is not above 0", speed)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "fio version 2 iolog\n%s add\n%s open\n", file, file)
	var origin time.Duration
	if len(tr.Requests) > 0 {
		origin = tr.Requests[0].At
	}
	waited := int64(-1)
	due := func(r blocktrace.Request) {
		if pace != Recorded {
			return
		}
		ms := (Lead + time.Duration(float64(r.At-origin)/speed)).Milliseconds()
		if ms > waited {
			fmt.Fprintf(bw, "%s wait %d 0\n", file, ms)
			waited = ms
		}
	}
	sync := func() { fmt.Fprintf(bw, "%s datasync 0 0\n", file) }
	for i, r := range tr.Requests {
		if lanes[i] != lane {
			continue
		}
		if r.Op == blocktrace.Flush || r.Flags&blocktrace.Preflush != 0 {
			due(r)
			sync()
		}
		if !carriesData(r) {
			continue
		}
		due(r)
		action := "read"
		if r.Op == blocktrace.Write {
			action = "write"
		}
		off, size := directAligned(l.FileOffset(r), r.Size)
		fmt.Fprintf(bw, "%s %s %d %d\n", file, action, off, size)
		if r.Op == blocktrace.Write && r.Flags&blocktrace.FUA != 0 {
			sync()
		}
	}
	fmt.Fprintf(bw, "%s close\n", file)
	return bw.Flush()
}

// directAlign is the alignment direct I/O asks of a file's offsets and
// sizes on the file systems a candidate may use (4 KiB logical blocks).
const directAlign = 4096

// directAligned widens a request to whole directAlign blocks: a device
// takes 512-byte requests (ext4 writes its 1 KiB superblock so) that
// direct I/O on a file of a 4 KiB-block file system refuses with EINVAL.
// The widened request stays inside its device's region, which is aligned
// to a whole MiB.
func directAligned(off, size int64) (int64, int64) {
	start := off &^ (directAlign - 1)
	end := (off + size + directAlign - 1) &^ (directAlign - 1)
	return start, end - start
}

// JobFile is fio's job file for the replay: one synchronous job per lane
// reading its I/O log (which holds the pace and speed), direct I/O,
// reported as one group, and a log of every read's and write's completion
// latency under logPrefix (per request, at its completion in Unix
// milliseconds): the replay's span and seconds are read from it from its
// first request's issue, where fio's per-second logs begin with each
// lane, which at the recorded pace waits for its first request.
// Submission and total latency are not measured (their per-request logs
// would triple the log); a synchronous request's completion latency is all
// of it.
func JobFile(iologs []string, file string, pace Pace, logPrefix string) string {
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	line("[global]")
	line("filename=%s", file)
	line("ioengine=psync")
	line("direct=1")
	if pace == Max {
		// The logs hold no wait at this pace; fio is told so too.
		line("replay_no_stall=1")
	}
	line("group_reporting=1")
	line("disable_slat=1")
	line("disable_lat=1")
	line("log_unix_epoch=1")
	line("write_lat_log=%s", logPrefix)
	for i, log := range iologs {
		line("")
		line("[lane%d]", i+1)
		line("read_iolog=%s", log)
	}
	return b.String()
}
