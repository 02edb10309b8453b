package results

import (
	"reflect"
	"testing"
)

// The fleet's CPU is the hosts' mean, its disks' IOPS and MB/s their sums,
// and its await weighted by each host's I/Os: a host measured for longer
// counts for more of it even at the same IOPS.
func TestFleetSystemOf(t *testing.T) {
	h1 := &HostSystem{Seconds: 10, CPUUserPct: 60, CPUIowaitPct: 10, CPUIdlePct: 30, DiskIOPS: 100, DiskMBPerSec: 2, DiskAwaitMS: 1, MemUsedMB: 1000}
	h2 := &HostSystem{Seconds: 30, CPUUserPct: 20, CPUIowaitPct: 30, CPUIdlePct: 50, DiskIOPS: 100, DiskMBPerSec: 4, DiskAwaitMS: 5, MemUsedMB: 3000}
	idle := &HostSystem{Seconds: 5, CPUIdlePct: 100}
	cases := []struct {
		name  string
		hosts []HostTelemetry
		want  *FleetSystem
	}{
		{"await weighted by I/Os", []HostTelemetry{{Host: "h1", System: h1}, {Host: "h2", System: h2}},
			&FleetSystem{HostSystem: HostSystem{Seconds: 10, CPUUserPct: 40, CPUIowaitPct: 20, CPUIdlePct: 40,
				DiskIOPS: 200, DiskMBPerSec: 6, DiskAwaitMS: 4, MemUsedMB: 4000}, Hosts: []string{"h1", "h2"}, LeftOut: []string{"h3: gone"}}},
		{"a host without figures is passed over", []HostTelemetry{{Host: "h1", System: h1}, {Host: "h3"}},
			&FleetSystem{HostSystem: *h1, Hosts: []string{"h1"}, LeftOut: []string{"h3: gone"}}},
		{"no I/O, no await", []HostTelemetry{{Host: "h4", System: idle}},
			&FleetSystem{HostSystem: *idle, Hosts: []string{"h4"}, LeftOut: []string{"h3: gone"}}},
		{"no host has figures", []HostTelemetry{{Host: "h3"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FleetSystemOf(c.hosts, []string{"h3: gone"})
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
