package fio

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Per-second logs. dbio asks fio for one averaged sample per second and job
// (log_avg_msec=1000) with Unix timestamps (log_unix_epoch=1), in separate
// files per job (<prefix>_iops.N.log, _bw.N.log, _clat.N.log). fio does not
// log during ramp_time, so these seconds are all measured seconds.

// LogSample is one line of a fio per-interval log.
type LogSample struct {
	// TimeMS is when the interval ended, in Unix milliseconds.
	TimeMS int64
	// Value is the interval's mean: IOPS, KiB/s or nanoseconds by log kind.
	Value int64
	// Dir is the data direction: 0 read, 1 write, 2 trim.
	Dir int
}

// ParseLog reads one fio log file: "time, value, direction, block size, offset" per line.
func ParseLog(r io.Reader) ([]LogSample, error) {
	var out []LogSample
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		f := strings.Split(text, ",")
		if len(f) < 3 {
			return nil, fmt.Errorf("fio log line %d: %q has %d fields, want at least 3", line, text, len(f))
		}
		var nums [3]int64
		for i := range nums {
			v, err := strconv.ParseInt(strings.TrimSpace(f[i]), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("fio log line %d field %d: %w", line, i+1, err)
			}
			nums[i] = v
		}
		// fio writes none of these; a log with one is damaged, and a
		// negative direction would index outside the per-direction sums.
		switch {
		case nums[0] < 0 || nums[1] < 0:
			return nil, fmt.Errorf("fio log line %d: %q has a negative time or value", line, text)
		case nums[2] < 0 || nums[2] > 2:
			return nil, fmt.Errorf("fio log line %d: direction %d, want 0 (read), 1 (write) or 2 (trim)", line, nums[2])
		}
		out = append(out, LogSample{TimeMS: nums[0], Value: nums[1], Dir: int(nums[2])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fio log: %w", err)
	}
	return out, nil
}

// JobLogs are one fio job's per-second logs.
type JobLogs struct {
	// Job names the job: the log prefix and fio's job number ("nvme.2").
	Job  string
	IOPS []LogSample
	// BW is in KiB/s, as fio logs it.
	BW []LogSample
	// Clat is the mean completion latency of the interval in nanoseconds.
	Clat []LogSample
}

var logName = regexp.MustCompile(`^(.*)_(iops|bw|clat)\.(\d+)\.log$`)

// ReadLogs reads every job's iops, bw and clat logs in dir.
func ReadLogs(dir string) ([]JobLogs, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	jobs := map[string]*JobLogs{}
	for _, e := range entries {
		m := logName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		id := m[1] + "." + m[3]
		j := jobs[id]
		if j == nil {
			j = &JobLogs{Job: id}
			jobs[id] = j
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		samples, err := ParseLog(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		switch m[2] {
		case "iops":
			j.IOPS = samples
		case "bw":
			j.BW = samples
		case "clat":
			j.Clat = samples
		}
	}
	out := make([]JobLogs, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, *j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Job < out[b].Job })
	return out, nil
}

// Second is one measured second of a point, summed over its jobs.
type Second struct {
	Time      time.Time
	ReadIOPS  float64
	WriteIOPS float64
	MBPerSec  float64
	// LatMeanUS is the mean completion latency over all jobs and directions,
	// each job's mean weighted by its IOPS in that second.
	LatMeanUS      float64
	ReadLatMeanUS  float64
	WriteLatMeanUS float64
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
	}
	if t0 == math.MaxInt64 {
		return nil, 0
	}
	type key struct {
		job, dir int
		sec      int64
	}
	bucket := func(ms int64) int64 { return int64(math.Round(float64(ms-t0) / 1000)) }
	index := func(samples []LogSample, job int) map[key]int64 {
		m := map[key]int64{}
		last := map[int]int64{}
		for _, s := range samples {
			if prev, ok := last[s.Dir]; ok && s.TimeMS-prev < 500 {
				continue // a short final interval
			}
			last[s.Dir] = s.TimeMS
			m[key{job, s.Dir, bucket(s.TimeMS)}] = s.Value
		}
		return m
	}
	iops, bw, clat := map[key]int64{}, map[key]int64{}, map[key]int64{}
	jobDirs := make([]map[int]bool, len(jobs))
	secs := map[int64]bool{}
	for ji, j := range jobs {
		jobDirs[ji] = map[int]bool{}
		for k, v := range index(j.IOPS, ji) {
			iops[k] = v
			jobDirs[ji][k.dir] = true
			secs[k.sec] = true
		}
		for k, v := range index(j.BW, ji) {
			bw[k] = v
		}
		for k, v := range index(j.Clat, ji) {
			clat[k] = v
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
				out.MBPerSec += float64(bw[k]) * 1024 / 1e6
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
		out.LatMeanUS = ratio(latSum, latW)
		out.ReadLatMeanUS = ratio(dirLat[0], dirW[0])
		out.WriteLatMeanUS = ratio(dirLat[1], dirW[1])
		seconds = append(seconds, out)
	}
	return seconds, dropped
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}
