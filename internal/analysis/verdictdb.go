package analysis

import (
	"math"
	"strconv"
	"strings"

	"dbio/internal/results"
)

// The lines the database's view of a verdict draws. Calibrated on TPC-C
// runs of PostgreSQL and MariaDB on this project's 2-core development
// machine, on tmpfs and on a loop disk capped at 300 write IOPS (see
// docs/verdict.md): a capped run spends 60 to 95 % of its database time
// on storage, an uncapped one on tmpfs under 10 %, so the lines sit far
// from both.
const (
	// StorageShareAbove: a step is storage-bound when at least this share
	// of its database time, in %, waited on storage, and no other group
	// (CPU, locks, other waits) took more: then a faster storage would
	// shorten a good part of every transaction. Under it, storage is one
	// cost among others, not the one to buy away first.
	StorageShareAbove = 40
	// LockShareAbove: a step is lock-bound when at least this share of
	// its database time waited on locks held by other sessions, and no
	// other group took more: more sessions would only queue longer.
	LockShareAbove = 40
	// CPUSaturatedIdleBelow: the CPUs are saturated when the step's mean
	// idle is under this share of the machine, in %. Even a CPU-bound
	// server leaves some idle in the gaps of its sessions' round trips to
	// the client: on two CPUs, MariaDB at four users on tmpfs, its server
	// using 81 % of the machine and its sessions mostly on CPU, left 10 %;
	// PostgreSQL 0 to 5 %. A step with more idle than this had CPU to
	// spare.
	CPUSaturatedIdleBelow = 15
	// ClientInsideBelow: a step whose sessions were active in the
	// database less than this share of their time, in %, with nothing
	// saturated, is client-bound: most of each session's time went to
	// its client (think time, a schedule's pacing, dbio itself, the round
	// trips), so a faster database would change little.
	ClientInsideBelow = 50
	// MemoryRefaultsAbove: a storage-bound step on data reads is
	// memory-bound when the server's memory cap (--server-memory) bound
	// and made it read back at least this many pages per second that it
	// had evicted: the reads are the cap's, not the workload's.
	MemoryRefaultsAbove = 10
	// CapBoundMostAbove: an engine inside dbio whose storage cap was used
	// to the full (iolimit's at-cap seconds) in at least this share of the
	// step's seconds, in %, is storage-bound even where the kernel
	// accounted its threads little block-I/O wait. The kernel puts a
	// throttled write's wait on the thread that waits for it only on some
	// of its paths: beside other busy processes it accounted SQLite's
	// threads no wait at all in about half the runs under a cap of 20
	// write IOPS that bound in every second, and the verdict then named
	// the CPU.
	CapBoundMostAbove = 75
)

