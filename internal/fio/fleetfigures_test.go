package fio

import (
	"errors"
	"math"
	"testing"
	"time"

	"dbio/internal/fioformat"
	"dbio/internal/results"
)

// binOf is the index of fio's latency bin holding ns.
func binOf(ns float64) int {
	best := 0
	for i := range fioformat.HistBins {
		if math.Abs(fioformat.HistBinValue(i)-ns) < math.Abs(fioformat.HistBinValue(best)-ns) {
			best = i
		}
	}
	return best
}

// steadyHost is a host that read iops I/Os a second, all at latUS, for
// the seconds from..to of wall time (Unix seconds).
func steadyHost(from, to int64, iops float64, latUS float64) []fioformat.Second {
	var out []fioformat.Second
	for s := from; s <= to; s++ {
		out = append(out, fioformat.Second{Time: time.Unix(s, 0), ReadIOPS: iops, MBPerSec: iops * 4096 / 1e6, ReadMBPerSec: iops * 4096 / 1e6,
			ReadLatMeanUS: latUS, ReadBins: []fioformat.HistBin{{Index: binOf(latUS * 1000), Count: int64(iops)}}})
	}
	return out
}

// shifted is secs logged ms later.
func shifted(secs []fioformat.Second, ms int64) []fioformat.Second {
	out := append([]fioformat.Second(nil), secs...)
	for i := range out {
		out[i].Time = out[i].Time.Add(time.Duration(ms) * time.Millisecond)
	}
	return out
}

// lateTick is secs with second i logged ms late.
func lateTick(secs []fioformat.Second, i int, ms int64) []fioformat.Second {
	out := append([]fioformat.Second(nil), secs...)
	out[i].Time = out[i].Time.Add(time.Duration(ms) * time.Millisecond)
	return out
}

// unbinned is secs with second i logged without its histogram.
func unbinned(secs []fioformat.Second, i int) []fioformat.Second {
	out := append([]fioformat.Second(nil), secs...)
	out[i].ReadBins = nil
	return out
}

func p99(t *testing.T, f results.FioDirections) float64 {
	t.Helper()
	v, ok := f.Total.Completion.At(99)
	if !ok {
		t.Fatal("no p99")
	}
	return v
}

