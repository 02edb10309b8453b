package telemetry

import (
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"dbio/internal/results"
)

// statLine is a /proc/<pid>/stat line of Linux 5.0+ (52 fields) with the
// fields the sampler reads: CPU time, threads, start time and block-I/O
// delay (field 42), all in USER_HZ ticks.
func statLine(pid, comm string, cpu, threads, start, blkio uint64) string {
	return fmt.Sprintf("%s (%s) S 1 1 1 0 -1 4194560 0 0 0 0 %d 0 0 0 20 0 %d 0 %d 0 0 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 %d 0 0 0 0 0 0 0 0 0 0\n",
		pid, comm, cpu, threads, start, blkio)
}

// A multi-threaded process's own stat holds its first thread's delay only:
// the group's delay is read thread by thread from its task directory, and
// a single-threaded process's from its own stat. Nothing is read while
// delay accounting is off.
func TestGroupDelaysAreEveryThreads(t *testing.T) {
	fs := FS{Proc: t.TempDir()}
	// mariadbd: three threads; its own stat shows the first thread's 5 ticks.
	writeFile(t, fs.proc("20", "stat"), statLine("20", "mariadbd", 100, 3, 1000, 5))
	writeFile(t, fs.proc("20", "statm"), "100 50 10 1 0 40 0\n")
	for tid, blkio := range map[string]uint64{"20": 5, "21": 7, "22": 0} {
		writeFile(t, fs.proc("20", "task", tid, "stat"), statLine(tid, "mariadbd", 10, 3, 1000, blkio))
		writeFile(t, fs.proc("20", "task", tid, "children"), "")
	}
	writeFile(t, fs.proc("20", "task", "21", "children"), "30 ")
	// A single-threaded child, with no task directory of its own here.
	writeFile(t, fs.proc("30", "stat"), statLine("30", "helper", 3, 1, 1200, 4))
	writeFile(t, fs.proc("30", "statm"), "100 50 10 1 0 40 0\n")
	writeFile(t, fs.proc("30", "task", "30", "children"), "")

	g := &group{role: "server", children: true, roots: func() []string { return []string{"20"} }}
	if off := g.read(fs, 4096, nil, false); off.blkio != nil || len(off.ticks) != 2 {
		t.Errorf("delay accounting off: delays %v, processes %v; want no delays and both processes", off.blkio, off.ticks)
	}
	on := g.read(fs, 4096, nil, true)
	want := map[procKey]uint64{{"20", 1000}: 5, {"21", 1000}: 7, {"22", 1000}: 0, {"30", 1200}: 4}
	if !reflect.DeepEqual(on.blkio, want) {
		t.Errorf("delays %v, want %v", on.blkio, want)
	}
	if len(on.ticks) != 2 {
		t.Errorf("processes %v, want 20 and its child 30", on.ticks)
	}
}

// Threads come and go between samples: each one's delay counts by its own
// difference, a thread that exited takes its delay with it without taking
// anything from the others, one born since the previous sample counts in
// full, and one older that was not seen before only from the next sample.
// A thread's delay cannot grow by more than its age: such a jump (the
// kernel's clock since boot, as Linux 6.18 was seen to add) counts
// nothing; nor by more than the time between the samples: more counts as
// the whole interval.
func TestBlkioTicksThreadByThread(t *testing.T) {
	prev := &groupSnap{blkio: map[procKey]uint64{
		{"20", 1000}:  50,
		{"21", 1000}:  900, // exits before the next sample
		{"22", 1000}:  10,
		{"23", 1000}:  40, // its counter steps back: nothing, not a negative
		{"26", 49000}: 0,
		{"27", 40000}: 5,
	}}
	cur := &groupSnap{blkio: map[procKey]uint64{
		{"20", 1000}:  80,      // +30
		{"22", 1000}:  10,      // +0
		{"23", 1000}:  30,      // 0
		{"24", 50100}: 20,      // born after the previous sample (uptime 500 s): all 20
		{"25", 40000}: 700,     // older, newly in the group: baseline only
		{"26", 49000}: 2879810, // 8 hours in a thread of 12 s: not a wait
		{"27", 40000}: 345,     // 3.4 s in 2 s, in a thread of 102 s: the 2 s (and a tick)
	}}
	ticks, ok := cur.blkioTicks(prev, 500, 502)
	if !ok || ticks != 50+201 {
		t.Errorf("blkioTicks = %d, %v; want 251 ticks", ticks, ok)
	}
	if _, ok := cur.blkioTicks(&groupSnap{}, 500, 502); ok {
		t.Error("a previous reading without delays gave a delay")
	}
}

