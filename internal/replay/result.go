package replay

import (
	"time"

	"dbio/internal/results"
)

// Step is the replay as every results directory is read (dbio runs,
// report, compare): its one step, with its figures and detail, and its
// seconds for series.csv. devices are the captured devices' names;
// ended is when the replay ended.
func Step(rec Record, devices []string, ended time.Time) (results.Step, []results.SeriesRow) {
	b := &results.BlockIO{
		Devices: devices, Capture: rec.Capture, Pace: string(rec.Pace), Speed: rec.Speed,
		Requests: rec.Log.Reads + rec.Log.Writes + rec.Log.Syncs,
		SourceS:  rec.ExpectedSeconds, RuntimeS: rec.RuntimeSeconds, BehindS: rec.BehindSeconds, KeptUp: rec.KeptUp,
		Reads: opOf(rec.Reads), Writes: opOf(rec.Writes), Syncs: opOf(rec.Syncs),
		Discards: rec.Log.Discards,
	}
	step := results.Step{
		Index: 1, Name: "replay", Kind: results.KindReplay, Started: rec.Started, Ended: ended,
		MeasureS: rec.RuntimeSeconds, Status: results.StatusCompleted,
		Figures: results.BlockIOFigures(results.KindReplay, b), BlockIO: b,
	}
	// fio's seconds begin when its lanes start, after the working file
	// is laid out: they are placed back from the replay's end.
	origin := ended.Add(-time.Duration(len(rec.Seconds)) * time.Second)
	var rows []results.SeriesRow
	for i, s := range rec.Seconds {
		rows = append(rows, results.SeriesRow{
			Time: origin.Add(time.Duration(i+1) * time.Second), Step: step.Name, Phase: "measure",
			Values: results.BlockIOSecond(s.ReadIOPS, s.WriteIOPS, -1, s.ReadP99us, s.WriteP99us),
		})
	}
	return step, rows
}

func opOf(f Figures) results.BlockIOOp {
	return results.BlockIOOp{Requests: f.Requests, PerSecond: f.PerSecond, MBps: f.MBps, Latency: results.BlockIOLatency(f.Latency)}
}