func TestFleetFigures(t *testing.T) {
	const t0 = 1_800_000_000
	tests := []struct {
		name  string
		hosts [][]fioformat.Second
		// window and sums
		seconds  int
		start    int64
		iops     float64
		hostIOPS []float64
		// wantP99 is the p99 of the merged bins, worked out by hand: the
		// latency 99 % of all the fleet's I/Os met.
		wantP99US float64
		// skewed: the mean of the hosts' p99s is far from the fleet's.
		skewed bool
	}{
		{
			name:  "fast host and slow host: p99 is the fast host's",
			hosts: [][]fioformat.Second{steadyHost(t0, t0+9, 990, 100), steadyHost(t0, t0+9, 10, 10_000)},
			// 1000 I/Os a second; 990 of them (99 %) at 100 µs.
			seconds: 10, start: t0, iops: 1000, hostIOPS: []float64{990, 10},
			wantP99US: fioformat.HistBinValue(binOf(100_000)) / 1000, skewed: true,
		},
		{
			name:  "three hosts, one slow: p99 is the slow host's",
			hosts: [][]fioformat.Second{steadyHost(t0, t0+4, 400, 100), steadyHost(t0, t0+4, 400, 200), steadyHost(t0, t0+4, 200, 5_000)},
			// 1000 a second; the slowest 200 (20 %) at 5 ms reach past p80.
			seconds: 5, start: t0, iops: 1000, hostIOPS: []float64{400, 400, 200},
			wantP99US: fioformat.HistBinValue(binOf(5_000_000)) / 1000, skewed: true,
		},
		{
			name: "a host starting late and one ending early: only the common seconds count",
			// h1 runs seconds 0-9, h2 seconds 3-12: the window is 3-9.
			hosts:   [][]fioformat.Second{steadyHost(t0, t0+9, 100, 100), steadyHost(t0+3, t0+12, 300, 100)},
			seconds: 7, start: t0 + 3, iops: 400, hostIOPS: []float64{100, 300},
			wantP99US: fioformat.HistBinValue(binOf(100_000)) / 1000,
		},
		{
			name: "a late tick keeps its own second: the next one's does not overwrite it",
			// h2's second 1 is logged 600 ms late, nearer second 2 than its
			// own: it goes back to second 1, and both count.
			hosts:   [][]fioformat.Second{steadyHost(t0, t0+4, 100, 100), lateTick(steadyHost(t0, t0+4, 200, 100), 1, 600)},
			seconds: 5, start: t0, iops: 300, hostIOPS: []float64{100, 200},
			wantP99US: fioformat.HistBinValue(binOf(100_000)) / 1000,
		},
		{
			name: "hosts that started a fraction of a second apart share their seconds",
			// h2 logs 0.45 s after h1: a wall second's half falls between
			// them, and still they measured the same seconds.
			hosts:   [][]fioformat.Second{shifted(steadyHost(t0, t0+4, 100, 100), 300), shifted(steadyHost(t0, t0+4, 200, 100), 750)},
			seconds: 5, start: t0, iops: 300, hostIOPS: []float64{100, 200},
			wantP99US: fioformat.HistBinValue(binOf(100_000)) / 1000,
		},
		{
			name:    "a second logged without its histogram is left out",
			hosts:   [][]fioformat.Second{steadyHost(t0, t0+4, 100, 100), unbinned(steadyHost(t0, t0+4, 300, 100), 4)},
			seconds: 4, start: t0, iops: 400, hostIOPS: []float64{100, 300},
			wantP99US: fioformat.HistBinValue(binOf(100_000)) / 1000,
		},
		{
			name: "a second one host did not log is left out",
			hosts: [][]fioformat.Second{steadyHost(t0, t0+4, 100, 100),
				append(steadyHost(t0, t0+1, 1000, 100), steadyHost(t0+3, t0+4, 1000, 100)...)},
			seconds: 4, start: t0, iops: 1100, hostIOPS: []float64{100, 1000},
			wantP99US: fioformat.HistBinValue(binOf(100_000)) / 1000,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Fleet(tc.hosts)
			if err != nil {
				t.Fatal(err)
			}
			if got.Seconds != tc.seconds || got.Start.Round(time.Second).Unix() != tc.start {
				t.Errorf("window %s, %d s; want from %s, %d s", got.Start, got.Seconds, time.Unix(tc.start, 0).UTC(), tc.seconds)
			}
			var sum, meanP99 float64
			for i, h := range got.Hosts {
				if math.Abs(h.Total.IOPS-tc.hostIOPS[i]) > 1e-9 {
					t.Errorf("host %d: %v IOPS over the window, want %v", i, h.Total.IOPS, tc.hostIOPS[i])
				}
				sum += h.Total.IOPS
				meanP99 += p99(t, h) / float64(len(got.Hosts))
			}
			if math.Abs(got.Fleet.Total.IOPS-tc.iops) > 1e-9 || math.Abs(got.Fleet.Total.IOPS-sum) > 1e-9 {
				t.Errorf("fleet %v IOPS; want %v, the sum of the hosts' %v", got.Fleet.Total.IOPS, tc.iops, sum)
			}
			if got.Fleet.Total.MBPerSec() <= 0 || math.Abs(got.Fleet.Total.MBPerSec()-tc.iops*4096/1e6) > 1e-9 {
				t.Errorf("fleet %v MB/s, want %v", got.Fleet.Total.MBPerSec(), tc.iops*4096/1e6)
			}
			fleetP99 := p99(t, got.Fleet)
			if fleetP99 != tc.wantP99US {
				t.Errorf("fleet p99 %v µs, want %v µs (the p99 of the merged bins)", fleetP99, tc.wantP99US)
			}
			if tc.skewed && math.Abs(meanP99-fleetP99) < fleetP99/2 {
				t.Errorf("the mean of the hosts' p99s (%v µs) is near the fleet's (%v µs): the case is not skewed", meanP99, fleetP99)
			}
			if tc.skewed {
				t.Logf("fleet p99 %.0f µs; mean of the hosts' p99s %.0f µs", fleetP99, meanP99)
			}
		})
	}
}