// judgeDatabase draws the verdict from the database's own account of its
// time. Rules, in order:
//
//   - when the sessions were in the database less than ClientInsideBelow
//     of their time (known from the step's load), no resource of the
//     database limited them: CPU-bound on whose CPU it was when the CPUs
//     were saturated (idle under CPUSaturatedIdleBelow), else
//     client-bound;
//   - storage-bound when storage took at least StorageShareAbove of
//     database time and no other group more: on the storage class that
//     took the most (syncs, writes, data reads); memory-bound instead when
//     that is data reads and the server's memory cap bound with at least
//     MemoryRefaultsAbove refaults a second;
//   - lock-bound when locks took at least LockShareAbove and no other
//     group more;
//   - CPU-bound when the CPUs were saturated and CPU took the most
//     database time: the CPUs of whoever used the most of them (the
//     server, dbio, other processes, the hypervisor);
//   - otherwise not saturated.
func judgeDatabase(s Signals, t Thresholds) results.Verdict {
	a := *s.DB
	v := results.Verdict{Evidence: map[string]float64{results.MetricDBActiveSessions: results.Round6(a.Sessions)}}
	for _, c := range a.Classes {
		v.Evidence[c.Class.Share()] = results.Round6(c.SharePct)
	}
	v.Evidence["cpu_idle_pct"] = results.Round6(s.IdlePct)
	io, cpu, lock, other := a.IOShare(), a.Share(results.DBTimeCPU), a.Share(results.DBTimeLock), a.Share(results.DBTimeOther)
	largest := func(x float64) bool { return x > 0 && x >= io && x >= cpu && x >= lock && x >= other }
	saturated := s.IdlePct < CPUSaturatedIdleBelow
	outside := false
	inside := math.NaN()
	if s.Load != nil && s.Load.Sessions > 0 {
		inside = 100 * a.Sessions / float64(s.Load.Sessions)
		outside = inside < ClientInsideBelow
	}
	whoseKind, whose := s.cpuWhose()
	var head string
	var parts []string
	say := func(words ...string) { parts = append(parts, strings.Join(words, " ")) }
	cpuBound := func() {
		v.Kind, head = whoseKind, "CPU-bound ("+whose+")"
		say(pct(cpu), "of database time on CPU, idle", pct(s.IdlePct))
		if outside {
			parts[0] = "the sessions were in the database " + pct(inside) + " of their time, idle " + pct(s.IdlePct)
		}
		s.sayCPUs(say, v.Evidence)
		if v.Kind == results.VerdictCPUDBIO && !s.InProcessEngine && s.DriverCPUPct >= t.DriverAbove {
			say("run the load generator on another host to load the server fully")
		}
	}
	switch {
	case outside && saturated:
		// The sessions waited outside the database for a CPU: the
		// client's (dbio's) turn to run, or the server's to read their
		// next statement, comes later on saturated CPUs.
		cpuBound()
	case outside:
		v.Kind, head = results.VerdictClient, "client-bound"
		where := "the client (dbio) and the round trips"
		switch {
		case s.Load.Terminals:
			where = "keying and think time"
		case s.Load.Paced:
			where = "waiting for the schedule's next start (" + rate(s.Load.OfferedTPS) + " tx/s offered)"
		}
		say("the sessions were in the database", pct(inside), "of their time ("+s.sessions(a.Sessions)+"); the rest went to", where)
	case io >= StorageShareAbove && largest(io):
		c, _ := a.LargestIO()
		if m := s.Memory; c.Class == results.DBTimeIORead && m != nil && m.Bound && m.RefaultsPerS >= MemoryRefaultsAbove {
			v.Kind, head = results.VerdictMemory, "memory-bound"
			say("the server's", megabytes(m.CapMB), "memory cap made it read back", sig3(m.RefaultsPerS), "pages/s it had evicted")
			say(pct(c.SharePct), "of database time waited on data reads")
			v.Evidence[results.MetricMemcgRefaults] = results.Round6(m.RefaultsPerS)
			break
		}
		what := s.ioWhat(c.Class)
		v.Kind, head = storageKind(c.Class), "storage-bound on "+what
		figure := pct(c.SharePct) + " of database time waited on " + what
		if pct(io) != pct(c.SharePct) {
			figure += " (" + pct(io) + " on storage in all)"
		}
		say(figure)
		s.sayStorage(say, c.Class != results.DBTimeIORead, v.Evidence)
	case lock >= LockShareAbove && largest(lock):
		v.Kind, head = results.VerdictLock, "lock-bound"
		say(pct(lock), "of database time waited on locks held by other sessions")
		say(s.sessions(a.Sessions))
	case saturated && largest(cpu):
		cpuBound()
	default:
		v.Kind, head = results.VerdictNotSaturated, "not saturated"
		say(s.sessions(a.Sessions) + ", " + pct(cpu) + " of database time on CPU, " + pct(io) + " on storage")
		say("idle", pct(s.IdlePct))
	}
	v.Text = head + ": " + strings.Join(parts, "; ")
	return v
}

