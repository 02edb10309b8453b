package capture

import (
	"time"

	"dbio/internal/blocktrace"
	"dbio/internal/results"
)

// Step is the capture as every results directory is read (dbio runs,
// report, compare): its one step, whose figures and detail are the
// trace's over the span its requests took (first issue to last
// completion), as a replay's are over its own, and that span's seconds
// for series.csv, from its first busy one. started and ended are when the
// capture began and ended.
func Step(rec Record, tr blocktrace.Trace, started, ended time.Time) (results.Step, []results.SeriesRow) {
	active := tr.Active()
	sig := blocktrace.Sign(active)
	var devices []string
	for _, d := range rec.Devices {
		devices = append(devices, d.Name)
	}
	b := &results.BlockIO{
		Devices: devices, Requests: int64(rec.Requests),
		SourceS: sig.DurationSeconds, RuntimeS: sig.DurationSeconds,
		Reads: opOf(sig.Reads), Writes: opOf(sig.Writes), Syncs: opOf(sig.Flushes),
		Discards: sig.Discards.Requests, LostEvents: rec.LostEvents,
	}
	step := results.Step{
		Index: 1, Name: "capture", Kind: results.KindCapture, Started: started, Ended: ended,
		MeasureS: rec.DurationSeconds, Status: results.StatusCompleted,
		Figures: results.BlockIOFigures(results.KindCapture, b), BlockIO: b,
	}
	if rec.LostEvents > 0 {
		step.Notes = append(step.Notes, "the kernel dropped trace events: the trace misses requests")
	}
	// The seconds are the active span's, placed where it began in the
	// capture: the first request's issue after the capture's start.
	origin := started
	if len(tr.Requests) > 0 {
		origin = started.Add(tr.Requests[0].At)
	}
	secs := sig.Seconds
	first := 0
	for first < len(secs) && secs[first].ReadIOPS+secs[first].WriteIOPS+secs[first].Flushes == 0 {
		first++
	}
	var rows []results.SeriesRow
	for i := first; i < len(secs); i++ {
		s := secs[i]
		rows = append(rows, results.SeriesRow{
			Time: origin.Add(time.Duration(i+1) * time.Second), Step: step.Name, Phase: "measure",
			Values: results.BlockIOSecond(s.ReadIOPS, s.WriteIOPS, s.Flushes, s.ReadP99us, s.WriteP99us),
		})
	}
	return step, rows
}

func opOf(f blocktrace.OpFigures) results.BlockIOOp {
	return results.BlockIOOp{Requests: f.Requests, PerSecond: f.PerSecond, MBps: f.MBps, Latency: results.BlockIOLatency(f.Latency)}
}
