package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/results"
)

// tenantSeconds are n measured seconds from start, one a second plus
// jitter, with NOPM nopm[i] (the last value repeats) and TPS ten times less.
func tenantSeconds(start time.Time, jitter time.Duration, nopm ...float64) []TenantSecond {
	var out []TenantSecond
	for i, v := range nopm {
		out = append(out, TenantSecond{Time: start.Add(time.Duration(i+1)*time.Second + jitter),
			Values: map[results.FigureName]float64{results.FigureNOPM: v, results.FigureTPS: v / 10}})
	}
	return out
}

// lateTick makes second i of secs late by d.
func lateTick(secs []TenantSecond, i int, d time.Duration) []TenantSecond {
	secs[i].Time = secs[i].Time.Add(d)
	return secs
}

// latencies is a histogram of n transactions of us microseconds each.
func latencies(t *testing.T, pairs ...int64) *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := h.RecordValues(pairs[i+1], pairs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestTenantFleet(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	names := []results.FigureDef{results.FigureNOPM.Def(), results.FigureTPS.Def()}
	cases := []struct {
		name  string
		hosts []TenantHost
		// window is the common window's length; nopm the hosts' NOPM over it.
		window  int
		nopm    []float64
		spread  float64
		wantErr string
	}{
		{
			name: "same seconds",
			hosts: []TenantHost{
				{Host: "h1", Seconds: tenantSeconds(t0, 0, 100, 200, 300), Latency: latencies(t, 10, 1000)},
				{Host: "h2", Seconds: tenantSeconds(t0, 20*time.Millisecond, 10, 20, 30), Latency: latencies(t, 10, 2000)},
			},
			window: 3, nopm: []float64{200, 20}, spread: 20,
		},
		{
			// h2 started a second late and ran two seconds longer: only the
			// two seconds both measured count, for both hosts.
			name: "late host",
			hosts: []TenantHost{
				{Host: "h1", Seconds: tenantSeconds(t0, 0, 100, 200, 300), Latency: latencies(t, 10, 1000)},
				{Host: "h2", Seconds: tenantSeconds(t0.Add(time.Second), 0, 1000, 50, 70, 9000), Latency: latencies(t, 10, 2000)},
			},
			window: 2, nopm: []float64{250, 525}, spread: 1000,
		},
		{
			// A late tick and a prompt one in the same second: h1 ticks at
			// .4 of each second, and its tick of 0.4 s came at 1.0 s. The
			// late one is the earlier: it keeps its own second (0), and
			// only second 1 is h2's too.
			name: "jittered ticks",
			hosts: []TenantHost{
				{Host: "h1", Seconds: append(tenantSeconds(t0, 0, 100), TenantSecond{Time: t0.Add(1400 * time.Millisecond),
					Values: map[results.FigureName]float64{results.FigureNOPM: 300, results.FigureTPS: 30}}), Latency: latencies(t, 1, 1000)},
				{Host: "h2", Seconds: tenantSeconds(t0, 0, 7, 9), Latency: latencies(t, 1, 1000)},
			},
			window: 1, nopm: []float64{300, 7},
		},
		{
			// h1's third second was logged 0.6 s late, closer to the fourth
			// second than to its own; the fourth came on time. Every second
			// keeps its slot: none after the late one is shifted.
			name: "a late tick in a skewed series",
			hosts: []TenantHost{
				{Host: "h1", Seconds: lateTick(tenantSeconds(t0, 0, 10, 20, 30, 40, 50, 60), 2, 600*time.Millisecond), Latency: latencies(t, 1, 1000)},
				{Host: "h2", Seconds: tenantSeconds(t0, 30*time.Millisecond, 1, 2, 3, 4, 5, 6), Latency: latencies(t, 1, 1000)},
			},
			window: 6, nopm: []float64{35, 3.5}, spread: 30,
		},
		{
			name: "no overlap",
			hosts: []TenantHost{
				{Host: "h1", Seconds: tenantSeconds(t0, 0, 1, 2)},
				{Host: "h2", Seconds: tenantSeconds(t0.Add(10*time.Second), 0, 1, 2)},
			},
			wantErr: "share no measured second",
		},
		{
			name:    "a host without seconds",
			hosts:   []TenantHost{{Host: "h1", Seconds: tenantSeconds(t0, 0, 1)}, {Host: "h2"}},
			wantErr: "host h2 recorded no measured second",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, figs, merged, err := TenantFleet(c.hosts, names)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.Seconds != c.window {
				t.Errorf("window %d s, want %d", rec.Seconds, c.window)
			}
			if rec.StartSpreadMS != c.spread {
				t.Errorf("start spread %v ms, want %v", rec.StartSpreadMS, c.spread)
			}
			sum := 0.0
			for i, h := range rec.Hosts {
				v, _ := h.Figure(results.FigureNOPM)
				if v != c.nopm[i] {
					t.Errorf("%s NOPM over the window %v, want %v", h.Host, v, c.nopm[i])
				}
				sum += v
			}
			fleet := figure(figs, results.FigureNOPM)
			// Figures are stored to six significant digits (results.Round6).
			if math.Abs(fleet-sum) > 1e-5*math.Abs(sum) {
				t.Errorf("fleet NOPM %v, want the hosts' sum over the window %v", fleet, sum)
			}
			if tps := figure(figs, results.FigureTPS); math.Abs(tps-sum/10) > 1e-6 {
				t.Errorf("fleet TPS %v, want %v", tps, sum/10)
			}
			if merged.TotalCount() != totalCount(c.hosts) {
				t.Errorf("merged %d transactions, the hosts %d", merged.TotalCount(), totalCount(c.hosts))
			}
		})
	}
}

