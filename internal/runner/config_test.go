package runner

import (
	"encoding/json"
	"testing"
	"time"

	"dbio/internal/arrival"
	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/goal"
	"dbio/internal/iolimit"
	"dbio/internal/steady"
)

// TestRunConfigRecordsThePlan: run.json's config is drawn from the plan
// whichever body it has: the user steps as asked, the workload's own
// records as it wrote them (its stepping beside the users, its settings
// under its name), the engine's options and limits from the setup, and
// the body's own part (the scenario; a goal search's users instead of the
// steps and of the workload's stepping).
func TestRunConfigRecordsThePlan(t *testing.T) {
	type settings struct {
		Warehouses int  `json:"warehouses"`
		Keying     bool `json:"keying_thinking"`
	}
	type stepping struct {
		Start int `json:"start"`
		Add   int `json:"add"`
	}
	criterion, err := steady.Parse("nopm_slope:0.5%")
	if err != nil {
		t.Fatal(err)
	}
	setup := Setup{Engine: sqlite.Engine{}, EngineOptions: engine.Options{Database: "dbio_tpcc", Transport: "socket", BufferPool: 64 << 20}}
	limited := setup
	limited.Limits = iolimit.Limits{WriteIOPS: 300, Preset: "sata"}
	steps := Steps{Users: []int{1, 2}, RampUp: 5 * time.Second, Step: 20 * time.Second}
	search := Goal{Users: 8, Search: goal.Search{Objective: goal.Objective{Tx: "new_order", Percentile: 99, Limit: 50 * time.Millisecond},
		Start: 10, Max: 1000, Resolution: goal.Resolution{Rel: 0.1}, MaxProbes: 20}}
	const engineOptions = `"engine_options":{"buffer_pool_bytes":67108864,"external":false,"database":"dbio_tpcc","transport":"socket"}`
	tests := []struct {
		name     string
		p        Plan
		steps    Steps
		stepping any
		want     string
	}{
		{"user steps", Plan{Setup: setup, Body: steps}, steps, nil,
			`{"engine":"sqlite","target":"/t","users":[1,2],"rampup_s":5,"step_s":20,"tpcc":{"warehouses":1,"keying_thinking":false},` + engineOptions + `}`},
		{"a stepping workload, steady ramp-ups, limits", Plan{Setup: limited, Body: steps},
			Steps{Users: []int{1, 6}, RampUp: time.Minute, Step: 20 * time.Second, Steady: &SteadyRampUp{Criterion: criterion, Window: 20 * time.Second}},
			stepping{1, 5},
			`{"engine":"sqlite","target":"/t","users":[1,6],"start":1,"add":5,"rampup_s":60,"step_s":20,"ramp_until":"nopm_slope:0.5%","steady_window_s":20,` +
				`"tpcc":{"warehouses":1,"keying_thinking":false},` + engineOptions + `,"limits":{"wiops":300,"preset":"sata"}}`},
		{"open loop", Plan{Setup: setup, Body: steps},
			Steps{Users: []int{4}, Step: 10 * time.Second, Pacing: &Pacing{Process: arrival.Poisson, Rate: 25, PerUser: true, Seed: 1}}, nil,
			`{"engine":"sqlite","target":"/t","users":[4],"rampup_s":0,"step_s":10,"pacing":{"arrival":"poisson","rate_per_user_tps":25,"late_tolerance_ms":10,"seed":1},` +
				`"tpcc":{"warehouses":1,"keying_thinking":false},` + engineOptions + `}`},
		{"goal search", Plan{Setup: setup, Body: search},
			Steps{Users: []int{1, 2}, Step: 30 * time.Second, Pacing: &Pacing{Rate: 10, LateTolerance: 5 * time.Millisecond, Seed: 1}}, stepping{1, 5},
			`{"engine":"sqlite","target":"/t","users":[8],"rampup_s":0,"step_s":30,"pacing":{"arrival":"fixed","rate_tps":10,"late_tolerance_ms":5,"seed":1},` +
				`"goal":{"objective":"new_order:p99\u003c=50ms","users":8,"start_tps":10,"max_tps":1000,"factor":2,"resolution":"10%","tolerance":0.05,"max_probes":20},` +
				`"tpcc":{"warehouses":1,"keying_thinking":false},` + engineOptions + `}`},
		{"backup cycles", Plan{Setup: setup, Body: Backups{Cycles: 2, Restore: true, Interval: time.Second, Users: 4}}, steps, nil,
			`{"engine":"sqlite","target":"/t","users":[1,2],"rampup_s":5,"step_s":20,"tpcc":{"warehouses":1,"keying_thinking":false},` + engineOptions +
				`,"backups":{"cycles":2,"restore":true,"interval":1000000000,"users":4}}`},
		{"noisy neighbours", Plan{Setup: setup, Body: Noisy{Tenants: 3, BackupTenants: 1, Interval: time.Second, Cycles: 1, Users: 2, Quiet: time.Minute}}, steps, nil,
			`{"engine":"sqlite","target":"/t","users":[1,2],"rampup_s":5,"step_s":20,"tpcc":{"warehouses":1,"keying_thinking":false},` + engineOptions +
				`,"noisy":{"tenants":3,"backup_tenants":1,"interval":1000000000,"cycles":1,"users":2}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.p.RunConfig(tt.steps, "tpcc", "/t", "", tt.stepping, settings{Warehouses: 1})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	if _, err := (Plan{Setup: setup}).RunConfig(steps, "tpcc", "/t", "", nil, []int{1}); err == nil {
		t.Error("a workload's settings that are no named values were recorded")
	}
}
