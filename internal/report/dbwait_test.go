package report

import (
	"strings"
	"testing"

	"dbio/internal/results"
)

// The database's own waits are tabled beside each device's await, with the
// sentence that says why both are shown; a run whose engine timed nothing
// has no such table.
func TestDBLatencyTableSitsBesideTheDevice(t *testing.T) {
	step := func(users int, m map[string]float64) results.Step {
		tel := &results.TelemetrySummary{Devices: []string{"vda"}, Metrics: map[string]results.TelemetryStat{}}
		for k, v := range m {
			tel.Metrics[k] = results.TelemetryStat{Mean: v, Samples: 10}
		}
		return results.Step{Users: users, Telemetry: tel}
	}
	steps := []results.Step{
		step(1, map[string]float64{"engine_db_sync_ops_per_s": 100, "engine_db_sync_wait_ms_per_s": 250, "disk_vda_w_await_ms": 0.5, "disk_vda_r_await_ms": 0.2}),
		step(8, map[string]float64{"engine_db_sync_ops_per_s": 200, "engine_db_sync_wait_ms_per_s": 4000, "disk_vda_w_await_ms": 0.6}),
	}
	tab := dbLatencyTable(steps, "db")
	if tab == nil {
		t.Fatal("no table for steps with database-seen waits")
	}
	var head []string
	for _, c := range tab.Columns {
		head = append(head, c.Group+"/"+c.Name)
	}
	if got := strings.Join(head, ","); got != "/users,database log sync/ms,database log sync/per s,device vda/read ms,device vda/write ms" {
		t.Errorf("columns %s", got)
	}
	if got := tab.Rows[1][1].Text; got != "20.0" {
		t.Errorf("8 users' mean sync wait shows %q, want 20.0 (4000 ms over 200 syncs)", got)
	}
	if !strings.Contains(tab.Caption, "before it reaches the device") {
		t.Errorf("the caption does not say why the device's latency can look fine: %s", tab.Caption)
	}
	if dbLatencyTable([]results.Step{step(1, map[string]float64{"disk_vda_w_await_ms": 1})}, "db") != nil {
		t.Error("a table for steps without database-seen waits")
	}
}
