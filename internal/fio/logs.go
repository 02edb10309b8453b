package fio

import (
	"bufio"
	"compress/gzip"
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

// LogSample is one line of a fio per-interval log (results keeps the
// reader, since a report reads the logs again from the results directory).
type LogSample = results.FioLogSample

// ParseLog reads one fio log file: "time, value, direction, block size, offset" per line.
func ParseLog(r io.Reader) ([]LogSample, error) { return results.ParseFioLog(r) }

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

// JobLogs are one fio job's per-second logs: its averaged logs as the
// results directory keeps them, and its latency histograms.
type JobLogs struct {
	results.FioJobLog
	// Hist are the interval's completion-latency histograms, one per
	// direction and interval.
	Hist []HistSample
}

// HistSample is one line of fio's histogram log: how many I/Os of one
// direction completed in each of fio's latency bins during the interval.
type HistSample struct {
	TimeMS int64
	Dir    int
	// Bins are the bins with a count, by fio's bin index, ascending.
	Bins []HistBin
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
			v, err := strconv.ParseInt(strings.TrimSpace(field), 10, 64)
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
		return s, nil
	})
}

var histName = regexp.MustCompile(`^(.*)_clat_hist\.(\d+)\.log(\.gz)?$`)

// ReadLogs reads every job's iops, bw and clat logs in dir, and its
// latency histogram logs (compressed or not).
func ReadLogs(dir string) ([]JobLogs, error) {
	hists := map[string][]HistSample{}
	averaged, err := results.ReadFioJobLogsAnd(dir, func(name string) error {
		h := histName.FindStringSubmatch(name)
		if h == nil {
			return nil
		}
		samples, err := readHistLog(filepath.Join(dir, name), h[3] != "")
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		hists[h[1]+"."+h[2]] = samples
		return nil
	})
	if err != nil {
		return nil, err
	}
	jobs := map[string]*JobLogs{}
	for _, a := range averaged {
		jobs[a.Job] = &JobLogs{FioJobLog: a}
	}
	for id, samples := range hists {
		if jobs[id] == nil {
			jobs[id] = &JobLogs{FioJobLog: results.FioJobLog{Job: id}}
		}
		jobs[id].Hist = samples
	}
	out := make([]JobLogs, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, *j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Job < out[b].Job })
	return out, nil
}

// readHistLog reads a histogram log, gzipped or not.
func readHistLog(path string, gzipped bool) ([]HistSample, error) {
	f, err := os.Open(path)
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
	index := func(samples []LogSample, job int) map[key]int64 {
		m := map[key]int64{}
		for s := range results.WholeFioIntervals(samples) {
			m[key{job, s.Dir, results.FioSecond(t0, s.TimeMS)}] = s.Value
		}
		return m
	}
	iops, bw, clat := map[key]int64{}, map[key]int64{}, map[key]int64{}
	hist := map[key][]HistBin{}
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
		for h := range results.WholeFioIntervals(j.Hist) {
			hist[key{ji, h.Dir, results.FioSecond(t0, h.TimeMS)}] = h.Bins
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
		out.LatMeanUS = ratio(latSum, latW)
		out.ReadLatMeanUS = ratio(dirLat[0], dirW[0])
		out.WriteLatMeanUS = ratio(dirLat[1], dirW[1])
		out.ReadLatP99US, out.WriteLatP99US, out.LatP99US = math.NaN(), math.NaN(), math.NaN()
		for d := range 2 {
			if histOK[d] {
				all[d] = mergeBins(dirBins[d])
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
			out.LatP99US = HistPercentile(mergeBins(append(append([]HistBin(nil), all[0]...), all[1]...)), 99) / 1000
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

// mergeBins adds up the counts of equal bins, in ascending order of index.
func mergeBins(bins []HistBin) []HistBin {
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