// judgeThreads draws the verdict of an engine inside dbio (SQLite, which
// has no wait events) from the kernel's account of dbio's threads: the
// time they waited on the block layer against the time they ran. Rules:
// storage-bound when block-I/O waits were at least StorageShareAbove of
// the threads' busy time; CPU-bound when the CPUs were saturated; else not
// saturated.
func judgeThreads(s Signals, t Thresholds) results.Verdict {
	blk := s.DBIOBlkioPct / 100
	onCPU := s.DriverCPUPct * float64(max(s.CPUs, 1)) / 100
	share := 0.0
	if blk+onCPU > 0 {
		share = 100 * blk / (blk + onCPU)
	}
	v := results.Verdict{Evidence: map[string]float64{
		results.MetricDBIOBlkioWait: results.Round6(s.DBIOBlkioPct), "proc_dbio_cpu_pct": results.Round6(s.DriverCPUPct),
		"cpu_idle_pct": results.Round6(s.IdlePct),
	}}
	threads := "dbio's threads, the engine's among them,"
	var head string
	var parts []string
	say := func(words ...string) { parts = append(parts, strings.Join(words, " ")) }
	writes := s.writesBound()
	capped, bound := mostBound(s.Caps, writes)
	switch {
	case share >= StorageShareAbove:
		v.Kind, head = results.VerdictStorage, "storage-bound"
		say(threads, "waited on the block layer", pct(share), "of their busy time ("+sig3(blk), "thread-seconds a second against", sig3(onCPU), "on CPU)")
		s.sayStorage(say, writes, v.Evidence)
	case bound && capped.AtCapPct >= CapBoundMostAbove:
		v.Kind, head = results.VerdictStorage, "storage-bound"
		s.sayStorage(say, writes, v.Evidence)
		say("the kernel accounted", threads, pct(share), "of their busy time waiting on the block layer, which misses waits it does not count as the thread's I/O")
	case s.IdlePct < CPUSaturatedIdleBelow:
		var whose string
		v.Kind, whose = s.cpuWhose()
		head = "CPU-bound (" + whose + ")"
		say(threads, "were on CPU", pct(100-share), "of their busy time, idle", pct(s.IdlePct))
		s.sayCPUs(say, v.Evidence)
	default:
		v.Kind, head = results.VerdictNotSaturated, "not saturated"
		say(threads, "were busy", sig3(blk+onCPU), "thread-seconds a second,", pct(share), "of it waiting on the block layer")
		say("idle", pct(s.IdlePct))
	}
	v.Text = head + ": " + strings.Join(parts, "; ")
	return v
}

// storageKind is the verdict of a storage class.
func storageKind(c results.DBTimeClass) results.VerdictKind {
	switch c {
	case results.DBTimeIOSync:
		return results.VerdictStorageSync
	case results.DBTimeIORead:
		return results.VerdictStorageRead
	case results.DBTimeIOWrite:
		return results.VerdictStorageWrite
	}
	return results.VerdictStorage
}

// ioWhat names what a storage class waited on, as precisely as the
// database's own timing of its I/O tells: "log syncs" where it timed its
// log syncs longer than its data file syncs, "syncs" where it timed
// neither.
func (s Signals) ioWhat(c results.DBTimeClass) string {
	pick := func(log, data results.DBWaitKind, logName, dataName, either string) string {
		l, okL := s.WaitMsPerS[log]
		d, okD := s.WaitMsPerS[data]
		switch {
		case !okL && !okD:
			return either
		case !okD || (okL && l >= d):
			return logName
		}
		return dataName
	}
	switch c {
	case results.DBTimeIOSync:
		return pick(results.DBWaitSync, results.DBWaitDataSync, "log syncs", "data file syncs", "syncs")
	case results.DBTimeIOWrite:
		return pick(results.DBWaitLogWrite, results.DBWaitWrite, "log writes", "data file writes", "writes")
	}
	return DBTimeTitle(c)
}

// sayStorage adds the storage's own figure: the use of its cap in the
// verdict's direction (writes, or reads), else the busiest device's.
func (s Signals) sayStorage(say func(...string), writes bool, ev map[string]float64) {
	if c, ok := mostBound(s.Caps, writes); ok {
		dir := "reads"
		if writes {
			dir = "writes"
		}
		say(dir, "at", c.Title(), "in", pct(c.AtCapPct), "of seconds")
		ev[c.Kind.AtCap()] = results.Round6(c.AtCapPct)
		return
	}
	if s.Device == "" {
		return
	}
	p := "disk_" + s.Device + "_"
	ev[p+"util_pct"] = results.Round6(s.UtilPct)
	if writes && s.HasWrites {
		say(s.Device, "utilization", pct(s.UtilPct)+", p99 write latency", sig3(s.WriteP99Ms), "ms")
		ev[p+"w_await_ms_p99"] = results.Round6(s.WriteP99Ms)
		return
	}
	if !writes && s.HasReads {
		say(s.Device, "utilization", pct(s.UtilPct)+", p99 read latency", sig3(s.ReadP99Ms), "ms")
		ev[p+"r_await_ms_p99"] = results.Round6(s.ReadP99Ms)
		return
	}
	say(s.Device, "utilization", pct(s.UtilPct))
}

