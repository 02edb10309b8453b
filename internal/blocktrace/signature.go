package blocktrace

import (
	"maps"
	"math"
	"slices"
	"time"
)

// Signature is what a trace says about its workload, the figures a capture
// and its replays are compared by. Latencies are in microseconds.
type Signature struct {
	DurationSeconds float64   `json:"duration_s"`
	Reads           OpFigures `json:"reads"`
	Writes          OpFigures `json:"writes"`
	Flushes         OpFigures `json:"flushes"`
	Discards        OpFigures `json:"discards"`
	// FUAWrites are writes that had to reach stable media before completing.
	FUAWrites int64 `json:"fua_writes"`
	// ReadFraction is reads among reads and writes, by requests.
	ReadFraction float64 `json:"read_fraction"`
	// SequentialFraction is the reads and writes that began where the
	// previous one of the same direction on the same device ended.
	SequentialFraction float64 `json:"sequential_fraction"`
	// Sizes counts reads and writes by size, in powers of two.
	Sizes []SizeBin `json:"sizes"`
	// Depths counts requests by the requests in flight on their device once
	// they were issued.
	Depths []DepthBin `json:"depths"`
	// Seconds is the trace second by second, from its start.
	Seconds []Second `json:"seconds"`
	// Processes are the issuing tasks, most requests first.
	Processes []ProcessShare `json:"processes"`
	// Incomplete are requests the trace saw issued but not complete.
	Incomplete int64 `json:"incomplete"`
}

// OpFigures are one operation's totals, rates and latencies.
type OpFigures struct {
	Requests  int64   `json:"requests"`
	Bytes     int64   `json:"bytes"`
	PerSecond float64 `json:"per_s"`
	MBps      float64 `json:"mb_per_s"`
	Latency   Latency `json:"latency_us"`
}

// Latency is a distribution's percentiles, in microseconds (nearest rank).
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
}

// SizeBin counts requests of more than half UpTo bytes and at most UpTo.
type SizeBin struct {
	UpTo   int64 `json:"up_to_bytes"`
	Reads  int64 `json:"reads"`
	Writes int64 `json:"writes"`
}

// DepthBin counts requests issued at one depth.
type DepthBin struct {
	Depth    int   `json:"depth"`
	Requests int64 `json:"requests"`
}

// Second is one second of the trace.
type Second struct {
	ReadIOPS   float64 `json:"read_iops"`
	WriteIOPS  float64 `json:"write_iops"`
	ReadMBps   float64 `json:"read_mb_per_s"`
	WriteMBps  float64 `json:"write_mb_per_s"`
	Flushes    float64 `json:"flushes"`
	ReadP99us  float64 `json:"read_p99_us"`
	WriteP99us float64 `json:"write_p99_us"`
}

// ProcessShare is one issuing task's requests.
type ProcessShare struct {
	Name     string `json:"name"`
	Requests int64  `json:"requests"`
}

const mb = 1e6

// Sign computes t's signature.
func Sign(t Trace) Signature {
	s := Signature{DurationSeconds: t.Duration.Seconds()}
	seconds := int(math.Ceil(t.Duration.Seconds()))
	type secondLat struct{ reads, writes []time.Duration }
	perSecond := make([]Second, seconds)
	secLat := make([]secondLat, seconds)
	lat := map[Op][]time.Duration{}
	figures := map[Op]*OpFigures{Read: &s.Reads, Write: &s.Writes, Flush: &s.Flushes, Discard: &s.Discards}
	sizes := map[int64]*SizeBin{}
	depths := map[int]int64{}
	procs := make([]int64, len(t.Processes))
	type stream struct {
		dev int
		op  Op
	}
	ends := map[stream]int64{}
	var sequential, data int64
	for _, r := range t.Requests {
		f := figures[r.Op]
		if f == nil {
			continue
		}
		f.Requests++
		f.Bytes += r.Size
		depths[r.Depth]++
		if r.Process < len(procs) {
			procs[r.Process]++
		}
		if r.Completed() {
			lat[r.Op] = append(lat[r.Op], r.Latency)
		} else {
			s.Incomplete++
		}
		if r.Op == Write && r.Flags&FUA != 0 {
			s.FUAWrites++
		}
		sec := int(r.At / time.Second)
		inTrace := sec < seconds
		if r.Op == Flush && inTrace {
			perSecond[sec].Flushes++
		}
		if r.Op != Read && r.Op != Write {
			continue
		}
		data++
		k := stream{r.Device, r.Op}
		if end, ok := ends[k]; ok && end == r.Offset {
			sequential++
		}
		ends[k] = r.End()
		up := int64(512)
		for up < r.Size {
			up *= 2
		}
		b := sizes[up]
		if b == nil {
			b = &SizeBin{UpTo: up}
			sizes[up] = b
		}
		if !inTrace {
			if r.Op == Read {
				b.Reads++
			} else {
				b.Writes++
			}
			continue
		}
		if r.Op == Read {
			b.Reads++
			perSecond[sec].ReadIOPS++
			perSecond[sec].ReadMBps += float64(r.Size) / mb
			if r.Completed() {
				secLat[sec].reads = append(secLat[sec].reads, r.Latency)
			}
		} else {
			b.Writes++
			perSecond[sec].WriteIOPS++
			perSecond[sec].WriteMBps += float64(r.Size) / mb
			if r.Completed() {
				secLat[sec].writes = append(secLat[sec].writes, r.Latency)
			}
		}
	}
	for op, f := range figures {
		if d := t.Duration.Seconds(); d > 0 {
			f.PerSecond = float64(f.Requests) / d
			f.MBps = float64(f.Bytes) / mb / d
		}
		f.Latency = Percentiles(lat[op])
	}
	if rw := s.Reads.Requests + s.Writes.Requests; rw > 0 {
		s.ReadFraction = float64(s.Reads.Requests) / float64(rw)
	}
	if data > 0 {
		s.SequentialFraction = float64(sequential) / float64(data)
	}
	for i := range perSecond {
		perSecond[i].ReadP99us = Percentiles(secLat[i].reads).P99
		perSecond[i].WriteP99us = Percentiles(secLat[i].writes).P99
	}
	s.Seconds = perSecond
	for _, up := range slices.Sorted(maps.Keys(sizes)) {
		s.Sizes = append(s.Sizes, *sizes[up])
	}
	for _, d := range slices.Sorted(maps.Keys(depths)) {
		s.Depths = append(s.Depths, DepthBin{Depth: d, Requests: depths[d]})
	}
	for i, n := range procs {
		if n > 0 {
			s.Processes = append(s.Processes, ProcessShare{Name: t.Processes[i], Requests: n})
		}
	}
	slices.SortStableFunc(s.Processes, func(a, b ProcessShare) int {
		switch {
		case a.Requests > b.Requests:
			return -1
		case a.Requests < b.Requests:
			return 1
		}
		return 0
	})
	return s
}

// Percentiles summarizes latencies by nearest rank; none gives zeros.
func Percentiles(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	sorted := slices.Clone(d)
	slices.Sort(sorted)
	us := func(x time.Duration) float64 { return float64(x) / float64(time.Microsecond) }
	rank := func(p float64) float64 {
		i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
		return us(sorted[max(i, 0)])
	}
	var sum time.Duration
	for _, x := range sorted {
		sum += x
	}
	return Latency{
		Mean: us(sum) / float64(len(sorted)),
		P50:  rank(50), P90: rank(90), P99: rank(99), P999: rank(99.9),
		Max: us(sorted[len(sorted)-1]),
	}
}