// TestTenantFleetP99 checks the fleet's p99 is the merged histograms' on a
// skewed fleet, where the mean of the hosts' p99s is far from it: one host
// doing 990 transactions at 100 µs, another 10 at 10 ms.
func TestTenantFleetP99(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	fast, slow := latencies(t, 990, 100), latencies(t, 10, 10_000)
	hosts := []TenantHost{
		{Host: "fast", Seconds: tenantSeconds(t0, 0, 1, 1), Latency: fast},
		{Host: "slow", Seconds: tenantSeconds(t0, 0, 1, 1), Latency: slow},
	}
	rec, figs, _, err := TenantFleet(hosts, []results.FigureDef{results.FigureNOPM.Def()})
	if err != nil {
		t.Fatal(err)
	}
	want := hdrhistogram.New(1, 60_000_000, 3)
	want.Merge(fast)
	want.Merge(slow)
	p99 := figure(figs, results.FigureLatencyP99)
	if p99 != float64(want.ValueAtQuantile(99))/1000 || rec.Latency.P99US != want.ValueAtQuantile(99) {
		t.Errorf("fleet p99 %v ms (%d µs), want the merged histograms' %d µs", p99, rec.Latency.P99US, want.ValueAtQuantile(99))
	}
	meanOfP99s := float64(fast.ValueAtQuantile(99)+slow.ValueAtQuantile(99)) / 2 / 1000
	if math.Abs(p99-meanOfP99s) < 1 {
		t.Errorf("fleet p99 %v ms is the mean of the hosts' p99s %v ms: the case does not tell them apart", p99, meanOfP99s)
	}
	if rec.Hosts[1].Latency.P99US != slow.ValueAtQuantile(99) {
		t.Errorf("slow host's own p99 %d µs, want %d", rec.Hosts[1].Latency.P99US, slow.ValueAtQuantile(99))
	}
}

func figure(figs []results.Figure, name results.FigureName) float64 {
	for _, f := range figs {
		if f.Name == name {
			return f.Value
		}
	}
	return math.NaN()
}

func totalCount(hosts []TenantHost) int64 {
	var n int64
	for _, h := range hosts {
		if h.Latency != nil {
			n += h.Latency.TotalCount()
		}
	}
	return n
}

