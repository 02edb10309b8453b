package report

import (
	"strings"
	"testing"

	"dbio/internal/results"
)

// TestServerHostsTable: each step's server host read through its node
// exporter is a row of CPU and disks under the step's key, the caption
// naming the exporter and disks; a step whose
// host gave no sample has no row but its warnings, and a run without such
// a host has no table.
func TestServerHostsTable(t *testing.T) {
	sys := &results.HostSystem{Seconds: 9, CPUUserPct: 40, CPUSystemPct: 10, CPUIowaitPct: 25, CPUIdlePct: 25, DiskIOPS: 1200, DiskMBPerSec: 30, DiskAwaitMS: 2.5, MemUsedMB: 900}
	read := results.Step{Name: "users-4", Users: 4, Telemetry: &results.TelemetrySummary{Hosts: []results.HostTelemetry{{Host: "db1", System: sys, Telemetry: &results.TelemetrySummary{}}}}}
	lost := results.Step{Name: "users-8", Users: 8, Telemetry: &results.TelemetrySummary{Hosts: []results.HostTelemetry{{Host: "db1",
		Telemetry: &results.TelemetrySummary{Warnings: []string{"read the node exporter failed 9 times, last: connection refused"}}}}}}
	hosts := []results.FleetHost{{Name: "db1", NodeExporter: "http://10.0.0.21:9100/metrics", Devices: []string{"nvme0n1"}}}
	local := results.Step{Name: "users-1", Users: 1, Telemetry: &results.TelemetrySummary{}}
	tests := []struct {
		name  string
		steps []results.Step
		rows  [][]string
		warns []string
	}{
		{name: "no host read", steps: []results.Step{local}},
		{name: "a host read in one step, lost in the next", steps: []results.Step{read, lost},
			rows:  [][]string{{"4", "db1", "9", "40", "10", "25", "0.0", "25", "1,200", "30.0", "2.50", "900"}},
			warns: []string{"users-8: host db1: read the node exporter failed 9 times, last: connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, warns := serverHostsTable(hosts, tt.steps, "hosts")
			if len(warns) != len(tt.warns) || (len(warns) > 0 && warns[0] != tt.warns[0]) {
				t.Errorf("warnings %q, want %q", warns, tt.warns)
			}
			if tt.rows == nil {
				if table != nil {
					t.Errorf("a table of %d rows, want none", len(table.Rows))
				}
				return
			}
			if table == nil || len(table.Rows) != len(tt.rows) {
				t.Fatalf("table %+v, want %d rows", table, len(tt.rows))
			}
			if !strings.HasSuffix(table.Caption, " db1: read at http://10.0.0.21:9100/metrics, disks nvme0n1.") {
				t.Errorf("the caption does not name the exporter and disks read: %s", table.Caption)
			}
			for i, want := range tt.rows {
				for j, c := range table.Rows[i] {
					if c.Text != want[j] {
						t.Errorf("row %d column %s: %q, want %q", i, table.Columns[j].Name, c.Text, want[j])
					}
				}
			}
		})
	}
}
