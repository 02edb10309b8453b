package telemetry

import (
	"io"
	"os"
	"strconv"
)

// group is a set of processes sampled together under one role ("dbio",
// "server"): the roots and, if asked, all their descendants.
type group struct {
	role     string
	roots    func() []string // directory names under /proc
	children bool
	// files are the processes' and threads' files, held open between
	// samples.
	files heldFiles
}

// procKey tells processes apart even when the kernel reuses a pid.
type procKey struct {
	pid   string
	start uint64
}

// groupSnap is one reading of a group.
type groupSnap struct {
	ticks map[procKey]uint64 // cumulative CPU time of each live process, USER_HZ
	// blkio is each live thread's cumulative block-I/O delay, USER_HZ,
	// keyed by thread id and start time; nil when delay accounting was off.
	blkio map[procKey]uint64
	pids  map[string]bool // every pid visited, live or gone
	// rss is resident memory with shared pages counted once, in bytes: the
	// private anonymous memory of every process plus the file-backed and
	// shared memory of the process mapping the most of it. PostgreSQL
	// backends all map the same shared buffers; summing their RSS would
	// count them once per backend.
	rss uint64
}

// read walks the group's processes, skipping pids in exclude (and their
// descendants). Processes that exit during the walk are simply not there.
// pageSize converts statm's pages to bytes. With delays (the kernel's
// delay accounting is on) every thread's block-I/O delay is read too.
func (g *group) read(fs FS, pageSize uint64, exclude map[string]bool, delays bool) *groupSnap {
	gs := &groupSnap{ticks: map[procKey]uint64{}, pids: map[string]bool{}}
	if delays {
		gs.blkio = map[procKey]uint64{}
	}
	var private, shared uint64
	queue := g.roots()
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if gs.pids[pid] || exclude[pid] {
			continue
		}
		gs.pids[pid] = true
		var ts taskStat
		if g.files.read(fs.proc(pid, "stat"), func(r io.Reader) (err error) { ts, err = parseTaskStat(r); return err }) != nil {
			continue
		}
		gs.ticks[procKey{pid, ts.start}] = ts.ticks
		var m taskMem
		if g.files.read(fs.proc(pid, "statm"), func(r io.Reader) (err error) { m, err = parseTaskStatm(r); return err }) == nil {
			private += m.resident - m.shared
			shared = max(shared, m.shared)
		}
		if !g.children && !delays {
			continue
		}
		// A single-threaded process (threads == 1) is its only thread,
		// which saves listing and reading its task directory: most
		// server processes (PostgreSQL's) are.
		tids := tasks(fs, pid, ts.threads)
		if delays {
			if ts.threads == 1 {
				if ts.hasBlkio {
					gs.blkio[procKey{pid, ts.start}] = ts.blkio
				}
			} else {
				threadDelays(fs, &g.files, pid, tids, gs.blkio)
			}
		}
		if g.children {
			queue = append(queue, children(fs, &g.files, pid, tids)...)
		}
	}
	g.files.sweep()
	gs.rss = (private + shared) * pageSize
	return gs
}

// tasks lists a process's threads; threads == 1 means the process is its
// only thread.
func tasks(fs FS, pid string, threads uint64) []string {
	if threads == 1 {
		return []string{pid}
	}
	d, err := os.Open(fs.proc(pid, "task"))
	if err != nil {
		return nil
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	return tids
}

// threadDelays adds each thread's block-I/O delay to into. A process's own
// stat holds its first thread's delay only, not the sum of its threads'.
func threadDelays(fs FS, files *heldFiles, pid string, tids []string, into map[procKey]uint64) {
	for _, tid := range tids {
		var ts taskStat
		if files.read(fs.proc(pid, "task", tid, "stat"), func(r io.Reader) (err error) { ts, err = parseTaskStat(r); return err }) == nil && ts.hasBlkio {
			into[procKey{tid, ts.start}] = ts.blkio
		}
	}
}

// children lists the children of a process's threads tids. Each thread
// has its own list (a child belongs to the thread that forked it).
func children(fs FS, files *heldFiles, pid string, tids []string) []string {
	var out []string
	for _, tid := range tids {
		var pids []int
		if files.read(fs.proc(pid, "task", tid, "children"), func(r io.Reader) (err error) { pids, err = parsePIDs(r); return err }) != nil {
			continue
		}
		for _, p := range pids {
			out = append(out, strconv.Itoa(p))
		}
	}
	return out
}

// cpuTicks is the CPU time the group used between prev and g. A process seen
// for the first time counts in full if it started after the previous sample
// (prevUptime, seconds since boot), and only from the next sample otherwise.
// A process that exits between two samples loses its last interval: the
// kernel gives it to the parent's cutime only when reaped, and adding that
// would count the living twice.
func (g *groupSnap) cpuTicks(prev *groupSnap, prevUptime float64) uint64 {
	return grown(g.ticks, prev.ticks, prevUptime)
}

// blkioTicks is the block-I/O delay the group's threads accrued between
// prev and g (uptime is g's, in seconds since boot), by the same rules as
// cpuTicks, thread by thread: a thread that exits between two samples
// takes its last interval with it, and never makes the sum go down. ok is
// false when either reading lacks the delays (delay accounting was off).
//
// A thread cannot have waited longer than it has lived, nor longer than
// the time between the two samples. Linux 6.18 was seen accounting a
// multi-threaded program's delays (dbio's, a Go program's, not a
// single-threaded one's) beyond both: its whole clock since boot, hours,
// at once, or several times the wall time. A thread's growth beyond its
// age is such an error and counts nothing; beyond the interval, it counts
// as the whole interval.
func (g *groupSnap) blkioTicks(prev *groupSnap, prevUptime, uptime float64) (ticks uint64, ok bool) {
	if g.blkio == nil || prev.blkio == nil {
		return 0, false
	}
	bornAfter := uint64(prevUptime*userHZ + 0.5)
	now := uint64(uptime*userHZ + 0.5)
	bounded := prevUptime > 0 && uptime > prevUptime
	// One tick of slack: each reading is rounded down to a tick.
	interval := sub(now, bornAfter) + 1
	for k, t := range g.blkio {
		d, counts := taskGrowth(k, t, prev.blkio, bornAfter, prevUptime > 0)
		switch {
		case !counts:
		case !bounded:
			ticks += d
		case d <= sub(now, k.start)+1:
			ticks += min(d, interval)
		}
	}
	return ticks, true
}

// grown sums what each task's cumulative counter grew by from prev to cur
// (see taskGrowth).
func grown(cur, prev map[procKey]uint64, prevUptime float64) uint64 {
	bornAfter := uint64(prevUptime*userHZ + 0.5)
	var sum uint64
	for k, t := range cur {
		if d, ok := taskGrowth(k, t, prev, bornAfter, prevUptime > 0); ok {
			sum += d
		}
	}
	return sum
}

// taskGrowth is what task k's cumulative counter, t now, grew by since
// prev: a task in both by its difference (zero if it went back), a task
// seen first in full if it started after the previous sample (at
// bornAfter, USER_HZ since boot, when known), and nothing otherwise
// (ok false): it is only a baseline.
func taskGrowth(k procKey, t uint64, prev map[procKey]uint64, bornAfter uint64, known bool) (uint64, bool) {
	if p, ok := prev[k]; ok {
		return sub(t, p), true
	}
	if known && k.start >= bornAfter {
		return t, true
	}
	return 0, false
}
