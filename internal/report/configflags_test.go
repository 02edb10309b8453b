package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"text/tabwriter"

	"dbio/internal/analysis"
	"dbio/internal/metrics"
	"dbio/internal/results"
)

// A run's configuration reads in the flags' words and units: what the
// user typed (--ramp-time 30s, --limit rbps=250MB), not run.json's keys
// (rampup_s 30, limits.rbps 262144000).
func TestConfigFactsInTheFlagsWords(t *testing.T) {
	flag := testOptions().SettingFlag
	tests := []struct {
		name   string
		config string
		want   []fact
		absent []string
	}{
		{name: "a TPC-C run with a limit, a memory cap and a setting",
			config: `{"engine":"postgres","target":"/srv/t","users":[1,2,4],"rampup_s":30,"step_s":90,
				"tpcc":{"warehouses":10,"keying_thinking":false,"seed":42,"load_workers":0,"reuse":false,"skip_checks":false},
				"engine_options":{"buffer_pool_bytes":268435456,"server_memory_bytes":201326592,"settings":{"max_wal_size":"4GB"},"external":false,"database":"dbio_tpcc","transport":"socket"},
				"limits":{"riops":500,"rbps":262144000}}`,
			want: []fact{{"--users", "1,2,4"}, {"--ramp-time", "30s"}, {"--runtime", "1m30s"}, {"--warehouses", "10"},
				{"--load-workers", "0"}, {"--skip-checks", "false"}, {"--buffer-pool", "256 MiB"}, {"--server-memory", "192 MiB"},
				{"--setting max_wal_size", "4GB"}, {"server", "managed by dbio"},
				{"--limit", "riops=500,rbps=250MB (500 read IOPS, 250 MiB/s read)"}},
			absent: []string{"rampup_s", "step_s", "limits.rbps", "262144000", "tpcc."}},
		{name: "an open-loop run: the schedule's seed is the workload's",
			config: `{"engine":"sqlite","users":[4],"rampup_s":120,"step_s":3600,"pacing":{"arrival":"poisson","rate_tps":400,"late_tolerance_ms":10,"seed":7},
				"tpcc":{"warehouses":1,"seed":7}}`,
			want:   []fact{{"--ramp-time", "2m"}, {"--runtime", "1h"}, {"--rate", "400 tx/s"}, {"--arrival", "poisson"}, {"--late-tolerance", "10ms"}, {"--seed", "7"}},
			absent: []string{"arrival seed"}},
		{name: "AS3AP's stepping under its flags, its ceiling a duration",
			config: `{"engine":"sqlite","users":[1,2],"start":1,"add":1,"max_users":8,"ceiling_ms":100,"ceiling_stat":"p95","rampup_s":1,"step_s":2,"as3ap":{"rows":1000}}`,
			want:   []fact{{"--start", "1"}, {"--max-users", "8"}, {"--ceiling", "100ms"}, {"--ceiling-stat", "p95"}, {"--rows", "1000"}}},
		{name: "sysbench's derived values keep their keys",
			config: `{"engine":"sqlite","users":[1],"rampup_s":1,"step_s":2,"sysbench":{"tables":2,"table_size":1000,"workload":"oltp_read_write","point_selects":10}}`,
			want:   []fact{{"--tables", "2"}, {"--table-size", "1000"}, {"--workload", "oltp_read_write"}, {"sysbench.point_selects", "10"}}},
		{name: "a disk run",
			config: `{"profile":"mix","targets":["/a","/b"],"runtime":"2s","ramp":"0s","size_bytes":268435456,"iodepths":[1,8],"block_sizes":[4096,65536],"read_pct":70,"cpus":2,"memory_bytes":25325273088}`,
			want: []fact{{"--target", "/a, /b"}, {"--size", "256 MiB"}, {"--iodepth", "1,8"}, {"--bs", "4 KiB, 64 KiB"}, {"--read-pct", "70 % reads"},
				{"profile sized for", "2 CPUs, 23.6 GiB"}},
			absent: []string{"size_bytes", "268435456", "block_sizes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c results.RunConfig
			if err := json.Unmarshal([]byte(tt.config), &c); err != nil {
				t.Fatal(err)
			}
			got := configFacts(c, flag)
			have := map[string]string{}
			var all []string
			for _, f := range got {
				have[f.Label] = f.Value
				all = append(all, f.Label+" "+f.Value)
			}
			for _, w := range tt.want {
				if v, ok := have[w.Label]; !ok || v != w.Value {
					t.Errorf("%s: %q, want %q; all:\n%s", w.Label, v, w.Value, strings.Join(all, "\n"))
				}
			}
			text := strings.Join(all, "\n")
			for _, a := range tt.absent {
				if strings.Contains(text, a) {
					t.Errorf("the configuration still says %q:\n%s", a, text)
				}
			}
		})
	}
}

