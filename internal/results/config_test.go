package results

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Every run.json in the report's recorded runs reads into the typed config
// and writes back byte for byte as it was recorded, the workload's
// settings and stepping included, whatever the workload, body or kind of
// run; a suite's run as an older dbio recorded it is read by its own rule
// (TestConfigOfASuiteRunAsOlderDbioRecordedIt).
func TestConfigWritesBackAsRecorded(t *testing.T) {
	root := filepath.Join("..", "report", "testdata")
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "run.json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var raw struct {
			Kind   string          `json:"kind"`
			Config json.RawMessage `json:"config"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, raw.Config); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if strings.Contains(want.String(), `"workload":{`) {
			return nil // a suite's own record of its run
		}
		var run Run
		if err := json.Unmarshal(b, &run); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got, err := json.Marshal(run.Config)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if string(got) != want.String() {
			t.Errorf("%s: written back as\n%s\nrecorded as\n%s", path, got, want.String())
		}
		seen[run.Kind] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"disk", "quick", "tpcc", "sysbench"} {
		if !seen[kind] {
			t.Errorf("no recorded %s run read", kind)
		}
	}
}

// A config written from its typed fields keeps the order run.json has
// always had, whatever is set, and reads back as the same fields.
func TestConfigKeepsItsKeyOrder(t *testing.T) {
	settings := Settings{{"warehouses", json.Number("1")}, {"keying_thinking", false}}
	tests := []struct {
		name string
		c    RunConfig
		want string
	}{
		{"tpcc", RunConfig{Engine: "sqlite", Target: "/t", Users: []int{1, 2}, RampUpS: 5, StepS: 20, Workload: "tpcc", Settings: settings,
			EngineOptions: EngineConfig{Database: "dbio_tpcc", Transport: "socket"}, Backups: &BackupsConfig{Cycles: 2}},
			`{"engine":"sqlite","target":"/t","users":[1,2],"rampup_s":5,"step_s":20,"tpcc":{"warehouses":1,"keying_thinking":false},` +
				`"engine_options":{"external":false,"database":"dbio_tpcc","transport":"socket"},` +
				`"backups":{"cycles":2,"restore":false,"interval":0,"users":0}}`},
		{"as3ap steps its users", RunConfig{Engine: "mariadb", Users: []int{1, 6}, Stepping: Settings{{"start", json.Number("1")}, {"add", json.Number("5")}},
			StepS: 60, Workload: "as3ap", Settings: Settings{{"rows", json.Number("1000")}}},
			`{"engine":"mariadb","users":[1,6],"start":1,"add":5,"rampup_s":0,"step_s":60,"as3ap":{"rows":1000},` +
				`"engine_options":{"external":false,"database":"","transport":""}}`},
		{"steady, open loop, limits", RunConfig{Engine: "sqlite", LogTarget: "/l", Users: []int{4}, RampUpS: 60, StepS: 10.5,
			Steady: &SteadyConfig{Until: "nopm_slope:0.5%", WindowS: 20, RampS: 5},
			Pacing: &PacingConfig{Arrival: "poisson", RatePerUserTPS: 25, LateToleranceMS: 10, Seed: 1}, Workload: "tpcc", Settings: settings,
			Limits: LimitsConfig{WriteIOPS: 200, Preset: "sata"}, Noisy: &NoisyConfig{Tenants: 3, BackupTenants: 1, Interval: time.Second, Cycles: 1, Users: 2}},
			`{"engine":"sqlite","log_target":"/l","users":[4],"rampup_s":60,"step_s":10.5,"ramp_until":"nopm_slope:0.5%","steady_window_s":20,"steady_ramp_s":5,` +
				`"pacing":{"arrival":"poisson","rate_per_user_tps":25,"late_tolerance_ms":10,"seed":1},"tpcc":{"warehouses":1,"keying_thinking":false},` +
				`"engine_options":{"external":false,"database":"","transport":""},"limits":{"wiops":200,"preset":"sata"},` +
				`"noisy":{"tenants":3,"backup_tenants":1,"interval":1000000000,"cycles":1,"users":2}}`},
		{"goal search", RunConfig{Engine: "postgres", Users: []int{8}, StepS: 30, Workload: "tpcc", Settings: settings,
			Pacing: &PacingConfig{Arrival: "fixed", RateTPS: 10, LateToleranceMS: 5, Seed: 1},
			Goal:   &GoalConfig{Objective: "new_order:p99<=50ms", Users: 8, StartTPS: 10, MaxTPS: 1000, Factor: 2, Resolution: "10%", Tolerance: 0.05, MaxProbes: 20}},
			`{"engine":"postgres","users":[8],"rampup_s":0,"step_s":30,"pacing":{"arrival":"fixed","rate_tps":10,"late_tolerance_ms":5,"seed":1},` +
				`"goal":{"objective":"new_order:p99\u003c=50ms","users":8,"start_tps":10,"max_tps":1000,"factor":2,"resolution":"10%","tolerance":0.05,"max_probes":20},` +
				`"tpcc":{"warehouses":1,"keying_thinking":false},"engine_options":{"external":false,"database":"","transport":""}}`},
		{"a workload that records no settings", RunConfig{Engine: "sqlite", Users: []int{1}, Workload: "tpcc"},
			`{"engine":"sqlite","users":[1],"rampup_s":0,"step_s":0,"tpcc":null,"engine_options":{"external":false,"database":"","transport":""}}`},
		{"disk", RunConfig{Disk: &DiskConfig{Profile: "sqlio", Targets: []string{"/a", "h1:/b"}, Runtime: "60s", Ramp: "0s", SizeBytes: 1 << 30,
			LatencyMax: "10ms", LatencyStat: StatP99, Hosts: []HostConfig{{Name: "h1", Destination: "h1", FioPort: 8766}}}},
			`{"profile":"sqlio","targets":["/a","h1:/b"],"runtime":"60s","ramp":"0s","size_bytes":1073741824,"latency_max":"10ms","latency_stat":"p99",` +
				`"hosts":[{"name":"h1","destination":"h1","fio_port":8766}]}`},
		{"nothing", RunConfig{}, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			var back RunConfig
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tt.c) {
				t.Errorf("read back as\n%+v\nwant\n%+v", back, tt.c)
			}
		})
	}
}

// A suite's run as an older dbio recorded it, the suite's own record of the
// run, reads into the fields a command's run records: a disk run's as
// fio's (a real run's), a database run's from its engine, targets, users,
// timing, limits and scenario (as dbio wrote it before the workload table
// had its own key names).
func TestConfigOfASuiteRunAsOlderDbioRecordedIt(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		want       RunConfig
	}{
		{"disk", filepath.Join("..", "report", "testdata", "suite-nvme-vs-sata", "20261125-154603-device-nvme", "run.json"),
			RunConfig{Disk: &DiskConfig{Profile: "four-corners", Targets: []string{"./dbio-suite/nvme"}, Runtime: "4s", SizeBytes: 256 << 20}}},
		{"tpcc", filepath.Join("testdata", "config-suite-run-tpcc.json"),
			RunConfig{Engine: "postgres", Target: "./dbio-suite/sata", LogTarget: "./dbio-suite/log", Users: []int{2, 8}, RampUpS: 5, StepS: 20,
				Workload: "tpcc", EngineOptions: EngineConfig{BufferPoolBytes: 128 << 20},
				Limits:  LimitsConfig{ReadIOPS: 1385, WriteIOPS: 231, ReadBPS: 62914560, WriteBPS: 24117248},
				Backups: &BackupsConfig{Cycles: 2, Restore: true, Interval: 10 * time.Second, Users: 4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			var config json.RawMessage = b
			var run struct {
				Config json.RawMessage `json:"config"`
			}
			if json.Unmarshal(b, &run) == nil && run.Config != nil {
				config = run.Config
			}
			var got RunConfig
			if err := json.Unmarshal(config, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

// A config that is not one is a damaged run.json, as any record is.
func TestConfigThatIsNotOneIsAnError(t *testing.T) {
	for _, config := range []string{`[1,2]`, `"tpcc"`, `{"users":"1,2"}`, `{"profile":"sqlio","targets":"/a"}`} {
		var c RunConfig
		if err := json.Unmarshal([]byte(config), &c); err == nil {
			t.Errorf("%s read as %+v", config, c)
		}
	}
}

// A workload's record becomes Settings in its own order, its values read by
// name and written back as the workload wrote them.
func TestSettingsOf(t *testing.T) {
	type record struct {
		Warehouses int               `json:"warehouses"`
		Keying     bool              `json:"keying_thinking"`
		Ratio      float64           `json:"ratio"`
		Name       string            `json:"name"`
		Sizes      []int             `json:"sizes"`
		Nested     map[string]string `json:"nested"`
		Pool       *int              `json:"pool"`
	}
	r := record{Warehouses: 4, Keying: true, Ratio: 0.2, Name: "a<b", Sizes: []int{1, 2}, Nested: map[string]string{"k": "v"}}
	s, err := SettingsOf(r)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range s {
		names = append(names, e.Name)
	}
	if strings.Join(names, ",") != "warehouses,keying_thinking,ratio,name,sizes,nested,pool" {
		t.Errorf("names %v, want the record's order", names)
	}
	if n, ok := s.Int("warehouses"); !ok || n != 4 {
		t.Errorf("warehouses %v %v", n, ok)
	}
	if v, ok := s.Bool("keying_thinking"); !ok || !v {
		t.Errorf("keying_thinking %v %v", v, ok)
	}
	if s.Text("ratio") != "0.2" || s.Text("name") != "a<b" || s.Text("sizes") != "" || s.Text("absent") != "" {
		t.Errorf("texts %q %q %q", s.Text("ratio"), s.Text("name"), s.Text("sizes"))
	}
	if _, ok := s.Int("name"); ok {
		t.Error("a string read as a number")
	}
	got, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(r)
	if string(got) != string(want) {
		t.Errorf("written back as %s, the workload wrote %s", got, want)
	}
	if none, err := SettingsOf(nil); none != nil || err != nil {
		t.Errorf("nil record: %v %v", none, err)
	}
	if _, err := SettingsOf([]int{1}); err == nil {
		t.Error("a list taken for named values")
	}
}
