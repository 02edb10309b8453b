package fio

import (
	"strings"
	"testing"

	"dbio/internal/results"
)

// direction is a direction's figures with fio's default percentiles.
func direction(iops, bytesPerSec, meanUS, maxUS float64, pcts map[float64]float64) *results.FioDirection {
	d := &results.FioDirection{IOs: int64(iops), IOPS: iops, BytesPerSec: bytesPerSec,
		Completion: results.FioLatency{N: int64(iops), MeanUS: meanUS, MaxUS: maxUS}}
	for _, p := range []float64{50, 90, 95, 99, 99.9, 99.99} {
		d.Completion.Percentiles = append(d.Completion.Percentiles, results.FioPercentile{P: p, US: pcts[p]})
	}
	return d
}

func TestDirectionLines(t *testing.T) {
	read := direction(8051, 66e6, 420, 70705, map[float64]float64{50: 228, 90: 481, 95: 995, 99: 4293, 99.9: 18744, 99.99: 46400})
	// fio's p99.99 is its bin's value, past the write maximum it measured.
	write := direction(3426, 28.1e6, 1280, 72556, map[float64]float64{50: 791, 90: 1794, 95: 3391, 99: 14615, 99.9: 25560, 99.99: 73400})
	total := direction(11477, 94.1e6, 677, 72556, map[float64]float64{50: 289, 90: 1090, 95: 1810, 99: 7900, 99.9: 21900, 99.99: 48000})
	for _, tc := range []struct {
		name string
		dirs results.FioDirections
		want []string
	}{
		{"mixed", results.FioDirections{Read: read, Write: write, Total: total}, []string{
			"            IOPS MB/s  mean   p50   p90   p95  p99 p99.9 p99.99 max ms",
			"     read  8,051 66.0 0.420 0.228 0.481 0.995 4.29  18.7   46.4   70.7",
			"    write  3,426 28.1  1.28 0.791  1.79  3.39 14.6  25.6   72.6   72.6",
			"    total 11,477 94.1 0.677 0.289  1.09  1.81 7.90  21.9   48.0   72.6",
		}},
		{"reads only", results.FioDirections{Read: read, Total: read}, nil},
		{"no writes done", results.FioDirections{Read: read, Write: &results.FioDirection{}, Total: read}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := directionLines(results.FioPoint{FioDirections: tc.dirs})
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
