package fioformat

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"dbio/internal/results"
)

// Per-second logs. dbio asks fio for one averaged sample per second and job
// (log_avg_msec=1000) with Unix timestamps (log_unix_epoch=1), in separate
// files per job (<prefix>_iops.N.log, _bw.N.log, _clat.N.log). fio does not
// log during ramp_time, so these seconds are all measured seconds.
//
// An averaged log holds each second's mean latency, from which no
// percentile can be drawn. For the per-second p99, dbio also asks for fio's
// completion-latency histogram of each second (write_hist_log with
// log_hist_msec=1000, <prefix>_clat_hist.N.log): the count of I/Os that
// completed in the second in each of fio's own latency bins, the bins its
// json+ report and its percentiles are computed from. Summing the jobs'
// bins and applying fio's percentile rule gives the p99 of every I/O of
// the second, exact to fio's bin width (1/64 of a power of two, about
// 1.6 %), which per-I/O logs would give too but at one line per I/O. After
// reading them dbio compresses the histogram logs (.log.gz): a line holds
// 1,856 bins, nearly all zero.

// A results directory keeps these logs in each point's step directory (on
// a fleet, in each host's directory under it): fio's runner reads them as
// a point ends, and a report reads them again from the results directory
// alone, for a fleet's timelines.

// LogSample is one line of a fio per-interval log.
type LogSample struct {
	// TimeMS is when the interval ended, in Unix milliseconds.
	TimeMS int64
	// Value is the interval's mean: IOPS, KiB/s or nanoseconds by log kind.
	Value int64
	// Dir is the data direction: 0 read, 1 write, 2 trim.
	Dir int
}

// IntervalEnd is when the sample's interval ended, and its direction.
func (s LogSample) IntervalEnd() (int64, int) { return s.TimeMS, s.Dir }

// Interval is a logged interval's place in time: when it ended (Unix
// milliseconds) and its data direction.
type Interval interface {
	IntervalEnd() (timeMS int64, dir int)
}