// cpu_other_pct is what the busy CPUs did beyond dbio and the server,
// clamped at zero; proc_<role>_blkio_wait_pct the group's delay per second
// in % of one thread.
func TestRatesOtherCPUAndDelays(t *testing.T) {
	// Two CPUs over 2 s: 400 ticks, of which 100 idle, 20 iowait, 20 steal.
	cpuAt := func(user uint64) cpuTimes {
		return cpuTimes{user: user, idle: 1000, iowait: 100, steal: 10}
	}
	prevCPU, curCPU := cpuAt(1000), cpuTimes{user: 1260, idle: 1100, iowait: 120, steal: 30}
	group := func(cpu, blkio uint64) *groupSnap {
		g := &groupSnap{ticks: map[procKey]uint64{{"1", 100}: cpu}}
		if blkio > 0 {
			g.blkio = map[procKey]uint64{{"1", 100}: blkio}
		}
		return g
	}
	for _, tt := range []struct {
		name                  string
		prevDBIO, curDBIO     *groupSnap
		prevServer, curServer *groupSnap
		noCPU                 bool
		serverUnknown         bool
		want                  map[string]float64
		wantAbsent            []string
	}{
		{name: "server and dbio", prevDBIO: group(100, 1), curDBIO: group(120, 1), prevServer: group(500, 10), curServer: group(600, 110),
			// busy 65 % of the CPUs: dbio 5 %, the server 25 %, others 35 %;
			// the server waited 100 ticks in 2 s: half a thread.
			want: map[string]float64{"proc_dbio_cpu_pct": 5, "proc_server_cpu_pct": 25, results.MetricOtherCPU: 35,
				results.MetricServerBlkioWait: 50, results.MetricDBIOBlkioWait: 0}},
		{name: "in-process engine", prevDBIO: group(100, 0), curDBIO: group(220, 0),
			want:       map[string]float64{"proc_dbio_cpu_pct": 30, results.MetricOtherCPU: 35},
			wantAbsent: []string{results.MetricDBIOBlkioWait, "proc_server_cpu_pct"}},
		{name: "the groups took more than the busy time", prevDBIO: group(100, 0), curDBIO: group(300, 0), prevServer: group(0, 0), curServer: group(100, 0),
			want: map[string]float64{"proc_dbio_cpu_pct": 50, "proc_server_cpu_pct": 25, results.MetricOtherCPU: 0}},
		{name: "no process groups (a node exporter's host)",
			wantAbsent: []string{results.MetricOtherCPU}},
		{name: "no CPU times", noCPU: true, prevDBIO: group(100, 0), curDBIO: group(120, 0),
			wantAbsent: []string{results.MetricOtherCPU}},
		{name: "a server whose processes are unknown", serverUnknown: true, prevDBIO: group(100, 0), curDBIO: group(120, 0),
			// 60 % of the CPUs were busy with what was not dbio's: the
			// user's server among it, so none of it is others'.
			want:       map[string]float64{"proc_dbio_cpu_pct": 5},
			wantAbsent: []string{results.MetricOtherCPU, "proc_server_cpu_pct"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prev := snapshot{hasCPU: !tt.noCPU, cpus: 2, cpu: prevCPU, uptime: 500, dbio: tt.prevDBIO, server: tt.prevServer}
			cur := snapshot{hasCPU: !tt.noCPU, cpus: 2, cpu: curCPU, uptime: 502, dbio: tt.curDBIO, server: tt.curServer, serverUnknown: tt.serverUnknown}
			got := pointMap(rates(prev, cur, 2, nil))
			for name, v := range tt.want {
				if g, ok := got[name]; !ok || g != v {
					t.Errorf("%s = %v (present %v), want %v", name, g, ok, v)
				}
			}
			for _, name := range tt.wantAbsent {
				if v, ok := got[name]; ok {
					t.Errorf("%s = %v, want it absent", name, v)
				}
			}
		})
	}
}

