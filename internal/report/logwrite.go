package report

import (
	"fmt"
	"math"
	"strings"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// logWriteWhat says what a log-write point is, for captions and notes.
const logWriteWhat = "sequential writes from one job, one at a time, each opened with O_DSYNC (fio's sync=dsync, with O_DIRECT where the target takes it): a write returns once it is stable, as a database's log writer makes a commit durable and as pg_test_fsync's open_datasync test writes"

// logWriteSection lays out what a commit costs at the device: the
// log-write points, and, when the run's database timed its log syncs, those
// syncs against the smallest point (analysis.LogWriteJoin), with the
// sentences that join them for the summary. Nil without a completed
// log-write point.
func logWriteSection(r *runView, id func(string) string) (*section, []string) {
	targets := r.Run.Environment.Targets
	var joins []analysis.LogWrite
	var kinds []string
	for _, w := range r.Workloads {
		joins = append(joins, analysis.LogWriteJoin(r.Fio, w.Steps, targets))
		kinds = append(kinds, w.Kind)
	}
	device := analysis.LogWriteJoin(r.Fio, nil, targets)
	if device.Reference == nil {
		return nil, nil
	}
	sec := &section{ID: id("log-write"), Title: "What a commit costs at the device"}
	multi := len(fioLabels(r.Fio)) > 1
	sec.add(logWritePointsTable(device, multi, id("log-write-points")))
	findings := logWritePointFindings(device, multi)
	joined := false
	for i, j := range joins {
		if len(j.Steps) == 0 {
			continue
		}
		joined = true
		title := r.title(kinds[i])
		sec.add(logSyncTable(j, title, id("log-sync-"+strings.ToLower(kinds[i]))))
		if s := logSyncSentence(j, title); s != "" {
			sec.add(&paragraph{Text: s, Class: "verdict"})
			findings = append(findings, s)
		}
	}
	switch {
	case joined || len(r.Workloads) == 0:
	case device.LogElsewhere != "":
		sec.add(&paragraph{Class: "note", Text: "The database's log was on " + device.LogElsewhere + ", storage the fio pass did not measure: its log syncs are not set against these points."})
	default:
		sec.add(&paragraph{Class: "note", Text: "The database timed no log syncs in this run (SQLite does not time its own; PostgreSQL needs track_wal_io_timing, MariaDB performance_schema's file instruments), so the device's figures stand alone."})
	}
	return sec, findings
}

// logWritePointsTable lists the log-write points: a commit's write at the
// device, read by its latency percentiles.
func logWritePointsTable(j analysis.LogWrite, multi bool, id string) *table {
	t := &table{ID: id, Title: "Log-write points",
		Caption: "Each point is " + logWriteWhat + ". Latency is fio's completion latency of single writes, in ms: p50 is the typical commit's write, p99 the slow one."}
	t.Columns = []column{{Name: "point"}}
	if multi {
		t.Columns = append(t.Columns, column{Name: "target"})
	}
	t.Columns = append(t.Columns, column{Name: "block", Numeric: true}, column{Name: "writes per s", Numeric: true},
		column{Name: "p50", Numeric: true, Group: "latency (ms)"}, column{Name: "p99", Numeric: true, Group: "latency (ms)"},
		column{Name: "mean", Numeric: true, Group: "latency (ms)"})
	for _, p := range j.Points {
		row := []cell{textCell(p.Name)}
		if multi {
			row = append(row, textCell(p.Label))
		}
		p50, p99 := numCell(p.P50US/1000, millis), numCell(p.P99US/1000, millis)
		p50.Class, p99.Class = "key", "key"
		row = append(row, cell{Text: blockSize(p.BS), Raw: raw(float64(p.BS))}, numCell(p.IOPS, thousands), p50, p99, numCell(p.MeanUS/1000, millis))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// logWritePointFindings say each target's log-write figures in a line:
// "A commit's log write costs the device 0.120 ms at p50 and 0.400 ms at
// p99 with 8k blocks, 0.160 ms and 0.520 ms with 16k (sequential, one at a
// time, O_DSYNC)."
func logWritePointFindings(j analysis.LogWrite, multi bool) []string {
	var labels []string
	byLabel, writers := map[string][]string{}, map[string]int{}
	for _, p := range j.Points {
		writers[p.Label] = max(writers[p.Label], p.Writers)
		if _, ok := byLabel[p.Label]; !ok {
			labels = append(labels, p.Label)
		}
		figs := fmt.Sprintf("%s ms and %s ms with %s", millis(p.P50US/1000), millis(p.P99US/1000), blockSize(p.BS))
		if len(byLabel[p.Label]) == 0 {
			figs = fmt.Sprintf("%s ms at p50 and %s ms at p99 with %s blocks", millis(p.P50US/1000), millis(p.P99US/1000), blockSize(p.BS))
		}
		byLabel[p.Label] = append(byLabel[p.Label], figs)
	}
	var out []string
	for _, l := range labels {
		where := ""
		if multi {
			where = " on " + l
		}
		device, how := "the device", "sequential, one at a time, O_DSYNC"
		if n := writers[l]; n > 1 {
			device, how = "the devices", how+fmt.Sprintf(", a writer on each of %d targets at once, their writes counted together", n)
		}
		out = append(out, fmt.Sprintf("A commit's log write costs %s%s %s (%s).", device, where, strings.Join(byLabel[l], ", "), how))
	}
	return out
}

// logSyncTable puts the database's log syncs, step by step, beside the
// reference log-write point.
func logSyncTable(j analysis.LogWrite, title, id string) *table {
	ref := j.Reference
	t := &table{ID: id, Title: "Log syncs as " + title + "'s database waited for them, against the " + blockSize(ref.BS) + " log-write point",
		Caption: fmt.Sprintf("The database counts its log syncs and the time they took (PostgreSQL: pg_stat_wal's wal_sync and wal_sync_time with track_wal_io_timing; MariaDB: performance_schema's redo log file syncs), so dbio has mean waits, never a single sync's: the step's mean wait per sync, "+
			"and the 99th percentile of its per-second means (how high a second's mean rose, not a p99 of syncs). The device's %s log-write point (%s) gives %s ms at p50, %s ms at p99 and %s ms on average for single writes; "+
			"what the mean wait exceeds that average by is time the device's own durable write does not account for: queueing (behind other I/O, a storage cap, other commits).",
			blockSize(ref.BS), ref.Name, millis(ref.P50US/1000), millis(ref.P99US/1000), millis(ref.MeanUS/1000))}
	t.Columns = []column{{Name: "users", Numeric: true}, {Name: "syncs per s", Numeric: true},
		{Name: "mean per sync", Numeric: true, Group: "database's wait (ms)"}, {Name: "p99 of per-second means", Numeric: true, Group: "database's wait (ms)"},
		{Name: "beyond the device's mean", Numeric: true, Group: "database's wait (ms)"}}
	for _, s := range j.Steps {
		mean := numCell(s.MeanMS, millis)
		mean.Class = "key"
		t.Rows = append(t.Rows, []cell{numCell(float64(s.Users), thousands), numCell(s.SyncsPerS, quantity), mean,
			numCell(s.PerSecondP99MS, millis), numCell(s.BeyondDeviceMS, millis)})
	}
	return t
}

// logSyncSentence joins the step whose syncs waited longest to the
// reference point, each figure named by its statistic: "TPC-C at 4 users:
// the database waited 1.90 ms per log sync (mean; its per-second means
// reach 2.40 ms at p99); the device's 8k log-write point gives 0.400 ms at
// p99 (0.120 ms at p50): the rest is queueing, 1.75 ms of the mean wait
// beyond the point's own mean of 0.150 ms."
func logSyncSentence(j analysis.LogWrite, title string) string {
	s, ok := j.Slowest()
	if !ok {
		return ""
	}
	ref := j.Reference
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %s: the database waited %s ms per log sync (mean", title, plural(s.Users, "user", "users"), millis(s.MeanMS))
	if !math.IsNaN(s.PerSecondP99MS) {
		fmt.Fprintf(&b, "; its per-second means reach %s ms at p99", millis(s.PerSecondP99MS))
	}
	fmt.Fprintf(&b, "); the device's %s log-write point gives %s ms at p99 (%s ms at p50)", blockSize(ref.BS), millis(ref.P99US/1000), millis(ref.P50US/1000))
	if s.WithinDevice {
		b.WriteString(": the syncs waited no longer than the device's own log writes take, so there is no queueing to speak of.")
	} else {
		fmt.Fprintf(&b, ": the rest is queueing, %s ms of the mean wait beyond the point's own mean of %s ms.", millis(s.BeyondDeviceMS), millis(ref.MeanUS/1000))
	}
	return b.String()
}

// envelopePoints are the points without the log-write ones, which have a
// section of their own: the four-corners table and the charts of
// throughput against block size and latency read the device's envelope.
func envelopePoints(points []results.Step) []results.Step {
	var out []results.Step
	for _, p := range points {
		if !p.Fio.LogWrite() {
			out = append(out, p)
		}
	}
	return out
}