// WholeIntervals are the samples of one job's log that are seconds: at
// the end of a job fio may flush a short last interval (a sample less than
// half a second after the one before it in its direction), which is not a
// second, and every reader of the logs passes it over.
func WholeIntervals[S Interval](samples []S) iter.Seq[S] {
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

// SecondOf is the second a logged interval that ended at timeMS is
// counted in: the whole seconds, to the nearest, from t0 (the first
// interval the jobs read together logged).
func SecondOf(t0, timeMS int64) int64 { return int64(math.Round(float64(timeMS-t0) / 1000)) }

// parseLines reads one of fio's logs line by line, blank lines skipped,
// into what parse makes of each line (numbered from 1 for its messages).
// Lines may be up to 1 MB long: a histogram log's line holds every bin.
// what names the log in a read error.
func parseLines[T any](r io.Reader, what string, parse func(line int, text string) (T, error)) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		v, err := parse(line, text)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// ParseLog reads one fio log file: "time, value, direction, block size, offset" per line.
func ParseLog(r io.Reader) ([]LogSample, error) {
	return parseLines(r, "fio log", func(line int, text string) (LogSample, error) {
		f := strings.Split(text, ",")
		if len(f) < 3 {
			return LogSample{}, fmt.Errorf("fio log line %d: %q has %d fields, want at least 3", line, text, len(f))
		}
		var nums [3]int64
		for i := range nums {
			v, err := strconv.ParseInt(strings.TrimSpace(f[i]), 10, 64)
			if err != nil {
				return LogSample{}, fmt.Errorf("fio log line %d field %d: %w", line, i+1, err)
			}
			nums[i] = v
		}
		// fio writes none of these; a log with one is damaged, and a
		// negative direction would index outside the per-direction sums.
		switch {
		case nums[0] < 0 || nums[1] < 0:
			return LogSample{}, fmt.Errorf("fio log line %d: %q has a negative time or value", line, text)
		case nums[2] < 0 || nums[2] > 2:
			return LogSample{}, fmt.Errorf("fio log line %d: direction %d, want 0 (read), 1 (write) or 2 (trim)", line, nums[2])
		}
		return LogSample{TimeMS: nums[0], Value: nums[1], Dir: int(nums[2])}, nil
	})
}

// HistSample is one line of fio's histogram log: how many I/Os of one
// direction completed in each of fio's latency bins during the interval.
type HistSample struct {
	TimeMS int64
	Dir    int
	// Bins are the bins with a count, by fio's bin index, ascending.
	Bins []HistBin
	// Wrapped is a line on which fio wrote a count of 2^63 or more: its
	// interval histogram is the difference of two running totals, taken
	// unsigned, and it wraps when the later total reads lower (fio 3.33
	// does this now and then, most often over client/server). The line's
	// bins are unknown, so Bins is empty and the interval counts as one
	// without a histogram.
	Wrapped bool
}

// IntervalEnd is when the sample's interval ended, and its direction.
func (h HistSample) IntervalEnd() (int64, int) { return h.TimeMS, h.Dir }

// HistBin is one of fio's latency bins and its count.
type HistBin struct {
	Index int
	Count int64
}

// fio's latency histogram: FIO_IO_U_PLAT_BITS = 6, so 64 bins per power of
// two above 128 ns, in FIO_IO_U_PLAT_GROUP_NR = 29 groups.
const (
	histBits = 6
	histVal  = 1 << histBits
	// HistBins is the number of bins of a full-resolution histogram line.
	HistBins = 29 * histVal
)

// HistBinValue is the latency fio assigns to bin idx, in nanoseconds: the
// middle of the bin (fio's plat_idx_to_val), the value its percentiles and
// json+ report give.
func HistBinValue(idx int) float64 {
	if idx < histVal<<1 {
		return float64(idx)
	}
	errorBits := idx>>histBits - 1
	base := float64(uint64(1) << (errorBits + histBits))
	k := idx % histVal
	return base + (float64(k)+0.5)*float64(uint64(1)<<errorBits)
}

// HistPercentile is fio's percentile of a histogram in nanoseconds: the
// value of the first bin at which the running count reaches p % of all
// (fio's calc_clat_percentiles); NaN for an empty histogram. bins must be
// in ascending order of index.
func HistPercentile(bins []HistBin, p float64) float64 {
	var n int64
	for _, b := range bins {
		n += b.Count
	}
	if n == 0 {
		return math.NaN()
	}
	var sum int64
	for _, b := range bins {
		sum += b.Count
		if float64(sum) >= p/100*float64(n) {
			return HistBinValue(b.Index)
		}
	}
	return HistBinValue(bins[len(bins)-1].Index)
}

// ParseHistLog reads one fio histogram log: "time, direction, block size,
// bin 0, bin 1, …" per line, with fio's full 1,856 bins (hist_coarseness=0,
// which dbio's job files leave at its default).
func ParseHistLog(r io.Reader) ([]HistSample, error) {
	return parseLines(r, "fio histogram log", func(line int, text string) (HistSample, error) {
		f := strings.Split(strings.TrimSuffix(text, ","), ",")
		if len(f) != 3+HistBins {
			return HistSample{}, fmt.Errorf("fio histogram log line %d has %d bins, want %d: dbio reads fio's full-resolution histograms (hist_coarseness=0)", line, len(f)-3, HistBins)
		}
		var s HistSample
		for i, field := range f {
			field = strings.TrimSpace(field)
			v, err := strconv.ParseInt(field, 10, 64)
			if err != nil && i >= 3 {
				if u, uerr := strconv.ParseUint(field, 10, 64); uerr == nil && u > math.MaxInt64 {
					s.Wrapped = true
					continue
				}
			}
			if err != nil {
				return HistSample{}, fmt.Errorf("fio histogram log line %d field %d: %w", line, i+1, err)
			}
			if v < 0 {
				return HistSample{}, fmt.Errorf("fio histogram log line %d field %d is %d: fio writes no negative time, direction or count", line, i+1, v)
			}
			switch {
			case i == 0:
				s.TimeMS = v
			case i == 1:
				if v > 2 {
					return HistSample{}, fmt.Errorf("fio histogram log line %d: direction %d, want 0 (read), 1 (write) or 2 (trim)", line, v)
				}
				s.Dir = int(v)
			case i >= 3 && v > 0:
				s.Bins = append(s.Bins, HistBin{Index: i - 3, Count: v})
			}
		}
		if s.Wrapped {
			s.Bins = nil
		}
		return s, nil
	})
}

var (
	logName  = regexp.MustCompile(`^(.*)_(iops|bw|clat)\.(\d+)\.log$`)
	histName = regexp.MustCompile(`^(.*)_clat_hist\.(\d+)\.log(\.gz)?$`)
)

// LogName splits the name of one of fio's averaged logs into its job
// (the log prefix and fio's job number, "nvme.2") and its kind ("iops",
// "bw" or "clat"); ok is false for another file.
func LogName(name string) (job, kind string, ok bool) {
	m := logName.FindStringSubmatch(name)
	if m == nil {
		return "", "", false
	}
	return m[1] + "." + m[3], m[2], true
}

// HistLogName splits the name of one of fio's latency histogram logs into
// its job, as LogName does, and whether dbio compressed it (.log.gz); ok
// is false for another file.
func HistLogName(name string) (job string, gzipped, ok bool) {
	m := histName.FindStringSubmatch(name)
	if m == nil {
		return "", false, false
	}
	return m[1] + "." + m[2], m[3] != "", true
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
	// Hist are the interval's completion-latency histograms, one per
	// direction and interval (ReadLogs only).
	Hist []HistSample
}

// WrappedHists counts the job's histogram lines whose bins fio wrapped
// (HistSample.Wrapped): intervals whose latency percentiles are unknown.
func (j JobLogs) WrappedHists() int {
	n := 0
	for _, h := range j.Hist {
		if h.Wrapped {
			n++
		}
	}
	return n
}

// MaxLogBytes bounds the averaged logs read from one directory: a job's
// three logs of one line a second take about 8 MB a day.
const MaxLogBytes = 256 << 20

// ReadAveragedLogs reads the IOPS, bandwidth and completion latency logs
// of every job in dir, sorted by job, without their latency histograms:
// what a reader needs that draws no percentile.
func ReadAveragedLogs(dir string) ([]JobLogs, error) { return readLogs(dir, false) }

// ReadLogs reads every job's iops, bw and clat logs in dir, and its
// latency histogram logs (compressed or not), sorted by job.
func ReadLogs(dir string) ([]JobLogs, error) { return readLogs(dir, true) }

// readLogs lists dir once and reads the logs in it as a results directory
// is read (results.OpenIn): regular files only, never through a link, the
// averaged logs together at most MaxLogBytes.
func readLogs(dir string, withHist bool) ([]JobLogs, error) {
	entries, err := results.ReadDirIn(dir, ".")
	if err != nil {
		return nil, err
	}
	jobs := map[string]*JobLogs{}
	job := func(id string) *JobLogs {
		j := jobs[id]
		if j == nil {
			j = &JobLogs{Job: id}
			jobs[id] = j
		}
		return j
	}
	left := int64(MaxLogBytes)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if id, gzipped, ok := HistLogName(e.Name()); ok {
			if !withHist {
				continue
			}
			samples, err := readHistLog(dir, e.Name(), gzipped)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", e.Name(), err)
			}
			job(id).Hist = samples
			continue
		}
		id, kind, ok := LogName(e.Name())
		if !ok {
			continue
		}
		f, err := results.OpenIn(dir, e.Name())
		if err != nil {
			return nil, err
		}
		lr := &io.LimitedReader{R: f, N: left + 1}
		samples, err := ParseLog(lr)
		f.Close()
		if lr.N == 0 {
			return nil, results.Untrusted(dir, fmt.Sprintf("holds more than %d MiB of fio's per-second logs, more than dbio keeps", MaxLogBytes>>20))
		}
		if err != nil {
			return nil, results.Damaged(f.Name(), err)
		}
		left = lr.N - 1
		switch j := job(id); kind {
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

// readHistLog reads the histogram log name in dir, gzipped or not.
func readHistLog(dir, name string, gzipped bool) ([]HistSample, error) {
	f, err := results.OpenIn(dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if gzipped {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		defer z.Close()
		r = z
	}
	return ParseHistLog(r)
}

// CompressHistLogs gzips the histogram logs in dir once they are read
// (name.log becomes name.log.gz), so that a long point's bins, nearly all
// zero, do not fill the results directory.
func CompressHistLogs(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if h := histName.FindStringSubmatch(e.Name()); h == nil || h[3] != "" {
			continue
		}
		if err := gzipFile(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("compress %s: %w", e.Name(), err)
		}
	}
	return nil
}

// gzipFile writes path.gz and removes path once the copy is complete.
func gzipFile(path string) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := path + ".gz.partial"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	z := gzip.NewWriter(out)
	_, err = io.Copy(z, in)
	if cerr := z.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path+".gz")
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Remove(path)
}
