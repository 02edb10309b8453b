package capture

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"dbio/internal/blocktrace"
	"dbio/internal/results"
)

// TestStepIsAResultsDirectory: a capture's step and seconds, written as
// every run's are, read back as a capture with its figures in the
// catalogue, its seconds from the first busy one.
func TestStepIsAResultsDirectory(t *testing.T) {
	ms := time.Millisecond
	tr := blocktrace.Trace{
		Devices: []blocktrace.Device{{Name: "sdb", Major: 8, Minor: 16}}, Processes: []string{"db"}, Duration: 4 * time.Second,
		Requests: []blocktrace.Request{
			{At: 1500 * ms, Op: blocktrace.Read, Size: 8192, Latency: ms, Depth: 1},
			{At: 1600 * ms, Op: blocktrace.Write, Offset: 8192, Size: 8192, Latency: 2 * ms, Depth: 1},
			{At: 1700 * ms, Op: blocktrace.Flush, Latency: 3 * ms, Depth: 1},
			{At: 2800 * ms, Op: blocktrace.Write, Offset: 16384, Size: 8192, Latency: 2 * ms, Depth: 1},
		},
	}
	rec := Record{Kind: Kind, Version: 1, Devices: []DeviceRecord{{Name: "sdb", Number: "8:16"}}, DurationSeconds: 4, Requests: 4,
		Signature: blocktrace.Sign(tr)}
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	step, rows := Step(rec, tr, start, start.Add(4*time.Second))
	if err := results.CheckFigures(results.InStep, step.Figures...); err != nil {
		t.Error(err)
	}
	for _, r := range rows {
		var figs []results.Figure
		for _, v := range r.Values {
			figs = append(figs, results.Figure{Name: results.FigureName(v.Name), Value: v.Value})
		}
		if err := results.CheckFigures(results.InSecond, figs...); err != nil {
			t.Error(err)
		}
	}
	if len(rows) != 2 || !rows[0].Time.Equal(start.Add(2500*ms)) {
		t.Errorf("seconds %+v, want two from 1.5 s (the first request) + 1 s", rows)
	}
	dir, err := results.Create(t.TempDir(), "capture", results.Run{Kind: results.KindCapture}, start)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := dir.AppendSeries(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := dir.WriteStep(step, nil); err != nil {
		t.Fatal(err)
	}
	if err := dir.Finish(results.StatusCompleted, nil, start.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	l, err := results.Load(dir.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Steps) != 1 || l.Steps[0].BlockIO == nil {
		t.Fatalf("read back %+v, want the capture's step with its detail", l.Steps)
	}
	b := l.Steps[0].BlockIO
	if b.Reads.Requests != 1 || b.Writes.Requests != 2 || b.Syncs.Requests != 1 || b.Devices[0] != "sdb" || b.RuntimeS != 1.302 {
		t.Errorf("read back %+v", b)
	}
	if v, ok := l.Steps[0].Figure(results.FigureSyncP99US); !ok || v != 3000 {
		t.Errorf("sync p99 %v (%v), want 3000 µs", v, ok)
	}
}

// TestShippedCaptures: every capture in examples/captures reads back as a
// capture (its record, its whole trace) and as a results directory of
// kind capture, which dbio replay, runs and compare read.
func TestShippedCaptures(t *testing.T) {
	dirs, _ := filepath.Glob("../../examples/captures/*")
	var n int
	for _, d := range dirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		n++
		rec, tr, err := Load(d)
		if err != nil {
			t.Errorf("%s: %v", d, err)
			continue
		}
		if rec.Requests < 1000 || len(tr.Requests) != rec.Requests || rec.Signature.Writes.Requests == 0 {
			t.Errorf("%s: %d requests recorded, %d in the trace, %d writes", d, rec.Requests, len(tr.Requests), rec.Signature.Writes.Requests)
		}
		l, err := results.Load(d)
		if err != nil || l.Run.Kind != results.KindCapture || len(l.Steps) != 1 {
			t.Errorf("%s as a results directory: %v, %+v", d, err, l)
		}
	}
	if n != 4 {
		t.Errorf("%d captures in examples/captures, want the 4 its README lists", n)
	}
}
