package results

// The kinds of the step a capture's and a replay's results directory hold:
// one step each, whose detail is a BlockIO.
const (
	KindCapture = "capture"
	KindReplay  = "replay"
)

// IsBlockIO says whether a step of kind is a capture's or a replay's.
func IsBlockIO(kind string) bool { return kind == KindCapture || kind == KindReplay }

// BlockIO is the detail of a capture's or a replay's step: what the
// requests were and how the storage served them, by direction. A capture's
// rates are over the span its requests took (first issue to last
// completion), as a replay's are over its own, so that the two are read
// alike; capture.json and replay.json keep the rest.
type BlockIO struct {
	// Devices are the captured devices: a capture's own, or those of the
	// capture a replay played.
	Devices []string `json:"devices,omitempty"`
	// Capture is the results directory of the capture a replay played, as given.
	Capture string `json:"capture,omitempty"`
	// Pace is a replay's: "recorded" (each request at its captured time)
	// or "max" (as fast as order and concurrency allow); Speed scales the
	// recorded pace.
	Pace  string  `json:"pace,omitempty"`
	Speed float64 `json:"speed,omitempty"`
	// Requests are the reads, writes, flushes and discards the trace holds.
	Requests int64 `json:"requests"`
	// SourceS is how long the source took for the requests (at the
	// replay's speed), RuntimeS how long these took; BehindS how much
	// later a replay ended than the source (negative: sooner).
	SourceS  float64 `json:"source_s"`
	RuntimeS float64 `json:"runtime_s"`
	BehindS  float64 `json:"behind_s,omitempty"`
	// KeptUp says a replay at the recorded pace ended within 5 % of the
	// source's time (at least 100 ms).
	KeptUp bool      `json:"kept_up,omitempty"`
	Reads  BlockIOOp `json:"reads"`
	Writes BlockIOOp `json:"writes"`
	// Syncs are a capture's flushes, and the fdatasyncs a replay made of
	// the flushes and FUA writes.
	Syncs BlockIOOp `json:"syncs"`
	// Discards are a capture's; a replay leaves them out.
	Discards int64 `json:"discards,omitempty"`
	// LostEvents are trace events the kernel dropped during a capture.
	LostEvents int64 `json:"lost_events,omitempty"`
}

// BlockIOOp is one direction's requests, rate and latency (µs): a
// capture's from issue to completion at the device, a replay's as fio
// measured them, from submission to completion.
type BlockIOOp struct {
	Requests  int64          `json:"requests"`
	PerSecond float64        `json:"per_s"`
	MBps      float64        `json:"mb_per_s,omitempty"`
	Latency   BlockIOLatency `json:"latency_us"`
}

// BlockIOLatency is a direction's latency percentiles in µs.
type BlockIOLatency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
}

// BlockIOFigures are the figures of a capture's or a replay's step (kind),
// drawn from its detail: the rates, the latencies by direction where the
// direction had requests, and a replay's time behind the recorded pace or
// its pace against the source.
func BlockIOFigures(kind string, b *BlockIO) []Figure {
	figs := []Figure{
		FigureReadIOPS.With(Round6(b.Reads.PerSecond)),
		FigureWriteIOPS.With(Round6(b.Writes.PerSecond)),
		FigureSyncsPerSec.With(Round6(b.Syncs.PerSecond)),
	}
	for _, d := range []struct {
		op             BlockIOOp
		p50, p99, p999 FigureName
	}{
		{b.Reads, FigureReadP50US, FigureReadP99US, FigureReadP999US},
		{b.Writes, FigureWriteP50US, FigureWriteP99US, FigureWriteP999US},
		{b.Syncs, FigureSyncP50US, FigureSyncP99US, ""},
	} {
		if d.op.Requests == 0 {
			continue
		}
		figs = append(figs, d.p50.With(Round6(d.op.Latency.P50)), d.p99.With(Round6(d.op.Latency.P99)))
		if d.p999 != "" {
			figs = append(figs, d.p999.With(Round6(d.op.Latency.P999)))
		}
	}
	figs = append(figs, FigureRequestsS.With(Round6(b.RuntimeS)))
	if kind == KindReplay {
		if b.Pace == "max" {
			if b.RuntimeS > 0 {
				figs = append(figs, FigurePaceOfSource.With(Round6(b.SourceS/b.RuntimeS)))
			}
		} else {
			kept := 0.0
			if b.KeptUp {
				kept = 1
			}
			figs = append(figs, FigureBehindS.With(Round6(b.BehindS)), FigureKeptUp.With(kept))
		}
	}
	return figs
}

// BlockIOSecond is one second of a capture or a replay as series.csv
// holds it; a p99 of a second without requests of its direction, and a
// replay's syncs (negative: not known per second), are left out.
func BlockIOSecond(readIOPS, writeIOPS, syncs, readP99, writeP99 float64) []Sample {
	out := []Sample{{string(FigureReadIOPS), readIOPS}, {string(FigureWriteIOPS), writeIOPS}}
	if syncs >= 0 {
		out = append(out, Sample{string(FigureSyncsPerSec), syncs})
	}
	if readIOPS > 0 {
		out = append(out, Sample{string(FigureReadP99US), readP99})
	}
	if writeIOPS > 0 {
		out = append(out, Sample{string(FigureWriteP99US), writeP99})
	}
	return out
}