// BenchmarkTenantFleet1000Hosts computes a fleet step of 1,000 hosts, each
// a minute of per-second TPM, NOPM and TPS and a histogram of 60,000
// transactions: what a fleet of hundreds of hosts costs the coordinator.
func BenchmarkTenantFleet1000Hosts(b *testing.B) {
	t0 := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	names := []results.FigureDef{results.FigureTPM.Def(), results.FigureNOPM.Def(), results.FigureTPS.Def()}
	hosts := make([]TenantHost, 1000)
	for i := range hosts {
		h := hdrhistogram.New(1, 60_000_000, 3)
		for v := int64(0); v < 60_000; v++ {
			h.RecordValue(200 + (v*7919+int64(i)*104729)%50_000)
		}
		var secs []TenantSecond
		for s := 0; s < 60; s++ {
			secs = append(secs, TenantSecond{Time: t0.Add(time.Duration(s)*time.Second + time.Duration(i%400)*time.Millisecond),
				Values: map[results.FigureName]float64{results.FigureTPM: 60_000, results.FigureNOPM: 27_000, results.FigureTPS: 1000}})
		}
		hosts[i] = TenantHost{Host: fmt.Sprintf("h%d", i), Seconds: secs, Latency: h}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, _, _, err := TenantFleet(hosts, names); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTenantSecondsToTheMillisecond: series.csv writes each row's time to
// the second, and its elapsed time from the run's start to the
// millisecond. Two hosts whose ticks are 10 ms apart on either side of a
// second's boundary measured the same seconds: read to the millisecond,
// they share all three, and started 10 ms apart.
func TestTenantSecondsToTheMillisecond(t *testing.T) {
	names := []results.FigureDef{results.FigureTPS.Def()}
	series := func(started time.Time, firstTick time.Duration) results.Series {
		s := results.Series{Columns: []string{string(results.FigureTPS)}}
		for i := range 3 {
			at := started.Add(firstTick + time.Duration(i)*time.Second)
			s.Rows = append(s.Rows, results.LoadedRow{Time: at.Truncate(time.Second), ElapsedS: at.Sub(started).Seconds(),
				Step: "users-1", Phase: "measure", Values: []float64{100}})
		}
		return s
	}
	t0 := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	h1Start, h2Start := t0.Add(-3*time.Second+300*time.Millisecond), t0.Add(-5*time.Second+700*time.Millisecond)
	hosts := []TenantHost{
		{Host: "h1", Seconds: TenantSeconds(series(h1Start, 2695*time.Millisecond), h1Start, "users-1", names)},
		{Host: "h2", Seconds: TenantSeconds(series(h2Start, 4305*time.Millisecond), h2Start, "users-1", names)},
	}
	for _, h := range hosts {
		if got := h.Seconds[0].Time; !got.Equal(t0.Add(-5*time.Millisecond)) && !got.Equal(t0.Add(5*time.Millisecond)) {
			t.Errorf("%s's first second at %s, want to the millisecond", h.Host, got.Format("15:04:05.000"))
		}
	}
	rec, _, _, err := TenantFleet(hosts, names)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Seconds != 3 || rec.StartSpreadMS != 10 {
		t.Errorf("a window of %d s, the first seconds %v ms apart; want 3 s, 10 ms", rec.Seconds, rec.StartSpreadMS)
	}
}

// A host's ramp-up seconds, and another step's, are none of the step's
// measured seconds: the fleet's figures and its timeline count only the
// rows of the step in phase "measure".
func TestTenantSecondsCountOnlyTheMeasuredStep(t *testing.T) {
	names := []results.FigureDef{results.FigureTPS.Def()}
	started := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	rows := []struct {
		step, phase string
		tps         float64
	}{
		{"users-1", "rampup", 10}, {"users-1", "rampup", 20},
		{"users-1", "measure", 100}, {"users-1", "measure", 110},
		{"users-2", "rampup", 30}, {"users-2", "measure", 200},
	}
	s := results.Series{Columns: []string{string(results.FigureTPS)}}
	for i, r := range rows {
		s.Rows = append(s.Rows, results.LoadedRow{ElapsedS: float64(i + 1), Step: r.step, Phase: r.phase, Values: []float64{r.tps}})
	}
	cases := []struct {
		step string
		want []float64
	}{
		{"users-1", []float64{100, 110}},
		{"users-2", []float64{200}},
	}
	for _, c := range cases {
		t.Run(c.step, func(t *testing.T) {
			var got []float64
			for _, sec := range TenantSeconds(s, started, c.step, names) {
				got = append(got, sec.Values[results.FigureTPS])
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("TPS %v, want %v (the step's measured seconds only)", got, c.want)
			}
		})
	}
}
