package telemetry

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"dbio/internal/results"
)

func pointMap(pts []Point) map[string]float64 {
	m := map[string]float64{}
	for _, p := range pts {
		m[p.Name] = p.Value
	}
	return m
}

func TestRatesDisk(t *testing.T) {
	devs := []device{{name: "dm-0", key: "dm_0"}}
	disk := func(d diskStat) snapshot { return snapshot{disks: map[string]diskStat{"dm-0": d}} }
	tests := []struct {
		name      string
		prev, cur diskStat
		dt        float64
		want      map[string]float64
	}{
		{
			name: "reads and writes over two seconds",
			prev: diskStat{reads: 100, readBytes: 0, readMs: 50, writes: 10, writeMs: 10, ioMs: 1000, weighted: 2000},
			cur:  diskStat{reads: 300, readBytes: 8e6, readMs: 450, writes: 30, writeByte: 2e6, writeMs: 150, ioMs: 2500, weighted: 6000},
			dt:   2,
			want: map[string]float64{
				"disk_dm_0_rps": 100, "disk_dm_0_wps": 10, "disk_dm_0_rmbps": 4, "disk_dm_0_wmbps": 1,
				"disk_dm_0_r_await_ms": 2, "disk_dm_0_w_await_ms": 7, "disk_dm_0_aqu": 2, "disk_dm_0_util_pct": 75,
			},
		},
		{
			name: "a quiet second has no latency",
			prev: diskStat{reads: 5, readMs: 9},
			cur:  diskStat{reads: 5, readMs: 9},
			dt:   1,
			want: map[string]float64{
				"disk_dm_0_rps": 0, "disk_dm_0_wps": 0, "disk_dm_0_rmbps": 0, "disk_dm_0_wmbps": 0,
				"disk_dm_0_aqu": 0, "disk_dm_0_util_pct": 0,
			},
		},
		{
			name: "32-bit millisecond counters wrap",
			prev: diskStat{writes: 10, writeMs: 1<<32 - 5, ioMs: 1<<32 - 100, weighted: 1<<32 - 1},
			cur:  diskStat{writes: 20, writeMs: 15, ioMs: 900, weighted: 1999},
			dt:   1,
			want: map[string]float64{
				"disk_dm_0_rps": 0, "disk_dm_0_wps": 10, "disk_dm_0_rmbps": 0, "disk_dm_0_wmbps": 0,
				"disk_dm_0_w_await_ms": 2, "disk_dm_0_aqu": 2, "disk_dm_0_util_pct": 100,
			},
		},
		{
			name: "device removed and re-added: counters restart",
			prev: diskStat{reads: 1000, writes: 1000},
			cur:  diskStat{reads: 3, writes: 1},
			dt:   1,
			want: map[string]float64{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pointMap(rates(disk(tt.prev), disk(tt.cur), tt.dt, devs))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestRatesCPU(t *testing.T) {
	prev := snapshot{hasCPU: true, cpus: 2, cpu: cpuTimes{user: 100, nice: 0, system: 50, idle: 1000, iowait: 500, irq: 0, softirq: 0, steal: 0}}
	// iowait steps back by 10 ticks, as it may on NOHZ kernels: it counts as 0.
	cur := snapshot{hasCPU: true, cpus: 2, cpu: cpuTimes{user: 150, nice: 10, system: 70, idle: 1080, iowait: 490, irq: 5, softirq: 15, steal: 20}}
	got := pointMap(rates(prev, cur, 1, nil))
	want := map[string]float64{
		"cpu_user_pct": 30, "cpu_system_pct": 20, "cpu_idle_pct": 40, "cpu_iowait_pct": 0, "cpu_steal_pct": 10,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestRatesProcessGroups(t *testing.T) {
	// Two seconds on a 2-CPU machine: 400 ticks in all.
	cpu := func(idle uint64) cpuTimes { return cpuTimes{idle: idle} }
	prev := snapshot{hasCPU: true, cpus: 2, cpu: cpu(1000), uptime: 500.00,
		dbio: &groupSnap{ticks: map[procKey]uint64{{"self", 100}: 70}},
		server: &groupSnap{ticks: map[procKey]uint64{
			{"10", 100}: 1000, // postmaster
			{"11", 200}: 500,  // a backend that will exit
			{"12", 300}: 40,   // a backend whose pid will be reused
		}},
	}
	cur := snapshot{hasCPU: true, cpus: 2, cpu: cpu(1400), uptime: 502.00, load1: 1.5, hasLoad: true,
		dbio: &groupSnap{ticks: map[procKey]uint64{{"self", 100}: 90}, rss: 25e6},
		server: &groupSnap{rss: 300e6, ticks: map[procKey]uint64{
			{"10", 100}:   1010, // +10
			{"12", 50050}: 30,   // pid 12 reused after the previous sample: all 30 count
			{"13", 50000}: 20,   // born exactly at the previous sample: counts
			{"14", 49000}: 999,  // older, but not in the group before: baseline only
		}},
	}
	got := pointMap(rates(prev, cur, 2, nil))
	want := map[string]float64{
		"cpu_user_pct": 0, "cpu_system_pct": 0, "cpu_idle_pct": 100, "cpu_iowait_pct": 0, "cpu_steal_pct": 0,
		"load_1m":           1.5, // the level at the later sample, not a rate
		"proc_dbio_cpu_pct": 5, "proc_dbio_rss_mb": 25,
		"proc_server_cpu_pct": 15, "proc_server_rss_mb": 300,
		"cpu_other_pct": 0, // idle 100 % leaves nothing: a dip under zero is clamped
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// TestGroupRSSCountsSharedOnce reads a fake postmaster with two backends
// mapping the same shared buffers.
func TestGroupRSSCountsSharedOnce(t *testing.T) {
	fs := FS{Proc: t.TempDir()}
	proc := func(pid, children, statm string) {
		writeFile(t, fs.proc(pid, "stat"), pid+" (postgres) S 1 1 1 0 -1 0 0 0 0 0 10 5 0 0 20 0 1 0 100 0 0\n")
		writeFile(t, fs.proc(pid, "statm"), statm)
		writeFile(t, fs.proc(pid, "task", pid, "children"), children)
	}
	proc("10", "11 12 ", "60000 7500 5500 1000 0 3000 0\n")                                             // 2000 private pages
	proc("11", "", "60000 35000 34500 1000 0 3000 0\n")                                                 // 500 private, the most shared
	proc("12", "", "60000 17500 17250 1000 0 3000 0\n")                                                 // 250 private
	g := &group{role: "server", children: true, roots: func() []string { return []string{"10", "99"} }} // 99 has exited
	gs := g.read(fs, 4096, nil, false)
	if want := uint64((2000 + 500 + 250 + 34500) * 4096); gs.rss != want {
		t.Errorf("rss = %d, want %d", gs.rss, want)
	}
	if len(gs.ticks) != 3 {
		t.Errorf("processes %v, want 10, 11, 12", gs.ticks)
	}
	// dbio excludes what the server owns, and what hangs below it.
	d := &group{role: "dbio", children: true, roots: func() []string { return []string{"10"} }}
	if got := d.read(fs, 4096, gs.pids, false); len(got.ticks) != 0 {
		t.Errorf("dbio counted server processes: %v", got.ticks)
	}
}

func TestRatesEngineCounters(t *testing.T) {
	prev := snapshot{counters: map[string]float64{"Innodb_buffer_pool_reads": 100, "checkpoints": 10, "gone": 1}}
	cur := snapshot{counters: map[string]float64{"Innodb_buffer_pool_reads": 300, "checkpoints": 2, "new": 5}}
	got := pointMap(rates(prev, cur, 0.5, nil))
	want := map[string]float64{"engine_innodb_buffer_pool_reads_per_s": 400}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// An engine's wait counters come out as rates like any counter, and each
// pair as the second's mean wait per operation; a second without such an
// operation has no mean wait, and a pair with half missing none either.
func TestRatesEngineWaits(t *testing.T) {
	prev := snapshot{counters: map[string]float64{"db_sync_ops": 100, "db_sync_wait_ms": 400, "db_read_ops": 7, "db_read_wait_ms": 1,
		"db_write_wait_ms": 5}}
	cur := snapshot{counters: map[string]float64{"db_sync_ops": 300, "db_sync_wait_ms": 1400, "db_read_ops": 7, "db_read_wait_ms": 1,
		"db_write_wait_ms": 9}}
	got := pointMap(rates(prev, cur, 2, nil))
	want := map[string]float64{
		"engine_db_sync_ops_per_s": 100, "engine_db_sync_wait_ms_per_s": 500, "db_sync_await_ms": 5,
		"engine_db_read_ops_per_s": 0, "engine_db_read_wait_ms_per_s": 0,
		"engine_db_write_wait_ms_per_s": 2,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestSummarize(t *testing.T) {
	v := make([]float64, 0, 300)
	for i := 300; i >= 1; i-- {
		v = append(v, float64(i))
	}
	got := summarize(v)
	// Nearest rank: the 297th of 300 sorted values.
	want := results.TelemetryStat{Mean: 150.5, P99: 297, Max: 300, Samples: 300}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := summarize([]float64{1.0 / 3}); got != (results.TelemetryStat{Mean: 0.333333, P99: 0.333333, Max: 0.333333, Samples: 1}) {
		t.Errorf("one value: %+v", got)
	}
	if got := summarize(nil); got != (results.TelemetryStat{}) {
		t.Errorf("no values: %+v", got)
	}
}

// TestNoInfiniteValues checks that a value encoding/json cannot write
// (NaN, ±Inf) never leaves rates, so a summary always marshals.
func TestNoInfiniteValues(t *testing.T) {
	prev := snapshot{counters: map[string]float64{"a": 0}}
	cur := snapshot{counters: map[string]float64{"a": math.MaxFloat64}}
	pts := rates(prev, cur, 1e-300, nil)
	if len(pts) != 0 {
		t.Errorf("got %v, want no points", pts)
	}
	s, err := New(Options{FS: snapFS("t0")})
	if err != nil {
		t.Fatal(err)
	}
	s.step.add(pts)
	if _, err := json.Marshal(s.StepSummary()); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The server's memory cgroup: its levels at each sample in MB, its counters
// as rates once there is a baseline, its pressure only where both samples
// have it, and a counter that went backwards (a new group) as zero.
func TestRatesMemoryGroup(t *testing.T) {
	levels := map[string]float64{"memcg_limit_mb": 512, "memcg_usage_mb": 500, "memcg_cache_mb": 300, "memcg_anon_mb": 150}
	a := &MemoryGroup{Limit: 512e6, Usage: 400e6, LimitHits: 10, Refaults: 1000, MajorFaults: 50, OOMKills: 0, PressureSome: 1e6, PressureFull: 5e5, HasPressure: true}
	b := &MemoryGroup{Limit: 512e6, Usage: 500e6, Cache: 300e6, Anon: 150e6, LimitHits: 30, Refaults: 5000, MajorFaults: 40, OOMKills: 1, PressureSome: 1.5e6, PressureFull: 6e5, HasPressure: true}
	withRates := func(m map[string]float64) map[string]float64 {
		out := map[string]float64{}
		for k, v := range levels {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	noPressure := *a
	noPressure.HasPressure = false
	for _, tt := range []struct {
		name      string
		prev, cur *MemoryGroup
		want      map[string]float64
	}{
		{"no group", nil, nil, map[string]float64{}},
		{"first read: levels only", nil, b, levels},
		{"two reads", a, b, withRates(map[string]float64{"memcg_limit_hits_per_s": 10, "memcg_refaults_per_s": 2000,
			"memcg_major_faults_per_s": 0, "memcg_oom_kills_per_s": 0.5, "memcg_pressure_some_pct": 25, "memcg_pressure_full_pct": 5})},
		{"pressure in one sample only", &noPressure, b, withRates(map[string]float64{"memcg_limit_hits_per_s": 10, "memcg_refaults_per_s": 2000,
			"memcg_major_faults_per_s": 0, "memcg_oom_kills_per_s": 0.5})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := pointMap(rates(snapshot{memcg: tt.prev}, snapshot{memcg: tt.cur}, 2, nil))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// An engine's cumulative seconds of database time per class become the
// second's mean sessions per class, in all, and each class's share; never
// plain engine rates. A second whose account restarted or began gives
// none, and a second without database time no shares.
func TestRatesDatabaseTime(t *testing.T) {
	counters := func(kv ...float64) map[string]float64 {
		m := map[string]float64{}
		for i, c := range []string{"dbtime_cpu_s", "dbtime_io_read_s", "dbtime_io_write_s", "dbtime_io_sync_s", "dbtime_lock_s", "dbtime_other_s"} {
			if i < len(kv) && !math.IsNaN(kv[i]) {
				m[c] = kv[i]
			}
		}
		return m
	}
	nan := math.NaN()
	for _, tt := range []struct {
		name      string
		prev, cur map[string]float64
		dt        float64
		want      map[string]float64
	}{
		{"four sessions over half a second, mostly waiting on log syncs",
			counters(10, 1, 2, 3, 0, 0), counters(10.25, 1, 2.05, 4.6, 0.05, 0.05), 0.5,
			map[string]float64{
				"db_aas_cpu": 0.5, "db_aas_io_read": 0, "db_aas_io_write": 0.1, "db_aas_io_sync": 3.2, "db_aas_lock": 0.1, "db_aas_other": 0.1, "db_aas": 4,
				"db_time_cpu_pct": 12.5, "db_time_io_read_pct": 0, "db_time_io_write_pct": 2.5, "db_time_io_sync_pct": 80, "db_time_lock_pct": 2.5, "db_time_other_pct": 2.5,
			}},
		{"an idle second: sessions, no shares",
			counters(5, 1, 1, 1, 1, 1), counters(5, 1, 1, 1, 1, 1), 1,
			map[string]float64{"db_aas_cpu": 0, "db_aas_io_read": 0, "db_aas_io_write": 0, "db_aas_io_sync": 0, "db_aas_lock": 0, "db_aas_other": 0, "db_aas": 0}},
		{"an engine that accounts only some classes",
			counters(1, nan, nan, 2), counters(1.5, nan, nan, 3.5), 1,
			map[string]float64{"db_aas_cpu": 0.5, "db_aas_io_sync": 1.5, "db_aas": 2, "db_time_cpu_pct": 25, "db_time_io_sync_pct": 75}},
		{"the account restarted", counters(9, 9, 9, 9, 9, 9), counters(1, 9, 9, 9, 9, 9), 1, map[string]float64{}},
		{"the account began", counters(), counters(1, 1, 1, 1, 1, 1), 1, map[string]float64{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := pointMap(rates(snapshot{counters: tt.prev}, snapshot{counters: tt.cur}, tt.dt, nil))
			if len(got) != len(tt.want) {
				t.Fatalf("got %v\nwant %v", got, tt.want)
			}
			for k, w := range tt.want {
				if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-9 {
					t.Errorf("%s = %v (present %v), want %v", k, g, ok, w)
				}
			}
		})
	}
}
