package fioformat

import (
	"math"
	"sort"
	"time"
)

// Second is one measured second of a point, summed over its jobs.
type Second struct {
	// Time is the second's place on the jobs' common grid: whole seconds
	// from the first interval any job logged.
	Time time.Time
	// Logged is when the second's latest IOPS or bandwidth sample was
	// logged: the second as a line of samples places it.
	Logged    time.Time
	ReadIOPS  float64
	WriteIOPS float64
	MBPerSec  float64
	// LatMeanUS is the mean completion latency over all jobs and directions,
	// each job's mean weighted by its IOPS in that second.
	LatMeanUS      float64
	ReadLatMeanUS  float64
	WriteLatMeanUS float64
	// LatP99US is fio's 99th percentile of the completion latency of every
	// I/O that completed in the second, reads and writes together, from the
	// jobs' histogram logs; ReadLatP99US and WriteLatP99US per direction.
	// NaN where a job logged no histogram for the second.
	LatP99US      float64
	ReadLatP99US  float64
	WriteLatP99US float64
	// ReadMBPerSec and WriteMBPerSec split MBPerSec by direction.
	ReadMBPerSec, WriteMBPerSec float64
	// ReadBins and WriteBins are the second's completion-latency bins of
	// every job, merged; nil where some job logged no histogram for the
	// second (the p99s above are NaN then).
	ReadBins, WriteBins []HistBin
}

// IOPS is reads plus writes.
func (s Second) IOPS() float64 { return s.ReadIOPS + s.WriteIOPS }

