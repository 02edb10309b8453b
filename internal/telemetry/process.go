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
}

// procKey tells processes apart even when the kernel reuses a pid.
type procKey struct {
	pid   string
	start uint64
}

// groupSnap is one reading of a group.
type groupSnap struct {
	ticks map[procKey]uint64 // cumulative CPU time of each live process, USER_HZ
	pids  map[string]bool    // every pid visited, live or gone
	// rss is resident memory with shared pages counted once, in bytes: the
	// private anonymous memory of every process plus the file-backed and
	// shared memory of the process mapping the most of it. PostgreSQL
	// backends all map the same shared buffers; summing their RSS would
	// count them once per backend.
	rss uint64
}

// read walks the group's processes, skipping pids in exclude (and their
// descendants). Processes that exit during the walk are simply not there.
// pageSize converts statm's pages to bytes.
func (g *group) read(fs FS, pageSize uint64, exclude map[string]bool) *groupSnap {
	gs := &groupSnap{ticks: map[procKey]uint64{}, pids: map[string]bool{}}
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
		if readWith(fs.proc(pid, "stat"), func(r io.Reader) (err error) { ts, err = parseTaskStat(r); return err }) != nil {
			continue
		}
		gs.ticks[procKey{pid, ts.start}] = ts.ticks
		var m taskMem
		if readWith(fs.proc(pid, "statm"), func(r io.Reader) (err error) { m, err = parseTaskStatm(r); return err }) == nil {
			private += m.resident - m.shared
			shared = max(shared, m.shared)
		}
		if g.children {
			queue = append(queue, children(fs, pid, ts.threads)...)
		}
	}
	gs.rss = (private + shared) * pageSize
	return gs
}

// children lists a process's children. Each thread has its own list (a
// child belongs to the thread that forked it), so all threads are read; a
// single-threaded process (threads == 1) has only its own, which saves
// listing the task directory.
func children(fs FS, pid string, threads uint64) []string {
	tids := []string{pid}
	if threads != 1 {
		d, err := os.Open(fs.proc(pid, "task"))
		if err != nil {
			return nil
		}
		tids, _ = d.Readdirnames(-1)
		d.Close()
	}
	var out []string
	for _, tid := range tids {
		var pids []int
		if readWith(fs.proc(pid, "task", tid, "children"), func(r io.Reader) (err error) { pids, err = parsePIDs(r); return err }) != nil {
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
	bornAfter := uint64(prevUptime*userHZ + 0.5)
	var sum uint64
	for k, t := range g.ticks {
		if p, ok := prev.ticks[k]; ok {
			sum += sub(t, p)
			continue
		}
		if prevUptime > 0 && k.start >= bornAfter {
			sum += t
		}
	}
	return sum
}