// TestFleetFiguresWithoutCommonBins: when stalls left no second with every
// host's latency bins, the point keeps its throughput over the seconds all
// hosts logged and has no percentiles, rather than failing or drawing them
// from the seconds that did not stall.
func TestFleetFiguresWithoutCommonBins(t *testing.T) {
	const t0 = 1_800_000_000
	h1 := unbinned(unbinned(steadyHost(t0, t0+3, 100, 100), 0), 1)
	h2 := unbinned(unbinned(steadyHost(t0, t0+3, 300, 100), 2), 3)
	got, err := Fleet([][]fioformat.Second{h1, h2})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Unbinned || got.Seconds != 4 || got.Fleet.Total.IOPS != 400 {
		t.Errorf("unbinned %v, %d s, %v IOPS; want unbinned, 4 s, 400 IOPS", got.Unbinned, got.Seconds, got.Fleet.Total.IOPS)
	}
	if _, ok := got.Fleet.Total.Completion.At(99); ok {
		t.Error("a p99 from bins that leave out some seconds' I/Os")
	}
	if text := p99Text(got.Fleet.Total); text != "-" {
		t.Errorf("the terminal shows the missing p99 as %q, want -", text)
	}
	if got.Fleet.Total.Completion.MeanUS != 100 {
		t.Errorf("mean latency %v µs, want 100", got.Fleet.Total.Completion.MeanUS)
	}
	// One second with every host's bins is enough for the binned window.
	h2 = unbinned(steadyHost(t0, t0+3, 300, 100), 0)
	if got, err := Fleet([][]fioformat.Second{h1, h2}); err != nil || got.Unbinned || got.Seconds != 2 {
		t.Errorf("%v: unbinned %v over %d s, want the 2 binned seconds", err, got.Unbinned, got.Seconds)
	}
}

// TestFleetPercentilesFromReports: a window without every host's bins in
// any second takes its percentiles from the hosts' final reports, merged
// for the fleet, and none where a host's report has no bins.
func TestFleetPercentilesFromReports(t *testing.T) {
	const t0 = 1_800_000_000
	h1 := unbinned(unbinned(steadyHost(t0, t0+3, 100, 100), 0), 1)
	h2 := unbinned(unbinned(steadyHost(t0, t0+3, 300, 100), 2), 3)
	// Host 1's 400 reads all at 100 µs; host 2's 1,200 at 100 µs but 24
	// (2 %) at 5 ms: the fleet's p99 is 5 ms only if both are merged (24
	// of 1,600 is 1.5 %), and its p95 100 µs.
	reports := []results.FioDirections{
		{Read: &results.FioDirection{IOs: 400, Bins: map[int64]int64{100_000: 400}}},
		{Read: &results.FioDirection{IOs: 1200, Bins: map[int64]int64{100_000: 1176, 5_000_000: 24}}},
	}
	for _, r := range reports {
		r.Total = r.Read
	}
	got, err := Fleet([][]fioformat.Second{h1, h2})
	if err != nil || !got.Unbinned {
		t.Fatalf("%v: unbinned %v, want an unbinned window", err, got.Unbinned)
	}
	if !got.PercentilesFromReports(reports) {
		t.Fatal("no percentiles from reports that have bins")
	}
	for _, c := range []struct {
		name string
		d    *results.FioDirection
		p    float64
		want float64
	}{
		{"fleet read p99", got.Fleet.Read, 99, 5000},
		{"fleet read p95", got.Fleet.Read, 95, 100},
		{"fleet total p99", got.Fleet.Total, 99, 5000},
		{"host 1 p99", got.Hosts[0].Read, 99, 100},
		{"host 2 p99", got.Hosts[1].Read, 99, 5000},
	} {
		if v, ok := c.d.Completion.At(c.p); !ok || v != c.want {
			t.Errorf("%s = %v (%v), want %v µs", c.name, v, ok, c.want)
		}
	}
	if n := got.Fleet.Read.Completion.N; n != 1600 {
		t.Errorf("the fleet's percentiles count %d completions, want 1600", n)
	}
	// A host whose report has no bins leaves the fleet without percentiles.
	again, _ := Fleet([][]fioformat.Second{h1, h2})
	reports[1].Read = &results.FioDirection{IOs: 1200}
	if again.PercentilesFromReports(reports) {
		t.Error("percentiles though host 2's report has no bins")
	}
	if _, ok := again.Fleet.Read.Completion.At(99); ok {
		t.Error("a fleet p99 without host 2's completions")
	}
	if _, ok := again.Hosts[0].Read.Completion.At(99); ok {
		t.Error("host 1 has a p99 from its report while the fleet has none")
	}
}

