package analysis

import (
	"testing"

	"dbio/internal/results"
)

// summaryOf is a step's telemetry with the given step means, each sampled
// in every one of ten seconds, on two CPUs (and the device vda where it
// has figures).
func summaryOf(means map[string]float64, inProcess bool) *results.TelemetrySummary {
	m := map[string]results.TelemetryStat{}
	for k, v := range means {
		m[k] = results.TelemetryStat{Mean: v, P99: v, Max: v, Samples: 10}
	}
	sum := &results.TelemetrySummary{Samples: 10, CPUs: 2, InProcessEngine: inProcess, Metrics: m}
	if _, ok := m["disk_vda_util_pct"]; ok {
		sum.Devices = []string{"vda"}
	}
	return sum
}

// with is base and extra together, extra winning.
func with(base map[string]float64, extra map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// dbTime gives the step's database time: sessions in all, and each
// class's share in % (cpu, io_read, io_write, io_sync, lock, other).
func dbTime(sessions float64, shares ...float64) map[string]float64 {
	m := map[string]float64{results.MetricDBActiveSessions: sessions}
	for i, c := range results.DBTimeClasses() {
		m[c.Sessions()] = sessions * shares[i] / 100
	}
	return m
}

// cpus gives the CPU's states and whose the busy time was.
func cpus(idle, iowait, server, dbio, other float64) map[string]float64 {
	return map[string]float64{"cpu_idle_pct": idle, "cpu_iowait_pct": iowait, "cpu_steal_pct": 0,
		"proc_server_cpu_pct": server, "proc_dbio_cpu_pct": dbio, results.MetricOtherCPU: other}
}

// writeCap is a 300 write IOPS cap served 285 IOPS, bound in atCap % of seconds.
func writeCap(atCap float64) map[string]float64 {
	k := results.IOCapWriteIOPS
	return map[string]float64{k.Served(): 285, k.Used(): 95, k.AtCap(): atCap}
}

// syncWaits are the database's own timing of its log and data syncs, in ms per second.
func syncWaits(logMs, dataMs float64) map[string]float64 {
	_, l := results.DBWaitSync.Rates()
	_, d := results.DBWaitDataSync.Rates()
	return map[string]float64{l: logMs, d: dataMs}
}

// The database's view: each verdict from a step's recorded figures (the
// telemetry alone, as Conclude has it, or the step with its load, as
// JudgeStep has it), with the one or two figures that prove it.
func TestJudgeDatabase(t *testing.T) {
	merge := func(ms ...map[string]float64) map[string]float64 {
		out := map[string]float64{}
		for _, m := range ms {
			out = with(out, m)
		}
		return out
	}
	quietTmpfs := merge(dbTime(3.6, 85, 0, 3, 5, 2, 5), cpus(3, 0.2, 60, 25, 8))
	capped := merge(dbTime(3.9, 20, 0, 13, 61, 3, 3), cpus(40, 12, 30, 8, 6), writeCap(88), syncWaits(2900, 150))
	closed := func(users int) *results.Step { return &results.Step{Users: users} }
	for _, tt := range []struct {
		name   string
		means  map[string]float64
		step   *results.Step // nil: judged by Conclude, without the step's load
		sqlite bool
		kind   results.VerdictKind
		text   string
	}{
		{name: "PostgreSQL on tmpfs: the server's CPU", means: quietTmpfs, step: closed(4),
			kind: results.VerdictCPUServer,
			text: "CPU-bound (the server's): 85 % of database time on CPU, idle 3 %; the server used 60 % of the CPUs, dbio 25 %, other processes 8 %"},
		{name: "MariaDB on tmpfs leaves some idle in its round trips: still the server's CPU",
			means: merge(dbTime(3.5, 64, 0, 0, 9, 27, 0), cpus(12, 0, 81, 8, 0.6)), step: closed(4),
			kind: results.VerdictCPUServer,
			text: "CPU-bound (the server's): 64 % of database time on CPU, idle 12 %; the server used 81 % of the CPUs, dbio 8 %, other processes 0.6 %"},
		{name: "capped at 300 write IOPS: log syncs", means: capped, step: closed(4),
			kind: results.VerdictStorageSync,
			text: "storage-bound on log syncs: 61 % of database time waited on log syncs (74 % on storage in all); writes at the 300 write IOPS cap in 88 % of seconds"},
		{name: "a checkpoint's data file syncs",
			means: merge(dbTime(2, 30, 0, 5, 55, 5, 5), cpus(50, 10, 20, 5, 5), syncWaits(100, 4000)),
			kind:  results.VerdictStorageSync,
			text:  "storage-bound on data file syncs: 55 % of database time waited on data file syncs (60 % on storage in all)"},
		{name: "syncs an engine did not time itself, on a busy device",
			means: merge(dbTime(2, 30, 0, 0, 70, 0, 0), cpus(50, 10, 20, 5, 5),
				map[string]float64{"disk_vda_util_pct": 97, "disk_vda_w_await_ms": 7.05, "disk_vda_r_await_ms": 0.2}),
			kind: results.VerdictStorageSync,
			text: "storage-bound on syncs: 70 % of database time waited on syncs; vda utilization 97 %, p99 write latency 7.05 ms"},
		{name: "a hog beside PostgreSQL on tmpfs: other processes' CPU",
			means: merge(dbTime(3.8, 92, 0, 2, 2, 2, 2), cpus(0.5, 0, 24, 8, 66)), step: closed(4),
			kind: results.VerdictCPUOther,
			text: "CPU-bound (other processes'): 92 % of database time on CPU, idle 0.5 %; the server used 24 % of the CPUs, dbio 8 %, other processes 66 %; other processes took 66 % of the CPUs: the step measured its neighbours as much as the database"},
		{name: "a hog beside the capped run: still the log syncs, and the neighbours said",
			means: with(capped, cpus(0.5, 3, 20, 6, 70)), step: closed(4),
			kind: results.VerdictStorageSync,
			text: "storage-bound on log syncs: 61 % of database time waited on log syncs (74 % on storage in all); writes at the 300 write IOPS cap in 88 % of seconds; other processes took 70 % of the CPUs: the step measured its neighbours as much as the database"},
		{name: "locks", means: merge(dbTime(7.2, 30, 0, 5, 10, 50, 5), cpus(20, 1, 60, 15, 4)), step: closed(8),
			kind: results.VerdictLock,
			text: "lock-bound: 50 % of database time waited on locks held by other sessions; 7.2 of 8 sessions active in the database"},
		{name: "a memory cap that makes the server read back what it evicted",
			means: merge(dbTime(3, 35, 55, 5, 5, 0, 0), cpus(30, 25, 40, 8, 2), map[string]float64{
				results.MetricMemcgLimit: 192, results.MetricMemcgUsage: 191.5, results.MetricMemcgRefaults: 850}),
			kind: results.VerdictMemory,
			text: "memory-bound: the server's 192 MB memory cap made it read back 850 pages/s it had evicted; 55 % of database time waited on data reads"},
		{name: "data reads without a memory cap, on a read-capped device",
			means: merge(dbTime(3, 35, 55, 5, 5, 0, 0), cpus(30, 25, 40, 8, 2), map[string]float64{
				results.IOCapReadIOPS.Served(): 1000, results.IOCapReadIOPS.Used(): 50, results.IOCapReadIOPS.AtCap(): 12,
				results.IOCapWriteIOPS.Served(): 10, results.IOCapWriteIOPS.Used(): 1, results.IOCapWriteIOPS.AtCap(): 0}),
			kind: results.VerdictStorageRead,
			text: "storage-bound on data reads: 55 % of database time waited on data reads (65 % on storage in all); reads at the 2,000 read IOPS cap in 12 % of seconds"},
		{name: "open loop at a rate the database keeps up with: the schedule",
			means: merge(dbTime(0.4, 80, 0, 5, 10, 0, 5), cpus(60, 1, 20, 5, 3)),
			step:  &results.Step{Users: 4, Pacing: &results.Pacing{Arrival: "poisson", OfferedTPS: 200, AchievedTPS: 199}, MeasureS: 10},
			kind:  results.VerdictClient,
			text:  "client-bound: the sessions were in the database 10 % of their time (0.4 of 4 sessions active in the database); the rest went to waiting for the schedule's next start (200 tx/s offered)"},
		{name: "open loop at a low rate: the few log writes a sample caught limit nothing",
			means: merge(dbTime(0.02, 0, 0, 100, 0, 0, 0), cpus(80, 0, 5, 3, 2)),
			step:  &results.Step{Users: 4, Pacing: &results.Pacing{Arrival: "fixed", OfferedTPS: 50, AchievedTPS: 50}, MeasureS: 6},
			kind:  results.VerdictClient,
			text:  "client-bound: the sessions were in the database 0.5 % of their time (0.02 of 4 sessions active in the database); the rest went to waiting for the schedule's next start (50 tx/s offered)"},
		{name: "closed loop, the load generator holding the CPUs while the sessions wait on it",
			means: merge(dbTime(0.8, 90, 0, 0, 10, 0, 0), cpus(2, 0, 20, 70, 5)), step: closed(4),
			kind: results.VerdictCPUDBIO,
			text: "CPU-bound (dbio's): the sessions were in the database 20 % of their time, idle 2 %; the server used 20 % of the CPUs, dbio 70 %, other processes 5 %; run the load generator on another host to load the server fully"},
		{name: "a CPU hog starving the client: the sessions wait outside the database for a CPU",
			means: merge(dbTime(1.17, 74, 1, 1, 2, 21, 1), cpus(0.1, 0, 58, 7, 34)), step: closed(4),
			kind: results.VerdictCPUServer,
			text: "CPU-bound (the server's): the sessions were in the database 29 % of their time, idle 0.1 %; the server used 58 % of the CPUs, dbio 7 %, other processes 34 %; other processes took 34 % of the CPUs: the step measured its neighbours as much as the database"},
		{name: "terminals keying and thinking through a monitor's pool",
			means: merge(dbTime(0.9, 80, 0, 5, 10, 0, 5), cpus(60, 1, 20, 5, 3)),
			step: &results.Step{Users: 100, Pacing: &results.Pacing{Arrival: results.ArrivalTerminals, OfferedTPS: 20, AchievedTPS: 20, Connections: 10},
				MeasureS: 100},
			kind: results.VerdictClient,
			text: "client-bound: the sessions were in the database 9 % of their time (0.9 of 10 sessions active in the database); the rest went to keying and think time"},
		{name: "closed loop, sessions mostly in the client",
			means: merge(dbTime(0.6, 80, 0, 5, 10, 0, 5), cpus(40, 1, 20, 30, 3)), step: closed(2),
			kind: results.VerdictClient,
			text: "client-bound: the sessions were in the database 30 % of their time (0.6 of 2 sessions active in the database); the rest went to the client (dbio) and the round trips"},
		{name: "one user with CPUs to spare",
			means: merge(dbTime(0.9, 90, 0, 2, 5, 0, 3), cpus(45, 1, 40, 10, 3)), step: closed(1),
			kind: results.VerdictNotSaturated,
			text: "not saturated: 0.9 of 1 session active in the database, 90 % of database time on CPU, 7 % on storage; idle 45 %"},
		{name: "the same judged from the telemetry alone",
			means: merge(dbTime(0.9, 90, 0, 2, 5, 0, 3), cpus(45, 1, 40, 10, 3)),
			kind:  results.VerdictNotSaturated,
			text:  "not saturated: 0.9 sessions active in the database on average, 90 % of database time on CPU, 7 % on storage; idle 45 %"},
		{name: "a load generator that takes the CPUs",
			means: merge(dbTime(1.5, 95, 0, 0, 2, 0, 3), cpus(2, 0, 30, 60, 8)), step: closed(2),
			kind: results.VerdictCPUDBIO,
			text: "CPU-bound (dbio's): 95 % of database time on CPU, idle 2 %; the server used 30 % of the CPUs, dbio 60 %, other processes 8 %; run the load generator on another host to load the server fully"},
		{name: "SQLite waiting on the block layer, writes capped", sqlite: true,
			means: merge(map[string]float64{results.MetricDBIOBlkioWait: 84, "proc_dbio_cpu_pct": 25, "cpu_idle_pct": 60, "cpu_iowait_pct": 30, results.MetricOtherCPU: 3}, writeCap(91)),
			step:  closed(4),
			kind:  results.VerdictStorage,
			text:  "storage-bound: dbio's threads, the engine's among them, waited on the block layer 63 % of their busy time (0.84 thread-seconds a second against 0.5 on CPU); writes at the 300 write IOPS cap in 91 % of seconds"},
		{name: "SQLite under a write cap bound throughout, its waits not accounted", sqlite: true,
			means: merge(map[string]float64{results.MetricDBIOBlkioWait: 0, "proc_dbio_cpu_pct": 8, "cpu_idle_pct": 4, "cpu_iowait_pct": 0, results.MetricOtherCPU: 85}, writeCap(100)),
			kind:  results.VerdictStorage,
			text:  "storage-bound: writes at the 300 write IOPS cap in 100 % of seconds; the kernel accounted dbio's threads, the engine's among them, 0 % of their busy time waiting on the block layer, which misses waits it does not count as the thread's I/O; other processes took 85 % of the CPUs: the step measured its neighbours as much as the database"},
		{name: "SQLite beside busy neighbours, its write cap bound in few seconds", sqlite: true,
			means: merge(map[string]float64{results.MetricDBIOBlkioWait: 0, "proc_dbio_cpu_pct": 8, "cpu_idle_pct": 4, "cpu_iowait_pct": 0, results.MetricOtherCPU: 85}, writeCap(40)),
			kind:  results.VerdictCPUOther,
			text:  "CPU-bound (other processes'): dbio's threads, the engine's among them, were on CPU 100 % of their busy time, idle 4 %; dbio used 8 % of the CPUs, other processes 85 %; other processes took 85 % of the CPUs: the step measured its neighbours as much as the database"},
		{name: "SQLite on tmpfs, the CPUs saturated", sqlite: true,
			means: map[string]float64{results.MetricDBIOBlkioWait: 0, "proc_dbio_cpu_pct": 93, "cpu_idle_pct": 4, "cpu_iowait_pct": 0, results.MetricOtherCPU: 3},
			kind:  results.VerdictCPUDBIO,
			text:  "CPU-bound (dbio's, with the engine inside it): dbio's threads, the engine's among them, were on CPU 100 % of their busy time, idle 4 %; dbio used 93 % of the CPUs, other processes 3 %"},
		{name: "SQLite with CPUs to spare", sqlite: true,
			means: map[string]float64{results.MetricDBIOBlkioWait: 10, "proc_dbio_cpu_pct": 30, "cpu_idle_pct": 60, "cpu_iowait_pct": 5, results.MetricOtherCPU: 3},
			kind:  results.VerdictNotSaturated,
			text:  "not saturated: dbio's threads, the engine's among them, were busy 0.7 thread-seconds a second, 14 % of it waiting on the block layer; idle 60 %"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sum := Conclude(*summaryOf(tt.means, tt.sqlite))
			v := sum.Verdict
			if tt.step != nil {
				tt.step.Telemetry = &sum
				JudgeStep(tt.step)
				v = tt.step.Telemetry.Verdict
			}
			if v.Kind != tt.kind || v.Text != tt.text {
				t.Errorf("got  %s %q\nwant %s %q", v.Kind, v.Text, tt.kind, tt.text)
			}
			if v.Evidence[results.MetricDBActiveSessions] == 0 && v.Evidence[results.MetricDBIOBlkioWait] == 0 && !tt.sqlite {
				t.Errorf("evidence without the database's account: %v", v.Evidence)
			}
		})
	}
}

// A storage-bound verdict states storage in all only where it reads
// other than the class that took the most.
func TestStorageInAllOnlyWhenItDiffers(t *testing.T) {
	m := with(dbTime(4, 30, 0.2, 0.3, 69.6, 0, 0), cpus(40, 1, 30, 5, 2))
	v := Conclude(*summaryOf(m, false)).Verdict
	if want := "storage-bound on syncs: 70 % of database time waited on syncs"; v.Text != want {
		t.Errorf("got %q, want %q", v.Text, want)
	}
}