// The storage's block-I/O cgroup: for each cap it sets, what its busiest
// device was served (I/Os per second, MB per second), that as a share of
// the cap, and whether the second was at 90 % of the cap or more; its own
// pressure where both samples have it.
func TestRatesIOGroup(t *testing.T) {
	caps := map[results.IOCapKind]uint64{results.IOCapWriteIOPS: 300, results.IOCapWriteBPS: 10e6}
	at := func(sdaW, sdaWB, sdbW uint64, some uint64) *IOGroup {
		g := &IOGroup{Caps: caps, Devices: map[string]IOServed{"8:0": {WriteIOs: sdaW, WriteBytes: sdaWB, ReadIOs: 5000}}}
		if sdbW > 0 {
			g.Devices["8:16"] = IOServed{WriteIOs: sdbW}
		}
		if some > 0 {
			g.PressureSome, g.PressureFull, g.HasPressure = some, some/2, true
		}
		return g
	}
	// A group capped at 20 write IOPS alone, read a second apart.
	smallCap := func(w uint64) *IOGroup {
		return &IOGroup{Caps: map[results.IOCapKind]uint64{results.IOCapWriteIOPS: 20}, Devices: map[string]IOServed{"8:0": {WriteIOs: w}}}
	}
	for _, tt := range []struct {
		name      string
		prev, cur *IOGroup
		dt        float64 // seconds between the reads; 0 for 2
		want      map[string]float64
	}{
		{"no group", nil, nil, 0, map[string]float64{}},
		{"first read", nil, at(100, 0, 0, 0), 0, map[string]float64{}},
		{"writes at the cap on the busiest device", at(1000, 1e6, 0, 0), at(1570, 5e6, 200, 0), 0, map[string]float64{
			// 8:0 served 570 writes in 2 s, 8:16 (new, from zero) 200.
			"iocap_w_iops_served": 285, "iocap_w_iops_used_pct": 95, "iocap_w_iops_at_cap_pct": 100,
			"iocap_w_bps_served": 2, "iocap_w_bps_used_pct": 20, "iocap_w_bps_at_cap_pct": 0}},
		{"under the cap, with pressure", at(1000, 0, 0, 1e6), at(1500, 0, 0, 1.6e6), 0, map[string]float64{
			"iocap_w_iops_served": 250, "iocap_w_iops_used_pct": 250.0 / 3, "iocap_w_iops_at_cap_pct": 0,
			"iocap_w_bps_served": 0, "iocap_w_bps_used_pct": 0, "iocap_w_bps_at_cap_pct": 0,
			results.MetricIOCapPressureSome: 30, results.MetricIOCapPressureFull: 15}},
		{"a group with no device read yet", &IOGroup{Caps: caps}, &IOGroup{Caps: caps}, 0, map[string]float64{}},
		// Under a cap of 20 write IOPS, one I/O is 5 % of it: 17 in a
		// second (85 %) is within one I/O of 90 % and counts as bound,
		// 16 (80 %) does not. The byte cap has no such grain.
		{"one I/O short of the binding use, under a small cap", smallCap(100), smallCap(117), 1, map[string]float64{
			"iocap_w_iops_served": 17, "iocap_w_iops_used_pct": 85, "iocap_w_iops_at_cap_pct": 100}},
		{"two I/Os short", smallCap(100), smallCap(116), 1, map[string]float64{
			"iocap_w_iops_served": 16, "iocap_w_iops_used_pct": 80, "iocap_w_iops_at_cap_pct": 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dt := tt.dt
			if dt == 0 {
				dt = 2
			}
			got := pointMap(rates(snapshot{iocap: tt.prev}, snapshot{iocap: tt.cur}, dt, nil))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

// The sampler reads threads' delays only while kernel.task_delayacct is
// 1: the figure is there while it is on, and absent, not zero, once it is
// off (another program switched it back) or where the switch is missing.
func TestSamplerFollowsDelayAccounting(t *testing.T) {
	fs := FS{Proc: t.TempDir()}
	switchFile := fs.proc("sys", "kernel", "task_delayacct")
	uptime, blkio := 500.0, uint64(100)
	write := func() {
		writeFile(t, fs.proc("stat"), "cpu  100 0 100 1000 10 0 0 0 0 0\ncpu0 100 0 100 1000 10 0 0 0 0 0\n")
		writeFile(t, fs.proc("uptime"), fmt.Sprintf("%.2f 100.00\n", uptime))
		writeFile(t, fs.proc("40", "stat"), statLine("40", "postgres", 10, 1, 100, blkio))
		writeFile(t, fs.proc("40", "statm"), "100 50 10 1 0 40 0\n")
		writeFile(t, fs.proc("41", "stat"), statLine("41", "dbio", 10, 1, 100, 0))
		writeFile(t, fs.proc("41", "statm"), "100 50 10 1 0 40 0\n")
	}
	write()
	s, err := New(Options{FS: fs, SelfPID: 41, ServerPIDs: func() []int { return []int{40} }})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1e9, 0)
	next := func(delayacct string) map[string]float64 {
		if delayacct == "" {
			os.Remove(switchFile)
		} else {
			writeFile(t, switchFile, delayacct+"\n")
		}
		uptime, blkio, clock = uptime+1, blkio+30, clock.Add(time.Second)
		write()
		return pointMap(s.Sample(clock))
	}
	next("1") // the baseline
	if got := next("1"); got[results.MetricServerBlkioWait] != 30 || got[results.MetricDBIOBlkioWait] != 0 {
		t.Errorf("delay accounting on: server %v, dbio %v; want 30 %% and 0 %%", got[results.MetricServerBlkioWait], got[results.MetricDBIOBlkioWait])
	}
	for _, state := range []string{"0", "", "1"} {
		// Off, missing, then on again: the first second back on has no
		// baseline.
		if v, ok := next(state)[results.MetricServerBlkioWait]; ok {
			t.Errorf("task_delayacct %q: the delay is %v, want it absent", state, v)
		}
	}
	if got := next("1"); got[results.MetricServerBlkioWait] != 30 {
		t.Errorf("delay accounting on again: %v, want 30 %%", got[results.MetricServerBlkioWait])
	}
}