// "What differs" lists what differs meaningfully: not the free port dbio
// took for each managed server, not a socket directory that differs only
// because the target does, and not one setting twice under two names
// (the target's path and --target, a --setting and the engine's setting,
// --buffer-pool and shared_buffers, the engine and its version).
func TestWhatDiffersLeavesOutNoise(t *testing.T) {
	run := func(target, port, pool string) *runView {
		var c results.RunConfig
		config := `{"engine":"postgres","target":"` + target + `","users":[1],"rampup_s":2,"step_s":5,"tpcc":{"warehouses":1},
			"engine_options":{"buffer_pool_bytes":` + pool + `,"settings":{"max_wal_size":"4GB"},"external":false,"database":"dbio_tpcc","transport":"socket"}}`
		if err := json.Unmarshal([]byte(config), &c); err != nil {
			t.Fatal(err)
		}
		l := &results.Loaded{Run: results.Run{Kind: "tpcc", Config: c,
			Environment: results.Environment{Host: results.Host{Hostname: "vm"}, Versions: map[string]string{"postgres": "15.20", "dbio": "devel"},
				Targets: []results.TargetInfo{{Role: "data", Path: target}}},
			Engines: []results.EngineInfo{{Engine: "postgres", Version: "15.20", Managed: true, Settings: map[string]string{
				"port": port, "unix_socket_directories": target + "/dbio/postgres/run", "max_wal_size": "4GB", "shared_buffers": pool}}}}}
		return &runView{Recorded: analysis.NewRecorded(l), opts: testOptions()}
	}
	a, b := run("/srv/nvme", "43267", "33554432"), run("/srv/sata", "39609", "67108864")
	a.Letter, b.Letter = "A", "B"
	table := sideBySide([]*runView{a, b}, true)
	var items []string
	for _, row := range table.Rows {
		items = append(items, row[0].Text)
	}
	want := []string{"--target", "--buffer-pool"}
	if strings.Join(items, ", ") != strings.Join(want, ", ") {
		t.Errorf("what differs lists %q, want %q", items, want)
	}
}

// A column of throughputs is written one way, with separators and the
// decimals its largest value needs: never "1,469" above "506.45".
func TestThroughputColumnsAreWrittenOneWay(t *testing.T) {
	tests := []struct {
		values []float64
		want   []string
	}{
		{[]float64{1469.2, 506.45, 12.3}, []string{"1,469", "506", "12"}},
		{[]float64{50.61, 9.5, 0}, []string{"50.6", "9.5", "0.0"}},
		{[]float64{5.061, 0.25}, []string{"5.06", "0.25"}},
		{[]float64{12345.67, math.NaN()}, []string{"12,346", "-"}},
	}
	for _, tt := range tests {
		f := throughputFormat(tt.values)
		for i, v := range tt.values {
			if got := f(v); got != tt.want[i] {
				t.Errorf("%v: %v written %q, want %q", tt.values, v, got, tt.want[i])
			}
		}
	}
	// The terminal's step table formats each figure's column so.
	step := func(users int, tps float64) results.Step {
		return results.Step{Name: fmt.Sprintf("users-%d", users), Users: users, Status: "completed", Total: &metrics.TxSummary{},
			Figures: []results.Figure{{Name: results.FigureTPS, Value: tps}}}
	}
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	workloadTable(tw, []results.Step{step(1, 506.45), step(4, 1469.2)})
	tw.Flush()
	for _, want := range []string{" 506 ", " 1,469 "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the step table does not say %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "506.45") {
		t.Errorf("the step table mixes decimals:\n%s", b.String())
	}
}