// MergeSeconds lines the jobs' samples up by second and sums them. Two fio
// habits are handled here rather than hidden: at the end of a job fio may
// flush a short last interval (a sample less than half a second after the
// previous one), which is not a second and is dropped; and fio sometimes
// does not log a job's last interval at all, so a second in which some job
// has no IOPS sample would under-count and is dropped too. Dropped reports
// how many seconds were left out that way.
func MergeSeconds(jobs []JobLogs) (seconds []Second, dropped int) {
	var t0 int64 = math.MaxInt64
	for _, j := range jobs {
		for _, s := range [][]LogSample{j.IOPS, j.BW, j.Clat} {
			if len(s) > 0 && s[0].TimeMS < t0 {
				t0 = s[0].TimeMS
			}
		}
		if len(j.Hist) > 0 && j.Hist[0].TimeMS < t0 {
			t0 = j.Hist[0].TimeMS
		}
	}
	if t0 == math.MaxInt64 {
		return nil, 0
	}
	type key struct {
		job, dir int
		sec      int64
	}
	// logged is when each second's latest IOPS or bandwidth sample was logged.
	logged := map[int64]int64{}
	index := func(samples []LogSample, job int, counted bool) map[key]int64 {
		m := map[key]int64{}
		for s := range WholeIntervals(samples) {
			sec := SecondOf(t0, s.TimeMS)
			m[key{job, s.Dir, sec}] = s.Value
			if counted {
				logged[sec] = max(logged[sec], s.TimeMS)
			}
		}
		return m
	}
	iops, bw, clat := map[key]int64{}, map[key]int64{}, map[key]int64{}
	hist := map[key][]HistBin{}
	jobDirs := make([]map[int]bool, len(jobs))
	secs := map[int64]bool{}
	for ji, j := range jobs {
		jobDirs[ji] = map[int]bool{}
		for k, v := range index(j.IOPS, ji, true) {
			iops[k] = v
			jobDirs[ji][k.dir] = true
			secs[k.sec] = true
		}
		for k, v := range index(j.BW, ji, true) {
			bw[k] = v
		}
		for k, v := range index(j.Clat, ji, false) {
			clat[k] = v
		}
		for h := range WholeIntervals(j.Hist) {
			if h.Wrapped {
				continue // the second's bins are unknown: no percentile for it
			}
			hist[key{ji, h.Dir, SecondOf(t0, h.TimeMS)}] = h.Bins
		}
	}
	order := make([]int64, 0, len(secs))
	for s := range secs {
		order = append(order, s)
	}
	sort.Slice(order, func(a, b int) bool { return order[a] < order[b] })
	for _, sec := range order {
		complete := true
		var out Second
		var latSum, latW float64
		var dirLat, dirW [2]float64
		var all, dirBins [2][]HistBin
		histOK := [2]bool{true, true}
		for ji := range jobs {
			for dir := range jobDirs[ji] {
				k := key{ji, dir, sec}
				n, ok := iops[k]
				if !ok {
					complete = false
					continue
				}
				switch dir {
				case 0:
					out.ReadIOPS += float64(n)
				case 1:
					out.WriteIOPS += float64(n)
				}
				mb := float64(bw[k]) * 1024 / 1e6
				out.MBPerSec += mb
				switch dir {
				case 0:
					out.ReadMBPerSec += mb
				case 1:
					out.WriteMBPerSec += mb
				}
				if dir < 2 {
					if bins, ok := hist[k]; ok {
						dirBins[dir] = append(dirBins[dir], bins...)
					} else if n > 0 {
						histOK[dir] = false // this job's I/Os of the second are not in the bins
					}
				}
				if ns, ok := clat[k]; ok && n > 0 && dir < 2 {
					us := float64(ns) / 1000
					latSum += us * float64(n)
					latW += float64(n)
					dirLat[dir] += us * float64(n)
					dirW[dir] += float64(n)
				}
			}
		}
		if !complete {
			dropped++
			continue
		}
		out.Time = time.UnixMilli(t0 + sec*1000)
		out.Logged = time.UnixMilli(logged[sec])
		out.LatMeanUS = ratio(latSum, latW)
		out.ReadLatMeanUS = ratio(dirLat[0], dirW[0])
		out.WriteLatMeanUS = ratio(dirLat[1], dirW[1])
		out.ReadLatP99US, out.WriteLatP99US, out.LatP99US = math.NaN(), math.NaN(), math.NaN()
		for d := range 2 {
			if histOK[d] {
				all[d] = MergeBins(dirBins[d])
			}
		}
		out.ReadBins, out.WriteBins = all[0], all[1]
		if histOK[0] {
			out.ReadLatP99US = HistPercentile(all[0], 99) / 1000
		}
		if histOK[1] {
			out.WriteLatP99US = HistPercentile(all[1], 99) / 1000
		}
		if histOK[0] && histOK[1] {
			out.LatP99US = HistPercentile(MergeBins(append(append([]HistBin(nil), all[0]...), all[1]...)), 99) / 1000
		}
		seconds = append(seconds, out)
	}
	return seconds, dropped
}

// IOPSStdev is the standard deviation of a point's per-second IOPS (all
// jobs, reads and writes together) around their mean, as DiskSpd reports
// it for its one-second buckets: how far a second strays from the average
// the point reports. It is the population deviation over the seconds
// recorded; zero for fewer than two.
func IOPSStdev(secs []Second) float64 {
	if len(secs) < 2 {
		return 0
	}
	var sum float64
	for _, s := range secs {
		sum += s.IOPS()
	}
	mean := sum / float64(len(secs))
	var sq float64
	for _, s := range secs {
		d := s.IOPS() - mean
		sq += d * d
	}
	return math.Sqrt(sq / float64(len(secs)))
}

// MergeBins adds up the counts of equal bins, in ascending order of index.
func MergeBins(bins []HistBin) []HistBin {
	if len(bins) == 0 {
		return nil
	}
	sort.Slice(bins, func(a, b int) bool { return bins[a].Index < bins[b].Index })
	out := []HistBin{bins[0]}
	for _, b := range bins[1:] {
		if last := &out[len(out)-1]; last.Index == b.Index {
			last.Count += b.Count
		} else {
			out = append(out, b)
		}
	}
	return out
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}
