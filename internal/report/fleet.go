package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// A fleet run's hosts: how each fared and how far its clock was from the
// coordinator's, and each point's CPU, disks and memory per host and for
// the fleet, read from the hosts' node exporters.

// clockWarnMS is the clock offset above which a host's row is marked: the
// threshold the run warns at (fleet.ClockWarnOffset), kept here as a
// figure because the report reads results alone.
const clockWarnMS = 50

// fleetHostsTable lists a fleet run's hosts; nil for a run without hosts.
func fleetHostsTable(run results.Run, id string) (*table, []string) {
	if len(run.Hosts) == 0 {
		return nil, nil
	}
	t := &table{ID: id, Title: "Hosts",
		Caption: fmt.Sprintf("Each host's clock against this machine's at the start and the end of the run: the host's time less the middle of the shortest of several round trips over ssh (known to within half that round trip). "+
			"The offset at the start is taken off each host's logged seconds before the fleet's common window is drawn, so the hosts' seconds are paired on this machine's clock; an offset beyond %d ms is marked: a clock that far off is not synchronized, and may drift during the run by more than the start's offset corrects. A failed host took no part after it failed.", clockWarnMS)}
	t.Columns = []column{{Name: "host"}, {Name: "destination"}, {Name: "status", Wrap: true},
		{Name: "start", Numeric: true, Group: "clock offset (ms)"}, {Name: "end", Numeric: true, Group: "clock offset (ms)"},
		{Name: "round trip (ms)", Numeric: true}, {Name: "telemetry", Wrap: true}}
	var findings []string
	for _, h := range run.Hosts {
		status := textCell(h.Status)
		if h.Status == results.HostFailed {
			where := "before the first point"
			if h.FailedStep != "" {
				where = "during " + h.FailedStep
			}
			text := "failed " + where + ": " + h.Error
			status = cell{Text: text, Raw: text, Class: "worse"}
			findings = append(findings, fmt.Sprintf("Host %s failed %s; the fleet's figures from then on are over the other hosts.", h.Name, where))
		}
		offset := map[string]cell{"start": textCell("-"), "end": textCell("-")}
		rtt := math.NaN()
		for _, c := range h.Clock {
			cl := numCell(c.OffsetMS, signedMillis)
			if math.Abs(c.OffsetMS)-c.RoundTripMS/2 > clockWarnMS {
				cl.Class = "worse"
				findings = append(findings, fmt.Sprintf("Host %s's clock was %s ms off this machine's at the %s of the run: its seconds may be paired with the others' wrongly in the fleet's window.", h.Name, signedMillis(c.OffsetMS), c.At))
			}
			offset[c.At] = cl
			rtt = math.Max(nanZero(rtt), c.RoundTripMS)
		}
		tel := h.NodeExporter
		if h.Telemetry != "" {
			tel = h.Telemetry
		}
		if len(h.Devices) > 0 {
			tel += " (" + strings.Join(h.Devices, ", ") + ")"
		}
		t.Rows = append(t.Rows, []cell{textCell(h.Name), textCell(h.Destination), status, offset["start"], offset["end"], numCell(rtt, millis), textCell(tel)})
	}
	return t, findings
}

func nanZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// signedMillis is an offset in ms with its sign.
func signedMillis(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	if v > 0 {
		return "+" + millis(v)
	}
	return millis(v)
}

