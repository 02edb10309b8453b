package fioformat

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// fio's status reports, read as fio appends them (in pieces that cut
// reports anywhere), give the figures of each second: the warm-up's, then
// the measurement's from the restart of fio's counts, which add up to the
// final report's.
func TestStatusReportsGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r StatusReader
	var reports []*Output
	for chunk := range pieces(data, 4093) {
		reports = append(reports, r.Add(chunk)...)
	}
	if len(reports) != 5 {
		t.Fatalf("%d reports, want 5 (the warm-up's second, three measured seconds, the final)", len(reports))
	}
	final, err := Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reports[len(reports)-1].Groups[0].Total.IOs, final.Groups[0].Total.IOs; got != want {
		t.Errorf("Parse reads %d I/Os from the stream, the last report says %d: Parse must read the final report", want, got)
	}
	var b bytes.Buffer
	var prev *Output
	var measured float64
	for i, cur := range reports {
		l, ok := Between(prev, cur)
		prev = cur
		fmt.Fprintf(&b, "report %d: runtime %d ms", i+1, cur.Groups[0].Total.RuntimeMS)
		if !ok {
			b.WriteString(": no time passed\n")
			continue
		}
		fmt.Fprintf(&b, ": %.3f s  IOPS %.0f  MB/s %.2f", l.Seconds, l.IOPS, l.MBPerSec)
		if l.HasMean {
			fmt.Fprintf(&b, "  mean %.1fµs", l.MeanUS)
		}
		if l.HasP99 {
			fmt.Fprintf(&b, "  p99 %.1fµs", l.P99US)
		}
		b.WriteString("\n")
		if i > 0 {
			measured += l.IOPS * l.Seconds
		}
		// The first report after the restart covers what fio's own
		// percentiles of that report cover.
		if own, ok := cur.Groups[0].Total.Completion.At(99); i == 1 && (!ok || !l.HasP99 || l.P99US != own) {
			t.Errorf("report 2: p99 %vµs from the bins, fio's own %vµs", l.P99US, own)
		}
	}
	golden(t, filepath.Join("testdata", "status.golden"), b.Bytes())
	if want := float64(final.Groups[0].Total.IOs); math.Abs(measured-want) > 0.5 {
		t.Errorf("the measured seconds add up to %.0f I/Os, the final report counts %.0f", measured, want)
	}
}

// A report cut short is not handed out until it is complete, and bytes
// that are no report are skipped.
func TestStatusReaderWaitsForAWholeReport(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r StatusReader
	if got := r.Add([]byte("fio: note before the reports\n")); len(got) != 0 {
		t.Fatalf("a note gave %d reports", len(got))
	}
	half := len(data) / 10
	if got := r.Add(data[:half]); len(got) != 1 {
		t.Errorf("the first tenth of the stream gave %d reports, want the first one", len(got))
	}
	if got := r.Add(data[half:]); len(got) != 4 {
		t.Errorf("the rest gave %d reports, want 4", len(got))
	}
}

func pieces(data []byte, size int) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(data) > 0 {
			n := min(size, len(data))
			if !yield(data[:n]) {
				return
			}
			data = data[n:]
		}
	}
}

// What is kept of a status stream is the final report, as fio wrote it.
func TestFinalReportKeepsTheLast(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	data = append([]byte("fio: a note\n"), data...)
	kept := FinalReport(data)
	if !bytes.HasPrefix(kept, []byte("fio: a note\n{")) || !bytes.HasSuffix(data, kept[len("fio: a note\n"):]) || len(kept) > len(data)/3 {
		t.Errorf("kept %d of %d bytes: want the note and the final report, as written", len(kept), len(data))
	}
	a, errA := Parse(bytes.NewReader(kept))
	b, errB := Parse(bytes.NewReader(data))
	if errA != nil || errB != nil || a.Groups[0].Total.IOs != b.Groups[0].Total.IOs || len(a.Notes) != 1 {
		t.Errorf("the final report reads differently: %v %v", errA, errB)
	}
	if torn := []byte("{\n \"jobs\" : ["); !bytes.Equal(FinalReport(torn), torn) {
		t.Error("output without a complete report was changed")
	}
}
