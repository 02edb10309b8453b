package telemetry

import (
	"math"
	"sort"
	"strings"

	"dbio/internal/results"
)

// rates turns two snapshots dt seconds apart into per-second points, in a
// fixed order: CPU, the load average, devices, pressure, processes, the
// CPU of other processes, the server's memory cgroup, the storage's
// block-I/O cgroup, engine counters.
func rates(prev, cur snapshot, dt float64, devices []device) []Point {
	pts := make([]Point, 0, 16+8*len(devices)+len(cur.counters))
	add := func(name string, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			pts = append(pts, Point{name, v})
		}
	}

	// CPU. Each counter's delta is clamped at zero (iowait is known to step
	// back on some kernels) and the shares are of the sum of the deltas, so
	// the five add up to 100.
	machineTicks := dt * userHZ * float64(max(cur.cpus, 1))
	// notBusy is the share of the CPUs that ran nothing (idle, iowait) or
	// that the hypervisor took (steal), in %; NaN until known.
	notBusy := math.NaN()
	if prev.hasCPU && cur.hasCPU {
		a, b := prev.cpu, cur.cpu
		d := cpuTimes{
			user: sub(b.user, a.user), nice: sub(b.nice, a.nice), system: sub(b.system, a.system),
			idle: sub(b.idle, a.idle), iowait: sub(b.iowait, a.iowait), irq: sub(b.irq, a.irq),
			softirq: sub(b.softirq, a.softirq), steal: sub(b.steal, a.steal),
		}
		if total := d.total(); total > 0 {
			pct := func(v uint64) float64 { return 100 * float64(v) / float64(total) }
			add("cpu_user_pct", pct(d.user+d.nice))
			add("cpu_system_pct", pct(d.system+d.irq+d.softirq))
			add("cpu_idle_pct", pct(d.idle))
			add("cpu_iowait_pct", pct(d.iowait))
			add("cpu_steal_pct", pct(d.steal))
			machineTicks = float64(total)
			notBusy = pct(d.idle + d.iowait + d.steal)
		}
	}

	// The load average is a level, not a counter: the kernel's own
	// one-minute average as it stood at this sample.
	if cur.hasLoad {
		add("load_1m", cur.load1)
	}

	for _, dev := range devices {
		a, okA := prev.disks[dev.name]
		b, okB := cur.disks[dev.name]
		if !okA || !okB || b.reads < a.reads || b.writes < a.writes {
			continue // missing, or the device was removed and came back
		}
		p := "disk_" + dev.key + "_"
		reads, writes := float64(b.reads-a.reads), float64(b.writes-a.writes)
		add(p+"rps", reads/dt)
		add(p+"wps", writes/dt)
		add(p+"rmbps", float64(sub(b.readBytes, a.readBytes))/1e6/dt)
		add(p+"wmbps", float64(sub(b.writeByte, a.writeByte))/1e6/dt)
		// A second without I/O has no latency: leaving the point out keeps
		// it from dragging the step's mean latency towards zero.
		if reads > 0 {
			add(p+"r_await_ms", float64(subMs(b.readMs, a.readMs))/reads)
		}
		if writes > 0 {
			add(p+"w_await_ms", float64(subMs(b.writeMs, a.writeMs))/writes)
		}
		add(p+"aqu", float64(subMs(b.weighted, a.weighted))/(dt*1000))
		add(p+"util_pct", min(100, float64(subMs(b.ioMs, a.ioMs))/(dt*10)))
	}

	for _, res := range []string{"cpu", "io", "memory"} {
		a, okA := prev.psi[res]
		b, okB := cur.psi[res]
		if !okA || !okB {
			continue
		}
		// Totals are microseconds of stall: per second of wall time, in %.
		add("psi_"+res+"_some_pct", min(100, float64(sub(b.some, a.some))/(dt*1e4)))
		// System-wide "full" is not defined for cpu (the kernel reports 0).
		if res != "cpu" && a.hasFull && b.hasFull {
			add("psi_"+res+"_full_pct", min(100, float64(sub(b.full, a.full))/(dt*1e4)))
		}
	}

	// known is the CPU of dbio and the server, in % of all CPUs; NaN while
	// dbio's is unknown (a host read through its node exporter).
	known := math.NaN()
	for _, g := range []struct {
		role       string
		prev, curr *groupSnap
	}{{"dbio", prev.dbio, cur.dbio}, {"server", prev.server, cur.server}} {
		if g.prev == nil || g.curr == nil {
			continue
		}
		ticks := g.curr.cpuTicks(g.prev, prev.uptime)
		cpu := 100 * float64(ticks) / machineTicks
		add("proc_"+g.role+"_cpu_pct", cpu)
		add("proc_"+g.role+"_rss_mb", float64(g.curr.rss)/1e6)
		if g.role == "dbio" {
			known = cpu
		} else if !math.IsNaN(known) {
			known += cpu
		}
		// Ticks of delay per second of wall time, in % of one thread
		// busy waiting the whole second.
		if delay, ok := g.curr.blkioTicks(g.prev, prev.uptime, cur.uptime); ok {
			add("proc_"+g.role+"_blkio_wait_pct", 100*float64(delay)/userHZ/dt)
		}
	}

	// What the CPUs did that was neither dbio's nor the server's: other
	// processes (and the kernel's own threads). The process and machine
	// counters are read a moment apart, so the difference can dip under
	// zero by a tick or two.
	if !math.IsNaN(notBusy) && !math.IsNaN(known) && !cur.serverUnknown {
		add(results.MetricOtherCPU, max(0, 100-notBusy-known))
	}

	// The server's memory cgroup: its levels at this sample, and the
	// counters that show its cap binding as rates. Levels are in MB (10^6
	// bytes) like the processes' memory.
	if m := cur.memcg; m != nil {
		add("memcg_limit_mb", float64(m.Limit)/1e6)
		add("memcg_usage_mb", float64(m.Usage)/1e6)
		add("memcg_cache_mb", float64(m.Cache)/1e6)
		add("memcg_anon_mb", float64(m.Anon)/1e6)
		if a := prev.memcg; a != nil {
			add("memcg_limit_hits_per_s", float64(sub(m.LimitHits, a.LimitHits))/dt)
			add("memcg_refaults_per_s", float64(sub(m.Refaults, a.Refaults))/dt)
			add("memcg_major_faults_per_s", float64(sub(m.MajorFaults, a.MajorFaults))/dt)
			add("memcg_oom_kills_per_s", float64(sub(m.OOMKills, a.OOMKills))/dt)
			if a.HasPressure && m.HasPressure {
				add("memcg_pressure_some_pct", min(100, float64(sub(m.PressureSome, a.PressureSome))/(dt*1e4)))
				add("memcg_pressure_full_pct", min(100, float64(sub(m.PressureFull, a.PressureFull))/(dt*1e4)))
			}
		}
	}

	// The storage's block-I/O cgroup: for each cap it sets, what the group
	// was served against it. Every capped device has the same caps, so the
	// device served the most is the one closest to them.
	if g, a := cur.iocap, prev.iocap; g != nil && a != nil {
		for _, k := range results.IOCapKinds() {
			limit := g.Caps[k]
			if limit == 0 {
				continue
			}
			var most uint64
			seen := false
			for dev, b := range g.Devices {
				// A device absent before had served nothing: the group's
				// counters start at zero when it is created.
				most, seen = max(most, sub(b.of(k), a.Devices[dev].of(k))), true
			}
			if !seen {
				continue
			}
			perS := float64(most) / dt
			served := perS
			if k == results.IOCapReadBPS || k == results.IOCapWriteBPS {
				served /= 1e6
			}
			used := 100 * perS / float64(limit)
			add(k.Served(), served)
			add(k.Used(), used)
			// A count cap's use moves by whole I/Os, and the throttle's
			// slices do not line up with the sampler's seconds: one I/O
			// counted in the next second leaves this one short and that
			// one over (under 20 write IOPS, seconds at 85, 115, 90 and
			// 110 % of a cap that bound throughout). A second within one
			// I/O of the binding use counts as bound.
			grain := 0.0
			if k == results.IOCapReadIOPS || k == results.IOCapWriteIOPS {
				grain = 100 / (float64(limit) * dt)
			}
			atCap := 0.0
			if used+grain >= results.IOCapBindingPct {
				atCap = 100
			}
			add(k.AtCap(), atCap)
		}
		if a.HasPressure && g.HasPressure {
			add(results.MetricIOCapPressureSome, min(100, float64(sub(g.PressureSome, a.PressureSome))/(dt*1e4)))
			add(results.MetricIOCapPressureFull, min(100, float64(sub(g.PressureFull, a.PressureFull))/(dt*1e4)))
		}
	}

	// The machine's memory: levels at this sample, in MB, where it was read
	// (a host's node exporter).
	if m := cur.mem; m != nil && m.total > 0 {
		add("mem_used_mb", float64(sub(m.total, m.available))/1e6)
		add("mem_available_mb", float64(m.available)/1e6)
		add("mem_cache_mb", float64(m.cached)/1e6)
	}

	if len(cur.counters) > 0 && len(prev.counters) > 0 {
		names := make([]string, 0, len(cur.counters))
		for n := range cur.counters {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			a, ok := prev.counters[n]
			b := cur.counters[n]
			if !ok || b < a || dbTimeCounter(n) {
				continue // new counter, or reset (pg_stat_reset): wait for the next sample
			}
			add("engine_"+metricKey(n)+"_per_s", (b-a)/dt)
		}
		for _, p := range dbTime(prev.counters, cur.counters, dt) {
			add(p.Name, p.Value)
		}
		// A pair <kind>_wait_ms and <kind>_ops is the time the engine
		// waited for an operation and their count: their deltas give the
		// second's mean wait per operation, <kind>_await_ms, absent in a
		// second without one (like a device's await).
		for _, n := range names {
			kind, ok := strings.CutSuffix(n, waitSuffix)
			if !ok {
				continue
			}
			ops := kind + opsSuffix
			wa, okWA := prev.counters[n]
			oa, okOA := prev.counters[ops]
			ob, okOB := cur.counters[ops]
			wb := cur.counters[n]
			if !okWA || !okOA || !okOB || ob <= oa || wb < wa {
				continue
			}
			add(metricKey(kind)+"_await_ms", (wb-wa)/(ob-oa))
		}
	}
	return pts
}

