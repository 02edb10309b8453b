package analysis

import (
	"math"

	"dbio/internal/results"
)

// A run that characterizes its target with fio and then runs a workload on
// it (dbio quick) has both halves of the question a DBA asks: what the
// database asked of the device, and what the device can do. Demand joins
// them from the samples already recorded, so the report can say "TPC-C
// drove 4.7k writes/s at 4 users: 17 % of the 4k random-write IOPS fio
// measured" instead of leaving the reader to find both numbers.

// Demand is one direction of what a workload asked of the device at its
// busiest step, against the most fio measured at small random I/O.
type Demand struct {
	// Write says the direction: writes (true) or reads.
	Write bool
	// Users and Device name the step and the device it was read from.
	Users  int
	Device string
	// PerS is the device's mean I/Os per second in that direction over
	// the step.
	PerS float64
	// Capacity is fio's IOPS at Point, the random point of the smallest
	// block size in that direction (the highest when several ran).
	Capacity float64
	Point    string
	BS       int64
}

// SharePct is the demand in % of the capacity.
func (d Demand) SharePct() float64 { return d.PerS / d.Capacity * 100 }

// DeviceDemand joins a workload's steps with a run's fio points: for writes
// and for reads, the step that drove the most I/Os per second on its
// busiest device, against fio's random IOPS in that direction. A direction
// is left out without a fio point for it or without device samples.
func DeviceDemand(fio, steps []results.Step) []Demand {
	var out []Demand
	for _, write := range []bool{true, false} {
		rw, metric := "randread", "rps"
		if write {
			rw, metric = "randwrite", "wps"
		}
		capacity, point, bs := randomCapacity(fio, rw)
		if capacity <= 0 {
			continue
		}
		best := Demand{Write: write, PerS: -1}
		for _, s := range steps {
			dev := BusiestDevice(s.Telemetry)
			if dev == "" {
				continue
			}
			if v := s.Telemetry.Mean(DiskMetric(dev, metric)); !math.IsNaN(v) && v > best.PerS {
				best.Users, best.Device, best.PerS = s.Users, dev, v
			}
		}
		if best.PerS < 0 {
			continue
		}
		best.Capacity, best.Point, best.BS = capacity, point, bs
		out = append(out, best)
	}
	return out
}

// randomCapacity is the IOPS of the completed fio point of pattern rw with
// the smallest block size (the highest IOPS among several of that size).
func randomCapacity(fio []results.Step, rw string) (iops float64, point string, bs int64) {
	for _, s := range fio {
		if s.Fio == nil || s.Fio.RW != rw || !Completed(s) {
			continue
		}
		v := Value(s, results.FigureIOPS)
		if point == "" || s.Fio.BS < bs || (s.Fio.BS == bs && v > iops) {
			iops, point, bs = v, s.Name, s.Fio.BS
		}
	}
	return iops, point, bs
}
