package fio

import (
	"math"
	"strings"
	"testing"
)

func TestParseLog(t *testing.T) {
	got, err := ParseLog(strings.NewReader("1795305830628, 60640, 0, 0, 0\n\n1795305830628, 25825, 1, 4096, 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []LogSample{{1795305830628, 60640, 0}, {1795305830628, 25825, 1}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %+v", got)
	}
	for _, bad := range []string{"1000, 5\n", "1000, x, 0\n"} {
		if _, err := ParseLog(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: error %v, want one naming line 1", bad, err)
		}
	}
}

func samples(dir int, pairs ...int64) []LogSample {
	var out []LogSample
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, LogSample{TimeMS: pairs[i], Value: pairs[i+1], Dir: dir})
	}
	return out
}

func TestMergeSeconds(t *testing.T) {
	const t0 = 1_000_000
	for _, tc := range []struct {
		name    string
		jobs    []JobLogs
		want    []Second // Time is checked as whole seconds after t0
		dropped int
	}{
		{
			name: "two jobs summed, latency weighted by IOPS",
			jobs: []JobLogs{
				{Job: "a.1", IOPS: samples(0, t0, 1000, t0+1000, 3000), BW: samples(0, t0, 4000, t0+1000, 12000), Clat: samples(0, t0+1, 100_000, t0+1001, 200_000)},
				{Job: "a.2", IOPS: samples(0, t0+2, 3000, t0+1002, 1000), BW: samples(0, t0+2, 12000, t0+1002, 4000), Clat: samples(0, t0+2, 300_000, t0+1002, 400_000)},
			},
			want: []Second{
				{ReadIOPS: 4000, MBPerSec: 16000 * 1024 / 1e6, LatMeanUS: 250, ReadLatMeanUS: 250},
				{ReadIOPS: 4000, MBPerSec: 16000 * 1024 / 1e6, LatMeanUS: 250, ReadLatMeanUS: 250},
			},
		},
		{
			name: "a short final interval is not a second",
			jobs: []JobLogs{{Job: "a.1", IOPS: samples(0, t0, 1000, t0+1000, 1000, t0+1040, 20), Clat: samples(0, t0, 100_000, t0+1000, 100_000, t0+1040, 900_000)}},
			want: []Second{{ReadIOPS: 1000, LatMeanUS: 100, ReadLatMeanUS: 100}, {ReadIOPS: 1000, LatMeanUS: 100, ReadLatMeanUS: 100}},
		},
		{
			name: "a second one job did not log is dropped",
			jobs: []JobLogs{
				{Job: "a.1", IOPS: samples(0, t0, 1000, t0+1000, 1000, t0+2000, 1000)},
				{Job: "a.2", IOPS: samples(0, t0, 1000, t0+1000, 1000)},
			},
			want:    []Second{{ReadIOPS: 2000}, {ReadIOPS: 2000}},
			dropped: 1,
		},
		{
			name: "a mix keeps directions apart",
			jobs: []JobLogs{{Job: "a.1", IOPS: append(samples(0, t0, 700), samples(1, t0, 300)...),
				Clat: append(samples(0, t0, 100_000), samples(1, t0, 500_000)...)}},
			want: []Second{{ReadIOPS: 700, WriteIOPS: 300, LatMeanUS: 220, ReadLatMeanUS: 100, WriteLatMeanUS: 500}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, dropped := MergeSeconds(tc.jobs)
			if dropped != tc.dropped || len(got) != len(tc.want) {
				t.Fatalf("%d seconds, %d dropped; want %d and %d: %+v", len(got), dropped, len(tc.want), tc.dropped, got)
			}
			for i, g := range got {
				w := tc.want[i]
				if off := g.Time.UnixMilli() - t0; off != int64(i)*1000 {
					t.Errorf("second %d at +%d ms", i, off)
				}
				for _, f := range []struct {
					name      string
					got, want float64
				}{
					{"read iops", g.ReadIOPS, w.ReadIOPS}, {"write iops", g.WriteIOPS, w.WriteIOPS}, {"MB/s", g.MBPerSec, w.MBPerSec},
					{"latency", g.LatMeanUS, w.LatMeanUS}, {"read latency", g.ReadLatMeanUS, w.ReadLatMeanUS}, {"write latency", g.WriteLatMeanUS, w.WriteLatMeanUS},
				} {
					if f.want == 0 && math.IsNaN(f.got) {
						continue // no samples: no value
					}
					if math.Abs(f.got-f.want) > 1e-9 {
						t.Errorf("second %d %s = %v, want %v", i, f.name, f.got, f.want)
					}
				}
			}
		})
	}
}