// dbTimeCounter says whether an engine counter is one of database time by
// class (results.DBTimeClass.Counter): those become the figures dbTime
// gives instead of plain rates.
func dbTimeCounter(name string) bool {
	for _, c := range results.DBTimeClasses() {
		if name == c.Counter() {
			return true
		}
	}
	return false
}

// dbTime turns the engine's cumulative seconds of database time per class
// into the second's figures: the mean sessions in each class
// (db_aas_<class>), in all of them (db_aas), and each class's share of the
// second's database time (db_time_<class>_pct, absent in a second without
// any). A second in which a class's counter is new or went backwards (the
// engine's account restarted) gives none of them: shares of a partial
// account would not add up to 100.
func dbTime(prev, cur map[string]float64, dt float64) []Point {
	var classes []results.DBTimeClass
	var secs []float64
	total := 0.0
	for _, c := range results.DBTimeClasses() {
		b, okB := cur[c.Counter()]
		if !okB {
			continue // an engine without the class
		}
		a, okA := prev[c.Counter()]
		if !okA || b < a {
			return nil
		}
		classes, secs = append(classes, c), append(secs, b-a)
		total += b - a
	}
	if len(classes) == 0 {
		return nil
	}
	out := make([]Point, 0, 2*len(classes)+1)
	for i, c := range classes {
		out = append(out, Point{c.Sessions(), secs[i] / dt})
	}
	out = append(out, Point{results.MetricDBActiveSessions, total / dt})
	if total > 0 {
		for i, c := range classes {
			out = append(out, Point{c.Share(), 100 * secs[i] / total})
		}
	}
	return out
}

// The suffixes of an engine's wait counters (see results.DBWaitKind.Counters).
const (
	waitSuffix = "_wait_ms"
	opsSuffix  = "_ops"
)

// sub is b-a for a counter, zero if it went backwards.
func sub(b, a uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}

// subMs is b-a for the millisecond fields of /proc/diskstats, which the
// kernel prints as 32-bit values that wrap after about 49 days of I/O time.
func subMs(b, a uint64) uint64 {
	if b >= a {
		return b - a
	}
	if a < 1<<32 {
		return b + 1<<32 - a
	}
	return 0
}
