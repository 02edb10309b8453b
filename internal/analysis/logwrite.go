package analysis

import (
	"math"
	"slices"

	"dbio/internal/results"
)

// What a commit costs at the device, beside what the database waited for
// it. fio's log-write points (results.FioPlan.LogWrite) time single durable
// log writes on an otherwise idle device: their percentiles are those of
// single writes. The database counts its log syncs and the time they took
// as two cumulative counters (PostgreSQL's pg_stat_wal wal_sync and
// wal_sync_time, MariaDB's performance_schema log file syncs), so dbio
// knows the mean wait per sync of every second and of every step, and
// never a single sync's wait: the join puts means beside means, and says
// which statistic each figure is.

// LogWritePoint is one completed log-write point, as fio measured it.
type LogWritePoint struct {
	Name  string
	Label string
	BS    int64
	IOPS  float64
	// P50US, P99US and MeanUS are fio's completion latency of single
	// writes, in µs; NaN when fio did not report one.
	P50US, P99US, MeanUS float64
	// Writers is how many targets the point wrote to at once, one writer
	// each (more than one for a drive group or a fleet, whose percentiles
	// count all their writes together).
	Writers int
}

// LogSyncStep is one workload step's log syncs, as the database timed them.
type LogSyncStep struct {
	Name  string
	Users int
	// MeanMS is the step's mean wait per log sync: the time the syncs
	// took over their number (DBWait).
	MeanMS float64
	// PerSecondP99MS is the 99th percentile of the step's per-second means
	// (db_sync_await_ms): how high a second's mean rose, not one sync's
	// wait; NaN when no second had a sync.
	PerSecondP99MS float64
	// SyncsPerS is the step's mean number of log syncs per second.
	SyncsPerS float64
	// BeyondDeviceMS is MeanMS less the reference point's mean write: the
	// part of the mean wait the device's own time for a durable write does
	// not account for (queueing), 0 when the syncs waited no longer.
	BeyondDeviceMS float64
	// WithinDevice says the mean wait is no more than the reference
	// point's p99: the syncs cost what the device's log writes do.
	WithinDevice bool
}

// LogWrite is a run's log-write points joined to its database's log syncs.
type LogWrite struct {
	// Points are the completed log-write points, in the order they ran.
	Points []LogWritePoint
	// Reference is the point the syncs are read against: the smallest
	// block (8k, PostgreSQL's WAL page, what a lone commit writes); nil
	// without a completed log-write point.
	Reference *LogWritePoint
	// Steps are the workload steps whose database timed its log syncs,
	// in the order they ran; none without a Reference, or when the log
	// was elsewhere.
	Steps []LogSyncStep
	// LogElsewhere is the run's log target when it sits on storage the
	// reference point did not measure (--log-target on another
	// filesystem): the database's syncs are then not joined to the point.
	LogElsewhere string
}

// roleLog is target.RoleLog, the role of a run's separate WAL / redo log
// target, which analysis reads from the results without importing target.
const roleLog results.TargetRole = "log"

// Slowest is the step whose syncs waited longest on average, the one a
// sentence quotes; false without steps.
func (j LogWrite) Slowest() (LogSyncStep, bool) {
	if len(j.Steps) == 0 {
		return LogSyncStep{}, false
	}
	worst := j.Steps[0]
	for _, s := range j.Steps[1:] {
		if s.MeanMS > worst.MeanMS {
			worst = s
		}
	}
	return worst, true
}

// LogWriteJoin reads a run's fio points, workload steps and targets (as
// run.json records them): its completed log-write points, the one the
// database's syncs are read against, and every step in which the database
// timed log syncs, unless its log was on storage the point did not measure.
func LogWriteJoin(fio, steps []results.Step, targets []results.TargetInfo) LogWrite {
	var j LogWrite
	var measured [][]string
	ref := -1
	for _, s := range fio {
		if s.Fio == nil || !s.Fio.LogWrite() || !Completed(s) {
			continue
		}
		if ref < 0 || s.Fio.BS < j.Points[ref].BS {
			ref = len(j.Points)
		}
		j.Points = append(j.Points, LogWritePoint{Name: s.Name, Label: s.Fio.Label, BS: s.Fio.BS, IOPS: Value(s, results.FigureIOPS),
			P50US: Value(s, results.FigureLatP50US), P99US: Value(s, results.FigureLatP99US), MeanUS: Value(s, results.FigureLatMeanUS),
			Writers: max(1, len(s.Fio.Targets))})
		measured = append(measured, s.Fio.Targets)
	}
	if ref < 0 {
		return j
	}
	j.Reference = &j.Points[ref]
	if j.LogElsewhere = logElsewhere(measured[ref], targets); j.LogElsewhere != "" {
		return j
	}
	sync := string(results.DBWaitSync)
	ops, _ := results.DBWaitSync.Rates()
	for _, s := range steps {
		mean := DBWait(s, sync)
		if math.IsNaN(mean) {
			continue
		}
		j.Steps = append(j.Steps, LogSyncStep{Name: s.Name, Users: s.Users, MeanMS: mean,
			PerSecondP99MS: s.Telemetry.P99(results.DBWaitSync.Await()), SyncsPerS: s.Telemetry.Mean(ops),
			BeyondDeviceMS: max(0, mean-j.Reference.MeanUS/1000), WithinDevice: mean <= j.Reference.P99US/1000})
	}
	return j
}

// logElsewhere is the path of the run's log target when it is neither one
// of the measured paths nor on a filesystem one of them is on; "" for a
// run without a separate log target.
func logElsewhere(measured []string, targets []results.TargetInfo) string {
	devices := map[string]bool{}
	for _, t := range targets {
		if slices.Contains(measured, t.Path) && t.Storage.DevNumber != "" {
			devices[t.Storage.DevNumber] = true
		}
	}
	for _, t := range targets {
		if t.Role == roleLog && !slices.Contains(measured, t.Path) && !devices[t.Storage.DevNumber] {
			return t.Path
		}
	}
	return ""
}