func TestFleetFiguresWithoutCommonWindow(t *testing.T) {
	const t0 = 1_800_000_000
	for name, hosts := range map[string][][]fioformat.Second{
		"no hosts":        nil,
		"a host silent":   {steadyHost(t0, t0+3, 10, 100), nil},
		"one after other": {steadyHost(t0, t0+3, 10, 100), steadyHost(t0+5, t0+8, 10, 100)},
	} {
		if _, err := Fleet(hosts); !errors.Is(err, ErrNoCommonWindow) {
			t.Errorf("%s: %v, want ErrNoCommonWindow", name, err)
		}
	}
}

// BenchmarkFleet1000Hosts computes the fleet figures of a minute-long point
// on 1,000 hosts, each second of each host with 60 latency bins of reads
// and 60 of writes: the merging of histograms and per-second series that a
// fleet of hundreds of hosts asks of the coordinator.
func BenchmarkFleet1000Hosts(b *testing.B) {
	const hosts, seconds, bins = 1000, 60, 60
	const t0 = 1_800_000_000
	all := make([][]fioformat.Second, hosts)
	for h := range all {
		for s := range seconds {
			sec := fioformat.Second{Time: time.UnixMilli(t0*1000 + int64(s)*1000 + int64(h%200)), ReadIOPS: 1000, WriteIOPS: 500,
				ReadMBPerSec: 4, WriteMBPerSec: 2, MBPerSec: 6, ReadLatMeanUS: 100, WriteLatMeanUS: 300}
			for i := range bins {
				sec.ReadBins = append(sec.ReadBins, fioformat.HistBin{Index: 600 + i + h%7, Count: 16})
				sec.WriteBins = append(sec.WriteBins, fioformat.HistBin{Index: 700 + i + h%11, Count: 8})
			}
			all[h] = append(all[h], sec)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		f, err := Fleet(all)
		if err != nil || f.Seconds != seconds {
			b.Fatalf("%d s, %v", f.Seconds, err)
		}
	}
}

// A host whose clock is ahead stamps its seconds late: put on this
// machine's clock (its measured offset taken off) before the window is
// drawn, its seconds pair with the seconds the others measured at the same
// time, and no second of the window is lost to the offset.
func TestFleetWindowOnThisClock(t *testing.T) {
	const t0 = 1_800_000_000
	ahead := 600 * time.Millisecond
	a := steadyHost(t0, t0+9, 1000, 100)
	b := shifted(steadyHost(t0, t0+9, 3000, 300), ahead.Milliseconds()) // measured the same seconds, stamped by a clock 600 ms ahead
	for _, c := range []struct {
		name    string
		offsets []time.Duration
		want    int
	}{
		{"offsets taken off", []time.Duration{0, ahead}, 10},
		{"a host behind by as much", []time.Duration{-ahead, 0}, 10},
	} {
		figs, err := Fleet([][]fioformat.Second{onThisClock(a, c.offsets[0]), onThisClock(b, c.offsets[1])})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if figs.Seconds != c.want {
			t.Errorf("%s: a window of %d s, want %d: the hosts measured the same %d s", c.name, figs.Seconds, c.want, c.want)
		}
		if figs.Fleet.Total.IOPS != 4000 {
			t.Errorf("%s: fleet IOPS %.0f, want 4000", c.name, figs.Fleet.Total.IOPS)
		}
	}
	if got := onThisClock(b, ahead)[0].Time; !got.Equal(time.Unix(t0, 0)) || !b[0].Time.Equal(time.Unix(t0, 0).Add(ahead)) {
		t.Errorf("onThisClock: the first second at %v (the host's own at %v), want %v, and the host's kept", got, b[0].Time, time.Unix(t0, 0))
	}
}
