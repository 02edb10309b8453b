package report

import (
	"strings"
	"testing"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// fleetStep is a completed fleet point with the given hosts' CPU and disks.
func fleetStep(name string, fleet *results.FleetSystem, hosts ...results.FioHost) results.Step {
	return results.Step{Name: name, Status: results.StatusCompleted, Figures: []results.Figure{{Name: results.FigureIOPS, Value: 1000}},
		Fio: &results.FioPoint{Fleet: &results.FioFleet{Seconds: 10, Hosts: hosts, System: fleet}}}
}

func TestFleetSystemTable(t *testing.T) {
	h1 := results.HostSystem{Seconds: 10, CPUUserPct: 20, CPUSystemPct: 10, CPUIowaitPct: 30, CPUIdlePct: 40, DiskIOPS: 900, DiskMBPerSec: 3.6, DiskAwaitMS: 1, MemUsedMB: 1000}
	h2 := results.HostSystem{Seconds: 9, CPUUserPct: 40, CPUSystemPct: 10, CPUIowaitPct: 10, CPUIdlePct: 40, DiskIOPS: 100, DiskMBPerSec: 0.4, DiskAwaitMS: 11, MemUsedMB: 2000}
	fleet := &results.FleetSystem{HostSystem: results.HostSystem{Seconds: 9, CPUUserPct: 30, CPUSystemPct: 10, CPUIowaitPct: 20, CPUIdlePct: 40, DiskIOPS: 1000, DiskMBPerSec: 4, DiskAwaitMS: 2, MemUsedMB: 3000},
		Hosts: []string{"h1", "h2"}, LeftOut: []string{"h3: node exporter unreachable: connection refused"}}
	steps := []results.Step{
		fleetStep("4k-randread", fleet, results.FioHost{HostTelemetry: results.HostTelemetry{Host: "h1", System: &h1}}, results.FioHost{HostTelemetry: results.HostTelemetry{Host: "h2", System: &h2}}, results.FioHost{HostTelemetry: results.HostTelemetry{Host: "h3"}}),
		fleetStep("4k-randwrite", fleet, results.FioHost{HostTelemetry: results.HostTelemetry{Host: "h1", System: &h1}}, results.FioHost{HostTelemetry: results.HostTelemetry{Host: "h2", System: &h2}}, results.FioHost{HostTelemetry: results.HostTelemetry{Host: "h3"}}),
	}
	tb := fleetSystemTable(steps, "t")
	if tb == nil || len(tb.Rows) != 6 {
		t.Fatalf("table %+v, want a fleet row and two host rows per point", tb)
	}
	got := []string{}
	for _, c := range tb.Rows[0] {
		got = append(got, c.Text)
	}
	want := "4k-randread|fleet (2 of 3 hosts)|9|30|10|20|0.0|40|1,000|4.00|2.00|3,000"
	if strings.Join(got, "|") != want {
		t.Errorf("fleet row %s, want %s", strings.Join(got, "|"), want)
	}
	// The left-out host is named once, whatever the number of points.
	if strings.Count(tb.Caption, "h3: node exporter unreachable") != 1 || !strings.Contains(tb.Caption, "mean of the hosts' shares") {
		t.Errorf("caption %q", tb.Caption)
	}
	if fleetSystemTable([]results.Step{fleetStep("x", nil)}, "t") != nil {
		t.Error("a table without any host's telemetry")
	}
}

// A tenants run's steps: the fleet's row first, marked, then each host
// with figures; a host without any is left out of the fleet's row and
// named in the caption, and memory no host's dbio read shows as "-".
func TestTenantHostsTable(t *testing.T) {
	h1 := results.HostSystem{Seconds: 8, CPUUserPct: 60, CPUSystemPct: 20, CPUIowaitPct: 5, CPUIdlePct: 15, DiskIOPS: 1200, DiskMBPerSec: 9.5, DiskAwaitMS: 0.25}
	fleet := &results.TenantFleet{Seconds: 8, Hosts: []results.TenantHostStep{{Host: "h1"}, {Host: "h2"}},
		System: &results.FleetSystem{HostSystem: h1, Hosts: []string{"h1"}, LeftOut: []string{"h2: no telemetry recorded"}}}
	step := results.Step{Name: "users-1", Kind: "tpcc", Users: 2, Status: results.StatusCompleted, Fleet: fleet,
		Telemetry: &results.TelemetrySummary{Hosts: []results.HostTelemetry{{Host: "h1", System: &h1}, {Host: "h2"}}}}
	tb := tenantHostsTable([]results.Step{step}, "t")
	if tb == nil || len(tb.Rows) != 2 {
		t.Fatalf("table %+v, want the fleet's row and h1's", tb)
	}
	var got []string
	for _, row := range tb.Rows {
		var texts []string
		for _, c := range row {
			texts = append(texts, c.Text)
		}
		got = append(got, strings.Join(texts, "|"))
	}
	want := []string{"2|fleet (1 of 2 hosts)|8|60|20|5.0|0.0|15|1,200|9.50|0.250|-", "2|h1|8|60|20|5.0|0.0|15|1,200|9.50|0.250|-"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || tb.Rows[0][1].Class != "key" {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(tb.Caption, "weighted by each one's I/Os") || !strings.Contains(tb.Caption, "Not in the fleet's row: h2: no telemetry recorded.") {
		t.Errorf("caption %q", tb.Caption)
	}
	step.Telemetry = nil
	if tenantHostsTable([]results.Step{step}, "t") != nil {
		t.Error("a table without any host's telemetry")
	}
}

func TestFleetHostsTable(t *testing.T) {
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	run := results.Run{Hosts: []results.FleetHost{
		{Name: "h1", Destination: "admin@10.0.0.11", Status: results.HostOK, NodeExporter: "http://10.0.0.11:9100/metrics", Devices: []string{"nvme0n1"},
			Clock: []results.ClockOffset{{At: "start", Measured: now, OffsetMS: 0.4, RoundTripMS: 1.2}, {At: "end", Measured: now, OffsetMS: 0.5, RoundTripMS: 1.0}}},
		{Name: "h2", Destination: "h2", Status: results.HostOK,
			Clock: []results.ClockOffset{{At: "start", Measured: now, OffsetMS: -120, RoundTripMS: 2}, {At: "end", Measured: now, OffsetMS: 51, RoundTripMS: 4}}},
		{Name: "h3", Destination: "h3", Status: results.HostFailed, Error: "its fio server ended during point 4k-randread", FailedStep: "4k-randread"},
	}}
	tb, findings := fleetHostsTable(run, "t")
	if tb == nil || len(tb.Rows) != 3 {
		t.Fatalf("table %+v", tb)
	}
	row := func(i int) string {
		var s []string
		for _, c := range tb.Rows[i] {
			s = append(s, c.Text)
		}
		return strings.Join(s, "|")
	}
	for i, want := range []string{
		"h1|admin@10.0.0.11|ok|+0.400|+0.500|1.20|http://10.0.0.11:9100/metrics (nvme0n1)",
		"h2|h2|ok|-120|+51.0|4.00|",
		"h3|h3|failed during 4k-randread: its fio server ended during point 4k-randread|-|-|-|",
	} {
		if got := row(i); got != want {
			t.Errorf("row %d: %s, want %s", i, got, want)
		}
	}
	// -120 ms is beyond 50 ms; +51 ms is not, once half the round trip is allowed for.
	if tb.Rows[1][3].Class != "worse" || tb.Rows[1][4].Class == "worse" {
		t.Errorf("marks: start %q, end %q", tb.Rows[1][3].Class, tb.Rows[1][4].Class)
	}
	all := strings.Join(findings, "\n")
	if len(findings) != 2 || !strings.Contains(all, "Host h2's clock was -120 ms off") || !strings.Contains(all, "Host h3 failed during 4k-randread") {
		t.Errorf("findings %q", findings)
	}
	if tb, _ := fleetHostsTable(results.Run{}, "t"); tb != nil {
		t.Error("a hosts table for a run without hosts")
	}
}

// A fleet timeline's note says by which clock each host's seconds are
// placed: the offsets recorded at the start, and offset 0 for a host
// without one (a run from before dbio measured the clocks of tenants
// hosts records none at all).
func TestFleetNoteSaysWhichClock(t *testing.T) {
	hosts := []analysis.FleetLine{{Name: "h1"}, {Name: "h2"}}
	cases := []struct {
		name      string
		offsets   map[string]float64
		want, not []string
	}{
		{"none recorded", nil,
			[]string{"recorded no host's clock offset", "placed by its own clock, as if its offset were 0"},
			[]string{"offset measured at the start"}},
		{"all recorded", map[string]float64{"h1": 0.4, "h2": 20000},
			[]string{"offset measured at the start of the run (h1 +0.400, h2 +20,000 ms)"},
			[]string{"own clock", "too small"}},
		{"one host's clock unread", map[string]float64{"h1": -3},
			[]string{"(h1 -3.00 ms), too small to move a line visibly", "No offset was recorded for h2: such a host's seconds are placed by its own clock, as if its offset were 0"},
			nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			note := fleetNote(analysis.FleetTimeline{Hosts: hosts, OffsetsMS: c.offsets})
			for _, w := range c.want {
				if !strings.Contains(note, w) {
					t.Errorf("note %q\ndoes not say %q", note, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(note, n) {
					t.Errorf("note %q\nsays %q", note, n)
				}
			}
		})
	}
}
