package report

import (
	"strings"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// throttleNote is why the database's own waits are shown beside the device's.
const throttleNote = "An emulated storage class (--limit) delays I/O in a block-I/O cgroup before it reaches the device, so the device's latency can look fine while the database waits: the database's own figures show what it waited for, on emulated and real storage alike."

// dbLatencyTable puts the I/O latency the database measured itself beside
// the devices' await, step by step; nil when the engine timed none.
func dbLatencyTable(steps []results.Step, id string) *table {
	kinds := analysis.DBWaitRecorded(steps)
	if len(kinds) == 0 {
		return nil
	}
	devs := deviceOrder(steps)
	var what []string
	for _, k := range kinds {
		what = append(what, k.Title+": "+k.What)
	}
	t := &table{ID: id, Title: "I/O latency as the database saw it, beside the device's",
		Caption: "Mean wait per operation over each step, as the engine timed it (PostgreSQL: track_io_timing and track_wal_io_timing; MariaDB: performance_schema's file waits), with the operations per second; then each device's mean await from /proc/diskstats. " +
			strings.Join(what, "; ") + ". " + throttleNote}
	t.Columns = []column{{Name: "users", Numeric: true}}
	for _, k := range kinds {
		g := "database " + k.Title
		t.Columns = append(t.Columns, column{Name: "ms", Numeric: true, Group: g}, column{Name: "per s", Numeric: true, Group: g})
	}
	for _, d := range devs {
		g := "device " + d
		t.Columns = append(t.Columns, column{Name: "read ms", Numeric: true, Group: g}, column{Name: "write ms", Numeric: true, Group: g})
	}
	for _, s := range steps {
		row := []cell{numCell(float64(s.Users), thousands)}
		for _, k := range kinds {
			row = append(row, numCell(analysis.DBWait(s, k.Key), millis), numCell(s.Telemetry.Mean("engine_db_"+k.Key+"_ops_per_s"), quantity))
		}
		for _, d := range devs {
			row = append(row, numCell(s.Telemetry.Mean(analysis.DiskMetric(d, "r_await_ms")), millis), numCell(s.Telemetry.Mean(analysis.DiskMetric(d, "w_await_ms")), millis))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// dbLatencyTimeline charts the database's waits and the devices' await
// second by second; nil when the engine timed none.
func (r *runView) dbLatencyTimeline(steps []results.Step, id string) *chart {
	kinds := analysis.DBWaitRecorded(steps)
	if len(kinds) == 0 {
		return nil
	}
	var lines []tlSpec
	for i, k := range kinds {
		lines = append(lines, tlSpec{name: "database " + k.Title, column: "db_" + k.Key + "_await_ms", color: i})
	}
	devs := deviceOrder(steps)
	for i, d := range devs {
		who := "device"
		if len(devs) > 1 {
			who = d
		}
		lines = append(lines,
			tlSpec{name: who + " read", column: analysis.DiskMetric(d, "r_await_ms"), color: len(kinds) + 2*i, dash: dashed},
			tlSpec{name: who + " write", column: analysis.DiskMetric(d, "w_await_ms"), color: len(kinds) + 2*i + 1, dash: dashed})
	}
	c := r.timelineChart(id, "I/O latency per second: the database's and the device's",
		"Solid: the mean wait per operation the engine timed in each second; dashed: the device's mean await. "+throttleNote,
		steps, axis{Label: "latency", Unit: "ms", Zero: true}, lines, usersLabel)
	autoLog(c)
	if !c.hasData() {
		return nil
	}
	return c
}