// fleetSystemTable puts every fleet point's CPU, disks and memory, the
// fleet's and each host's, side by side; nil when no host's node exporter
// was read.
func fleetSystemTable(points []results.Step, id string) *table {
	t := &table{ID: id, Title: "CPU and disks per host",
		Caption: "Read from each host's node exporter once a second, over the seconds of the point's common window. CPU is in % of the host's own CPUs; the fleet's CPU is the mean of the hosts' shares (each host counts once, whatever its number of CPUs). " +
			"Disk figures are the block devices behind the host's targets: the fleet's IOPS, MB/s and memory are the hosts' sums, its disk await the hosts' awaits weighted by the I/Os each did over the point."}
	t.Columns = hostSystemColumns(column{Name: "point"})
	var notes []string
	for _, p := range points {
		f := p.Fio.Fleet
		if f == nil || f.System == nil || !analysis.Completed(p) {
			continue
		}
		t.Rows = append(t.Rows, fleetSystemRow(textCell(p.Name), *f.System, len(f.Hosts)))
		for _, h := range f.Hosts {
			if h.System != nil {
				t.Rows = append(t.Rows, hostSystemRow("", h.Host, *h.System))
			}
		}
		for _, l := range f.System.LeftOut {
			if !slices.Contains(notes, l) {
				notes = append(notes, l)
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	if len(notes) > 0 {
		t.Caption += " Not in the fleet's row: " + strings.Join(notes, "; ") + "."
	}
	return t
}

// hostSystemColumns are the columns of a table of hosts' CPU, disks and
// memory, each row of a step (called first) and a host.
func hostSystemColumns(first column) []column {
	return []column{first, {Name: "host"}, {Name: "seconds", Numeric: true},
		{Name: "user", Numeric: true, Group: "CPU (%)"}, {Name: "system", Numeric: true, Group: "CPU (%)"}, {Name: "iowait", Numeric: true, Group: "CPU (%)"},
		{Name: "steal", Numeric: true, Group: "CPU (%)"}, {Name: "idle", Numeric: true, Group: "CPU (%)"},
		{Name: "IOPS", Numeric: true, Group: "disks"}, {Name: "MB/s", Numeric: true, Group: "disks"}, {Name: "await (ms)", Numeric: true, Group: "disks"},
		{Name: "memory used (MB)", Numeric: true}}
}

// hostSystemRow is one host's row of such a table.
func hostSystemRow(step, host string, s results.HostSystem) []cell {
	await := numCell(s.DiskAwaitMS, millis)
	if s.DiskIOPS == 0 {
		await = textCell("-")
	}
	// A host in use always has memory in use: none means it was not read
	// (a host's own dbio does not sample it).
	mem := numCell(s.MemUsedMB, thousands)
	if s.MemUsedMB == 0 {
		mem = textCell("-")
	}
	return []cell{textCell(step), textCell(host), numCell(float64(s.Seconds), thousands),
		numCell(s.CPUUserPct, percent), numCell(s.CPUSystemPct, percent), numCell(s.CPUIowaitPct, percent), numCell(s.CPUStealPct, percent), numCell(s.CPUIdlePct, percent),
		numCell(s.DiskIOPS, thousands), numCell(s.DiskMBPerSec, quantity), await, mem}
}

// fleetSystemRow is the fleet's row of such a table, marked as the key
// row; of is how many hosts the fleet has, named when fewer had figures.
func fleetSystemRow(step cell, f results.FleetSystem, of int) []cell {
	name := "fleet"
	if len(f.Hosts) < of {
		name = fmt.Sprintf("fleet (%d of %d hosts)", len(f.Hosts), of)
	}
	row := hostSystemRow("", name, f.HostSystem)
	row[0] = step
	for i := range row {
		row[i].Class = "key"
	}
	return row
}

// stepHostsRows are a step's rows of the hosts in its telemetry.hosts that
// have figures, keyed by key.
func stepHostsRows(key stepKey, s results.Step) [][]cell {
	var rows [][]cell
	for _, h := range s.Telemetry.Hosts {
		if h.System != nil {
			row := hostSystemRow("", h.Host, *h.System)
			row[0] = key.cell(s)
			rows = append(rows, row)
		}
	}
	return rows
}

// stepHostsTable is an empty table of hosts' CPU, disks and memory per
// step, its first column the steps' key (users or rate), which its rows
// are keyed by.
func stepHostsTable(id, caption string, steps []results.Step) (*table, stepKey) {
	key := keyOf(steps)
	t := &table{ID: id, Title: "CPU and disks per host", Caption: caption,
		Columns: hostSystemColumns(column{Name: key.column, Numeric: true})}
	return t, key
}

// serverHostsTable puts each step's CPU, disks and memory of the hosts read
// through their node exporters beside this machine's (the database host of
// a server driven from here by its DSN), its caption naming each host's
// exporter and disks as run.json records them (hosts); nil when no step
// has any.
func serverHostsTable(hosts []results.FleetHost, steps []results.Step, id string) (*table, []string) {
	t, key := stepHostsTable(id, "The server's host, which runs no dbio, read from its node exporter once a second over each step's measured seconds (the table above is this machine's, where the users run). "+
		"CPU is in % of the host's own CPUs; disk figures are the block devices behind the target on that host: IOPS and MB/s summed, await each device's per-second await averaged over the step (as iostat's at one second, not total wait over total I/Os), the devices weighted by their IOPS.", steps)
	var warns []string
	for _, s := range steps {
		if s.Telemetry == nil {
			continue
		}
		t.Rows = append(t.Rows, stepHostsRows(key, s)...)
		for _, h := range s.Telemetry.Hosts {
			if h.Telemetry != nil {
				for _, w := range h.Telemetry.Warnings {
					warns = append(warns, s.Name+": host "+h.Host+": "+w)
				}
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil, warns
	}
	for _, h := range hosts {
		if h.NodeExporter != "" {
			t.Caption += fmt.Sprintf(" %s: read at %s", h.Name, h.NodeExporter)
			if len(h.Devices) > 0 {
				t.Caption += ", disks " + strings.Join(h.Devices, ", ")
			}
			t.Caption += "."
		}
	}
	return t, warns
}

// tenantHostsTable puts each step of a run of tenants on several hosts
// beside its hosts' CPU, disks and memory, as each host's dbio sampled its
// own machine over its measured step, the fleet's row first; nil when no
// host recorded telemetry.
func tenantHostsTable(steps []results.Step, id string) *table {
	t, key := stepHostsTable(id, "Each host's machine as its own dbio sampled it once a second over its measured step. CPU is in % of the host's own CPUs; disk figures are the block devices behind the host's target: IOPS and MB/s summed, await each device's per-second await averaged over the step (as iostat's at one second, not total wait over total I/Os), the devices weighted by their IOPS. "+
		"The fleet's row: CPU shares the mean of the hosts' (each host counts once, whatever its number of CPUs), disk IOPS, MB/s and memory the hosts' sums, disk await the hosts' weighted by each one's I/Os over its step.", steps)
	var notes []string
	for _, s := range steps {
		if s.Telemetry == nil {
			continue
		}
		if fleet := s.Fleet; fleet != nil && fleet.System != nil {
			t.Rows = append(t.Rows, fleetSystemRow(key.cell(s), *fleet.System, len(fleet.Hosts)))
			for _, l := range fleet.System.LeftOut {
				if !slices.Contains(notes, l) {
					notes = append(notes, l)
				}
			}
		}
		t.Rows = append(t.Rows, stepHostsRows(key, s)...)
	}
	if len(t.Rows) == 0 {
		return nil
	}
	if len(notes) > 0 {
		t.Caption += " Not in the fleet's row: " + strings.Join(notes, "; ") + "."
	}
	return t
}
