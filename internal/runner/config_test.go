package runner

import (
	"encoding/json"
	"testing"
	"time"

	"dbio/internal/arrival"
	"dbio/internal/goal"
)

// TestConfigKeepsItsKeyOrder: run.json's config reads the same whichever
// workload wrote it: placement and users, any stepping beside the users,
// timing, the workload's settings under its name, then the engine.
func TestConfigKeepsItsKeyOrder(t *testing.T) {
	type stepping struct {
		Start int `json:"start"`
		Add   int `json:"add"`
	}
	tests := []struct {
		name string
		c    Config
		want string
	}{
		{"tpcc", Config{Engine: "sqlite", Target: "/t", Users: []int{1, 2}, RampUpS: 5, StepS: 20, Workload: "tpcc",
			Settings: map[string]int{"warehouses": 1}, EngineOptions: EngineConfig{Database: "dbio_tpcc", Transport: "socket"},
			Backups: &Backups{Cycles: 2}},
			`{"engine":"sqlite","target":"/t","users":[1,2],"rampup_s":5,"step_s":20,"tpcc":{"warehouses":1},` +
				`"engine_options":{"external":false,"database":"dbio_tpcc","transport":"socket"},` +
				`"backups":{"cycles":2,"restore":false,"interval":0,"users":0}}`},
		{"as3ap steps its users", Config{Engine: "mariadb", Users: []int{1, 6}, Stepping: stepping{1, 5}, StepS: 60, Workload: "as3ap",
			Settings: map[string]int{"rows": 1000}},
			`{"engine":"mariadb","users":[1,6],"start":1,"add":5,"rampup_s":0,"step_s":60,"as3ap":{"rows":1000},` +
				`"engine_options":{"external":false,"database":"","transport":""}}`},
		{"open loop, after the timing", Config{Engine: "sqlite", Users: []int{4}, StepS: 10, Workload: "tpcc", Settings: map[string]int{"warehouses": 1},
			Pacing: Pacing{Process: arrival.Poisson, Rate: 25, PerUser: true, Seed: 1}.Record()},
			`{"engine":"sqlite","users":[4],"rampup_s":0,"step_s":10,"pacing":{"arrival":"poisson","rate_per_user_tps":25,"late_tolerance_ms":10,"seed":1},` +
				`"tpcc":{"warehouses":1},"engine_options":{"external":false,"database":"","transport":""}}`},
		{"goal search", Config{Engine: "postgres", Users: []int{8}, StepS: 30, Workload: "tpcc", Settings: map[string]int{"warehouses": 1},
			Pacing: Pacing{Rate: 10, LateTolerance: 5 * time.Millisecond, Seed: 1}.Record(),
			Goal: Goal{Users: 8, Search: goal.Search{Objective: goal.Objective{Tx: "new_order", Percentile: 99, Limit: 50 * time.Millisecond},
				Start: 10, Max: 1000, Resolution: goal.Resolution{Rel: 0.1}, MaxProbes: 20}}.Record()},
			`{"engine":"postgres","users":[8],"rampup_s":0,"step_s":30,"pacing":{"arrival":"fixed","rate_tps":10,"late_tolerance_ms":5,"seed":1},` +
				`"goal":{"objective":"new_order:p99\u003c=50ms","users":8,"start_tps":10,"max_tps":1000,"factor":2,"resolution":"10%","tolerance":0.05,"max_probes":20},` +
				`"tpcc":{"warehouses":1},"engine_options":{"external":false,"database":"","transport":""}}`},
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
		})
	}
}