// writesBound says a write cap bound in at least as many seconds as a read
// cap: the direction of a storage verdict that cannot tell them apart.
func (s Signals) writesBound() bool {
	w, okW := mostBound(s.Caps, true)
	r, okR := mostBound(s.Caps, false)
	switch {
	case okW && okR:
		return w.AtCapPct >= r.AtCapPct
	case okR:
		return false
	}
	return !s.HasReads || (s.HasWrites && s.WriteP99Ms >= s.ReadP99Ms)
}

// cpuWhose is whose CPU a CPU-bound step was short of: whoever used the
// most of the machine's CPUs, among the server, dbio, other processes and
// the hypervisor (steal).
func (s Signals) cpuWhose() (results.VerdictKind, string) {
	kind, whose, most := results.VerdictCPUDBIO, "dbio's", s.DriverCPUPct
	if s.InProcessEngine {
		whose = "dbio's, with the engine inside it"
	}
	if s.HasServer && s.ServerCPUPct > most {
		kind, whose, most = results.VerdictCPUServer, "the server's", s.ServerCPUPct
	}
	if s.Split != nil && s.Split.Other > most {
		kind, whose, most = results.VerdictCPUOther, "other processes'", s.Split.Other
	}
	if s.StealPct > most {
		kind, whose = results.VerdictSteal, "the hypervisor's"
	}
	if kind == results.VerdictCPUDBIO && s.ServerUnknown && s.HasCPU && s.DriverCPUPct < (100-s.IdlePct)/2 {
		// Most of the busy CPU was not dbio's, and whose it was (the
		// user's server, another process) cannot be told.
		kind, whose = results.VerdictCPU, "whose is unknown: the server's processes were not found on this host"
	}
	return kind, whose
}

// sayCPUs adds whose the CPUs were: "the server used 61 % of the CPUs,
// dbio 30 %, other processes 4 %".
func (s Signals) sayCPUs(say func(...string), ev map[string]float64) {
	var parts []string
	switch {
	case s.HasServer:
		parts = append(parts, "the server used "+pct(s.ServerCPUPct)+" of the CPUs")
		ev["proc_server_cpu_pct"] = results.Round6(s.ServerCPUPct)
	case s.ServerUnknown:
		parts = append(parts, "the server's CPU is unknown (not found on this host)")
	}
	dbio := "dbio " + pct(s.DriverCPUPct)
	if len(parts) == 0 {
		dbio = "dbio used " + pct(s.DriverCPUPct) + " of the CPUs"
	}
	parts = append(parts, dbio)
	ev["proc_dbio_cpu_pct"] = results.Round6(s.DriverCPUPct)
	if c := s.Split; c != nil {
		parts = append(parts, "other processes "+pct(c.Other))
		ev[results.MetricOtherCPU] = results.Round6(c.Other)
	}
	if s.StealPct >= 1 {
		parts = append(parts, "steal "+pct(s.StealPct))
		ev["cpu_steal_pct"] = results.Round6(s.StealPct)
	}
	say(strings.Join(parts, ", "))
}

// sessions says how many sessions were active in the database on average,
// of how many the step held: "2.1 of 4 sessions active in the database".
func (s Signals) sessions(active float64) string {
	if s.Load != nil && s.Load.Sessions > 0 {
		of := strconv.Itoa(s.Load.Sessions) + " sessions"
		if s.Load.Sessions == 1 {
			of = "1 session"
		}
		return sig3(active) + " of " + of + " active in the database"
	}
	return sig3(active) + " sessions active in the database on average"
}
