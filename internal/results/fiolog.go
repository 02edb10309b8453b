package results

import (
	"bufio"
	"fmt"
	"io"
	"iter"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// fio's per-second logs as a results directory keeps them: each point's
// (or, on a fleet, each host's) <prefix>_iops.N.log, _bw.N.log and
// _clat.N.log, one averaged sample per second and job. internal/fio reads
// them as a point ends; the report reads them again, for a fleet's
// timelines, from the results directory alone.

// FioLogSample is one line of a fio per-interval log.
type FioLogSample struct {
	// TimeMS is when the interval ended, in Unix milliseconds.
	TimeMS int64
	// Value is the interval's mean: IOPS, KiB/s or nanoseconds by log kind.
	Value int64
	// Dir is the data direction: 0 read, 1 write, 2 trim.
	Dir int
}

// FioInterval is a logged interval's place in time: when it ended (Unix
// milliseconds) and its data direction.
type FioInterval interface {
	IntervalEnd() (timeMS int64, dir int)
}

// IntervalEnd is when the sample's interval ended, and its direction.
func (s FioLogSample) IntervalEnd() (int64, int) { return s.TimeMS, s.Dir }

// WholeFioIntervals are the samples of one job's log that are seconds: at
// the end of a job fio may flush a short last interval (a sample less than
// half a second after the one before it in its direction), which is not a
// second, and every reader of the logs passes it over.
func WholeFioIntervals[S FioInterval](samples []S) iter.Seq[S] {
	return func(yield func(S) bool) {
		last := map[int]int64{}
		for _, s := range samples {
			ms, dir := s.IntervalEnd()
			if prev, ok := last[dir]; ok && ms-prev < 500 {
				continue
			}
			last[dir] = ms
			if !yield(s) {
				return
			}
		}
	}
}

// FioSecond is the second a logged interval that ended at timeMS is
// counted in: the whole seconds, to the nearest, from t0 (the first
// interval the jobs read together logged).
func FioSecond(t0, timeMS int64) int64 { return int64(math.Round(float64(timeMS-t0) / 1000)) }

// ParseFioLog reads one fio log file: "time, value, direction, block size, offset" per line.
func ParseFioLog(r io.Reader) ([]FioLogSample, error) {
	var out []FioLogSample
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
		out = append(out, FioLogSample{TimeMS: nums[0], Value: nums[1], Dir: int(nums[2])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fio log: %w", err)
	}
	return out, nil
}

var fioLogName = regexp.MustCompile(`^(.*)_(iops|bw|clat)\.(\d+)\.log$`)

// FioLogName splits the name of one of fio's averaged logs into its job
// (the log prefix and fio's job number, "nvme.2") and its kind ("iops",
// "bw" or "clat"); ok is false for another file.
func FioLogName(name string) (job, kind string, ok bool) {
	m := fioLogName.FindStringSubmatch(name)
	if m == nil {
		return "", "", false
	}
	return m[1] + "." + m[3], m[2], true
}

// FioJobLog is one fio job's per-second logs.
type FioJobLog struct {
	// Job names the job: the log prefix and fio's job number ("nvme.2").
	Job  string
	IOPS []FioLogSample
	// BW is in KiB/s, as fio logs it.
	BW []FioLogSample
	// Clat is the mean completion latency of the interval in nanoseconds.
	Clat []FioLogSample
}

// ReadFioJobLogs reads the IOPS, bandwidth and completion latency logs of
// every job in dir, sorted by job.
func ReadFioJobLogs(dir string) ([]FioJobLog, error) {
	return ReadFioJobLogsAnd(dir, nil)
}

// MaxFioLogBytes bounds the averaged logs read from one directory: a
// job's three logs of one line a second take about 8 MB a day.
const MaxFioLogBytes = 256 << 20

// ReadFioJobLogsAnd is ReadFioJobLogs that also hands each other regular
// file in dir to other (when not nil), so a reader of fio's further logs
// (internal/fio's latency histograms) lists the directory once and skips
// links the same way: a link is never followed out of the directory. The
// logs are opened as OpenIn opens them, and together they may hold at
// most MaxFioLogBytes.
func ReadFioJobLogsAnd(dir string, other func(name string) error) ([]FioJobLog, error) {
	entries, err := ReadDirIn(dir, ".")
	if err != nil {
		return nil, err
	}
	jobs := map[string]*FioJobLog{}
	left := int64(MaxFioLogBytes)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		job, kind, ok := FioLogName(e.Name())
		if !ok {
			if other != nil {
				if err := other(e.Name()); err != nil {
					return nil, err
				}
			}
			continue
		}
		f, err := OpenIn(dir, e.Name())
		if err != nil {
			return nil, err
		}
		lr := &io.LimitedReader{R: f, N: left + 1}
		samples, err := ParseFioLog(lr)
		f.Close()
		if lr.N == 0 {
			return nil, untrusted(dir, fmt.Sprintf("holds more than %d MiB of fio's per-second logs, more than dbio keeps", MaxFioLogBytes>>20))
		}
		if err != nil {
			return nil, damaged(f.Name(), err)
		}
		left = lr.N - 1
		j := jobs[job]
		if j == nil {
			j = &FioJobLog{Job: job}
			jobs[job] = j
		}
		switch kind {
		case "iops":
			j.IOPS = samples
		case "bw":
			j.BW = samples
		case "clat":
			j.Clat = samples
		}
	}
	out := make([]FioJobLog, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, *j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Job < out[b].Job })
	return out, nil
}
