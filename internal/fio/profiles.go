package fio

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"dbio/internal/results"
)

// BuiltinProfiles returns a new registry of the built-in profiles, each one
// of the studies docs/methodology.md describes. Each call builds its own, so no
// profile registered by one caller is seen by another.
func BuiltinProfiles() *Registry {
	// In the order --help and messages list them: by name.
	r := NewRegistry()
	for _, p := range []Profile{crystalDiskMark{}, curve{}, fourCorners{}, job{}, mix{}, precondition{}, sniaRounds{}, sqlio{}, sqlServer{}} {
		r.Register(p)
	}
	return r
}

var (
	_ Profile      = fourCorners{}
	_ Profile      = sqlio{}
	_ Profile      = mix{}
	_ Profile      = curve{}
	_ Profile      = precondition{}
	_ Profile      = job{}
	_ Profile      = crystalDiskMark{}
	_ Profile      = sniaRounds{}
	_ Profile      = sqlServer{}
	_ DefaultSizer = crystalDiskMark{}
	_ Summarizer   = fourCorners{}
	_ Summarizer   = precondition{}
	_ Summarizer   = sniaRounds{}
	_ Summarizer   = sqlServer{}
	_ purger       = sniaRounds{}
	_ rounder      = sniaRounds{}
)

const (
	kib = 1 << 10
	mib = 1 << 20
)

// corner is one of the four corners with the outstanding I/Os that saturate
// a device in the hybrid NVMe/SATA study (vdbench threads: 128 for 4k random,
// 32 for 64k sequential reads, 16 for 64k sequential writes).
type corner struct {
	rw          string
	bs          int64
	outstanding int
}

var corners = []corner{
	{"randread", 4 * kib, 128},
	{"randwrite", 4 * kib, 128},
	{"read", 64 * kib, 32},
	{"write", 64 * kib, 16},
	{"read", 128 * kib, 32},
	{"write", 128 * kib, 16},
}

// saturating returns the jobs and queue depth for a pattern: random I/O is
// spread over up to four jobs (one per CPU), sequential I/O stays in one job
// with a deep queue unless the user asks for more jobs, which then each get
// their own slice of the file.
func saturating(c Config, rw string, outstanding int) (jobs, iodepth int, split bool) {
	random := strings.HasPrefix(rw, "rand")
	jobs = c.Jobs
	if jobs == 0 {
		jobs = 1
		if random {
			jobs = c.jobsOrCPUs()
		}
	}
	if len(c.IODepths) > 0 {
		iodepth = c.IODepths[0]
	} else {
		iodepth = max(1, (outstanding+jobs-1)/jobs)
	}
	return jobs, iodepth, !random && jobs > 1
}

// outstandingFor is the saturating total queue of a pattern and block size.
func outstandingFor(rw string) int {
	switch rw {
	case "read":
		return 32
	case "write":
		return 16
	default:
		return 128
	}
}

// unused rejects settings a profile has no use for, naming the flags.
func unused(c Config, profile string, settings ...string) error {
	var errs []error
	for _, s := range settings {
		set := false
		switch s {
		case "bs":
			set = len(c.BlockSizes) > 0
		case "rw":
			set = len(c.RW) > 0
		case "read-pct":
			set = c.ReadPct != nil
		case "rates":
			set = len(c.RatePcts) > 0
		}
		if set {
			errs = append(errs, fmt.Errorf("--%s does not apply to the %s profile (see 'dbio disk --help' for the flags each profile takes)", s, profile))
		}
	}
	return errors.Join(errs...)
}

func single[T any](list []T, flag, profile string) error {
	if len(list) > 1 {
		return fmt.Errorf("--%s: the %s profile takes one value, got %d", flag, profile, len(list))
	}
	return nil
}

func bsName(bs int64) string {
	switch {
	case bs%mib == 0:
		return fmt.Sprintf("%dm", bs/mib)
	case bs%kib == 0:
		return fmt.Sprintf("%dk", bs/kib)
	}
	return fmt.Sprintf("%db", bs)
}

// fourCorners is the classic device envelope: small random I/O (IOPS) and
// large sequential I/O (MB/s), each way; then what a commit costs at the
// device (logWritePoints).
type fourCorners struct{}

func (fourCorners) Name() string { return "four-corners" }

func (fourCorners) Describe() string {
	return "4k random read and write, 64k and 128k sequential read and write: the device's envelope. " +
		"Each corner gets the queue that saturates a device in the hybrid NVMe/SATA study: 128 I/Os in flight " +
		"for 4k random (over up to 4 jobs), 32 for sequential reads, 16 for sequential writes. Then two log-write " +
		"points, 8k and 16k sequential writes one at a time with O_DSYNC, as a database's log writer makes a commit " +
		"durable: read by their p50 and p99 latency. Takes --iodepth (one value) and --jobs, which leave the " +
		"log-write points at one job and one I/O in flight."
}

func (fourCorners) DefaultRuntime() time.Duration { return time.Minute }

func (p fourCorners) Points(c Config) ([]results.FioPlan, error) {
	if err := errors.Join(unused(c, p.Name(), "bs", "rw", "read-pct", "rates"), single(c.IODepths, "iodepth", p.Name())); err != nil {
		return nil, err
	}
	var out []results.FioPlan
	for _, k := range corners {
		jobs, qd, split := saturating(c, k.rw, k.outstanding)
		name := bsName(k.bs) + "-" + k.rw
		out = append(out, results.FioPlan{Name: name, Series: name, RW: k.rw, BS: k.bs, IODepth: qd, Jobs: jobs, Split: split,
			RuntimeS: c.runtime(p), RampS: c.ramp()})
	}
	return append(out, logWritePoints(c, p)...), nil
}

// Summarize gives each log-write point's p50 and p99: the terminal line
// and run.json's note a DBA reads as the price of a commit at the device.
func (fourCorners) Summarize(_ Config, points []results.FioPoint) []string {
	var lines []string
	for _, r := range points {
		if !r.LogWrite() || r.Status != results.StatusCompleted || r.Total == nil {
			continue
		}
		p50, p99 := "-", p99Text(r.Total)
		if v, ok := r.Total.Completion.At(50); ok {
			p50 = formatUS(v)
		}
		device, how := "the device", fmt.Sprintf("%s sequential writes, one at a time, O_DSYNC", bsName(r.BS))
		if n := len(r.Targets); n > 1 {
			// A drive group or a fleet: fio's percentiles count every target's writes together.
			device, how = "the devices", how+fmt.Sprintf(", a writer on each of %d targets at once, their writes counted together", n)
		}
		lines = append(lines, fmt.Sprintf("%s: a commit's log write costs %s %s at p50, %s at p99 (%s)", r.Name, device, p50, p99, how))
	}
	return lines
}

// logWriteSizes are the log-write points' blocks: PostgreSQL's WAL page
// (8k, what a lone small commit writes and syncs) and two of them (a
// commit that spills onto a second page, or two commits synced together).
var logWriteSizes = []int64{8 * kib, 16 * kib}

// logWritePoints time a commit at the device: one job writing
// sequentially, one write in flight, each write durable before it returns,
// as a database's log writer works. Queue depth and jobs are fixed: a
// deeper queue would measure throughput, not the wait of one commit.
//
// Durability is fio's sync=dsync (WriteThrough; jobfile.go writes it
// beside direct=1): the working file is opened with O_DSYNC, as
// pg_test_fsync's open_datasync test opens its file (with O_DIRECT too,
// when the filesystem takes it) and as PostgreSQL's wal_sync_method =
// open_datasync opens the WAL. Each write then returns only once its data
// is stable, so fio's completion latency is the whole cost of the write and
// its flush in one figure. fio's fdatasync=1, the other form (a write, then
// fdatasync, as wal_sync_method = fdatasync does), times the syncs apart
// from the writes, and neither figure alone is what a commit waits for.
// The file is laid out before the point, so, like a database's recycled
// log segments, no write extends it and no sync has metadata to flush.
func logWritePoints(c Config, p Profile) []results.FioPlan {
	var out []results.FioPlan
	for _, bs := range logWriteSizes {
		out = append(out, results.FioPlan{Name: bsName(bs) + "-log-write", Series: results.FioSeriesLogWrite, RW: "write", BS: bs,
			IODepth: 1, Jobs: 1, WriteThrough: true, RuntimeS: c.runtime(p), RampS: c.ramp()})
	}
	return out
}

// sqlio is the DBA's field matrix: block sizes × outstanding I/Os × patterns,
// one job per CPU, judged by the best figures within a latency bound.
type sqlio struct{}

func (sqlio) Name() string { return "sqlio" }

func (sqlio) Describe() string {
	return "The SQLIO field matrix: block sizes 8k,64k,128k,256k,512k,1m × outstanding I/Os per job 1,8,32,64 × " +
		"random and sequential reads and writes, one job per CPU: 96 points, as in the study (--rw randread,randwrite " +
		"keeps the 48 random ones). The summary is the best IOPS and MB/s among the points whose latency stays " +
		"under --latency-max (20ms, mean by default; --latency-stat p99). Takes --bs, --iodepth and --rw lists and --jobs."
}

func (sqlio) DefaultRuntime() time.Duration { return time.Minute }

func (p sqlio) Points(c Config) ([]results.FioPlan, error) {
	if err := unused(c, p.Name(), "read-pct", "rates"); err != nil {
		return nil, err
	}
	sizes := c.BlockSizes
	if len(sizes) == 0 {
		sizes = []int64{8 * kib, 64 * kib, 128 * kib, 256 * kib, 512 * kib, 1024 * kib}
	}
	depths := c.IODepths
	if len(depths) == 0 {
		depths = []int{1, 8, 32, 64}
	}
	patterns := c.RW
	if len(patterns) == 0 {
		patterns = []string{"randread", "randwrite", "read", "write"}
	}
	jobs := c.Jobs
	if jobs == 0 {
		jobs = max(c.CPUs, 1)
	}
	var out []results.FioPlan
	for _, rw := range patterns {
		if Mixed(rw) {
			return nil, fmt.Errorf("--rw %s: the sqlio profile measures one direction at a time; use the mix profile for mixes", rw)
		}
		for _, bs := range sizes {
			for _, qd := range depths {
				out = append(out, results.FioPlan{Name: fmt.Sprintf("%s-%s-qd%d", rw, bsName(bs), qd), Series: rw, RW: rw, BS: bs,
					IODepth: qd, Jobs: jobs, Split: !strings.HasPrefix(rw, "rand") && jobs > 1, RuntimeS: c.runtime(p), RampS: c.ramp()})
			}
		}
	}
	return out, nil
}

func (sqlio) latencyBounded() {}

// mix is a read/write mix over block sizes: the 70/30 datastore study.
type mix struct{}

func (mix) Name() string { return "mix" }

func (mix) Describe() string {
	return "A random read/write mix over block sizes: the 70 % read / 30 % write datastore study, queue depth 8 " +
		"and 4 jobs, block sizes 4k to 256k. Takes --read-pct (70), --bs and --iodepth lists, --jobs (4) and " +
		"--rw randrw or rw (sequential mix)."
}

func (mix) DefaultRuntime() time.Duration { return time.Minute }

func (p mix) Points(c Config) ([]results.FioPlan, error) {
	if err := errors.Join(unused(c, p.Name(), "rates"), single(c.RW, "rw", p.Name())); err != nil {
		return nil, err
	}
	rw := only(c.RW, "randrw")
	if !Mixed(rw) {
		return nil, fmt.Errorf("--rw %s: the mix profile mixes reads and writes; use randrw or rw (or --read-pct 100 for reads only)", rw)
	}
	pct := 70
	if c.ReadPct != nil {
		pct = *c.ReadPct
	}
	sizes := c.BlockSizes
	if len(sizes) == 0 {
		sizes = []int64{4 * kib, 8 * kib, 16 * kib, 32 * kib, 64 * kib, 128 * kib, 256 * kib}
	}
	depths := c.IODepths
	if len(depths) == 0 {
		depths = []int{8}
	}
	jobs := c.Jobs
	if jobs == 0 {
		jobs = 4
	}
	var out []results.FioPlan
	for _, qd := range depths {
		for _, bs := range sizes {
			name := fmt.Sprintf("r%d-%s", pct, bsName(bs))
			if len(depths) > 1 {
				name += fmt.Sprintf("-qd%d", qd)
			}
			out = append(out, results.FioPlan{Name: name, Series: fmt.Sprintf("%s-r%d-qd%d", rw, pct, qd), RW: rw, BS: bs, ReadPct: pct,
				IODepth: qd, Jobs: jobs, Split: rw == "rw" && jobs > 1, RuntimeS: c.runtime(p), RampS: c.ramp()})
		}
	}
	return out, nil
}

// defaultRatePcts are the curve's rates: 10 % to 120 % of the maximum, as in
// the hybrid NVMe/SATA study. Past 100 % fio cannot keep up, which is the point:
// latency at saturation. A function, so that no caller holds the one slice.
func defaultRatePcts() []float64 {
	return []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120}
}

// curve measures the maximum rate, then fixed rates below and above it.
type curve struct{}

func (curve) Name() string { return "curve" }

func (curve) Describe() string {
	return "An I/O-rate curve: one unthrottled point finds the maximum IOPS, then fio's rate limiting runs " +
		"10 % to 120 % of it, giving throughput against latency and where latency bends. Takes --rw (randread), " +
		"--bs (4k), --read-pct for mixes, --iodepth and --jobs (the saturating corner's by default) and --rates."
}

func (curve) DefaultRuntime() time.Duration { return time.Minute }

func (p curve) Points(c Config) ([]results.FioPlan, error) {
	if err := errors.Join(single(c.RW, "rw", p.Name()), single(c.BlockSizes, "bs", p.Name()), single(c.IODepths, "iodepth", p.Name())); err != nil {
		return nil, err
	}
	rw, bs := only(c.RW, "randread"), only(c.BlockSizes, 4*kib)
	pct, err := readShare(rw, c.ReadPct)
	if err != nil {
		return nil, err
	}
	rates := c.RatePcts
	if len(rates) == 0 {
		rates = defaultRatePcts()
	}
	jobs, qd, split := saturating(c, rw, outstandingFor(rw))
	base := results.FioPlan{Series: rw + "-" + bsName(bs), RW: rw, BS: bs, ReadPct: pct, IODepth: qd, Jobs: jobs, Split: split,
		RuntimeS: c.runtime(p), RampS: c.ramp()}
	maxPt := base
	maxPt.Name = base.Series + "-max"
	out := []results.FioPlan{maxPt}
	for _, r := range rates {
		pt := base
		pt.Name = fmt.Sprintf("%s-rate-%spct", base.Series, trimFloat(r))
		pt.RateOf, pt.RatePct = maxPt.Name, r
		out = append(out, pt)
	}
	return out, nil
}

// precondition brings a flash device to steady state before it is measured.
type precondition struct{}

func (precondition) Name() string { return "precondition" }

func (precondition) Describe() string {
	return "Brings flash to steady state: two sequential 128k passes over the working file, then 4k random writes " +
		"until fio's steady-state detection holds (IOPS slope within 10 % across a 60 s window by default; --steady-state " +
		"and --ss-window change it) or --runtime (30m) runs out. Reports how long steady state took, or that it never " +
		"came. Takes --bs, --iodepth (32) and --jobs for the random phase."
}

func (precondition) DefaultRuntime() time.Duration { return 30 * time.Minute }

func (precondition) untilSteady() {}

func (p precondition) Points(c Config) ([]results.FioPlan, error) {
	if err := errors.Join(unused(c, p.Name(), "rw", "read-pct", "rates"), single(c.BlockSizes, "bs", p.Name()), single(c.IODepths, "iodepth", p.Name())); err != nil {
		return nil, err
	}
	bs := only(c.BlockSizes, int64(4*kib))
	qd := only(c.IODepths, 32)
	jobs := c.jobsOrCPUs()
	criterion := c.SteadyState
	if criterion == "" {
		criterion = "auto"
	}
	window := c.steadyWindow()
	fill := results.FioPlan{Name: "fill-128k-write", Series: "fill", RW: "write", BS: 128 * kib, IODepth: 32, Jobs: 1, Loops: 2}
	steady := results.FioPlan{Name: "steady-" + bsName(bs) + "-randwrite", Series: "steady", RW: "randwrite", BS: bs, IODepth: qd, Jobs: jobs,
		RuntimeS: c.runtime(p), RampS: c.ramp(), SteadyState: steadyCriterionFor(criterion, window), SteadyWindowS: window, SteadyRampS: c.steadyRamp()}
	if steady.RuntimeS < window+steady.SteadyRampS {
		return nil, fmt.Errorf("--runtime %ds is shorter than the steady-state window %ds (after --ss-ramp %ds): steady state could never be judged; raise --runtime or lower --ss-window",
			steady.RuntimeS, window, steady.SteadyRampS)
	}
	return []results.FioPlan{fill, steady}, nil
}

func (precondition) Summarize(_ Config, points []results.FioPoint) []string {
	var lines []string
	for _, r := range points {
		if r.Steady == nil || r.Status != results.StatusCompleted {
			continue
		}
		ss := r.Steady
		if ss.Attained {
			lines = append(lines, fmt.Sprintf("%s: steady state (%s over %ds) reached after %ds, warm-up included, at %s IOPS",
				r.Name, r.SteadyState, ss.WindowS, r.ElapsedS, groupThousands(ss.WindowIOPSMean)))
		} else {
			lines = append(lines, fmt.Sprintf("%s: never settled (%s over %ds) within %ds; last window %s IOPS, fio measured %s",
				r.Name, r.SteadyState, ss.WindowS, r.ElapsedS, groupThousands(ss.WindowIOPSMean), ss.Value))
		}
	}
	return lines
}

// job is one fio job exactly as given: the form a DiskSpd or SQLIO command
// line takes. Unlike the studies above it chooses nothing for the user.
type job struct{}

func (job) Name() string { return "job" }

func (job) Describe() string {
	return "One fio job exactly as given, the form a DiskSpd or SQLIO command line takes (--diskspd, --sqlio): " +
		"--rw (randread), --bs (4k), --iodepth (1), --jobs (1) and, for randrw or rw, --read-pct (70). Every job " +
		"covers the whole working file, as fio's numjobs and DiskSpd's threads do."
}

func (job) DefaultRuntime() time.Duration { return time.Minute }

func (p job) Points(c Config) ([]results.FioPlan, error) {
	if err := errors.Join(unused(c, p.Name(), "rates"), single(c.RW, "rw", p.Name()), single(c.BlockSizes, "bs", p.Name()),
		single(c.IODepths, "iodepth", p.Name())); err != nil {
		return nil, err
	}
	rw, bs, qd, jobs := only(c.RW, "randread"), only(c.BlockSizes, 4*kib), only(c.IODepths, 1), max(c.Jobs, 1)
	pct, err := readShare(rw, c.ReadPct)
	if err != nil {
		return nil, err
	}
	if c.BlockAlign > 0 && !strings.HasPrefix(rw, "rand") {
		return nil, fmt.Errorf("block alignment %d applies to random I/O, not %s", c.BlockAlign, rw)
	}
	name := fmt.Sprintf("%s-%s-t%d-q%d", rw, bsName(bs), jobs, qd)
	if Mixed(rw) {
		name = fmt.Sprintf("%s%d-%s-t%d-q%d", rw, pct, bsName(bs), jobs, qd)
	}
	return []results.FioPlan{{Name: name, Series: rw, RW: rw, BS: bs, ReadPct: pct, IODepth: qd, Jobs: jobs,
		BlockAlign: c.BlockAlign, RuntimeS: c.runtime(p), RampS: c.ramp()}}, nil
}

// crystalDiskMark is CrystalDiskMark's default test set: what a Windows
// user quotes for a drive, measured the same way on Linux.
type crystalDiskMark struct{}

// cdmTests are CrystalDiskMark's four default tests, in its order.
var cdmTests = []struct {
	name   string
	random bool
	bs     int64
	queue  int
}{
	{"seq1m-q8t1", false, mib, 8},
	{"seq1m-q1t1", false, mib, 1},
	{"rnd4k-q32t1", true, 4 * kib, 32},
	{"rnd4k-q1t1", true, 4 * kib, 1},
}

func (crystalDiskMark) Name() string { return "crystaldiskmark" }

func (crystalDiskMark) Describe() string {
	return "CrystalDiskMark's default tests: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1 and RND4K Q1T1, all four read, then all " +
		"four written, one thread each, O_DIRECT, on a 1 GiB file (--size). Each point is measured for 5 s (--runtime) " +
		"after a 5 s pass left out of its figures (--ramp-time), as CrystalDiskMark's own unmeasured first pass. " +
		"CrystalDiskMark shows the best of 5 passes; dbio measures one and reports its mean (a longer --runtime " +
		"gives the same exposure). Takes no --bs, --iodepth, --jobs or --rw: the tests fix them."
}

func (crystalDiskMark) DefaultRuntime() time.Duration { return 5 * time.Second }

// DefaultSize is CrystalDiskMark's default test size, 1 GiB.
func (crystalDiskMark) DefaultSize() int64 { return 1 << 30 }

func (p crystalDiskMark) Points(c Config) ([]results.FioPlan, error) {
	if err := unused(c, p.Name(), "bs", "rw", "read-pct", "rates"); err != nil {
		return nil, err
	}
	if len(c.IODepths) > 0 || c.Jobs > 0 {
		return nil, fmt.Errorf("--iodepth and --jobs do not apply to the %s profile: its tests fix the queue (Q) and threads (T1)", p.Name())
	}
	var out []results.FioPlan
	for _, dir := range []string{"read", "write"} {
		for _, t := range cdmTests {
			rw := dir
			if t.random {
				rw = "rand" + dir
			}
			name := t.name + "-" + dir
			out = append(out, results.FioPlan{Name: name, Series: name, RW: rw, BS: t.bs, IODepth: t.queue, Jobs: 1,
				RuntimeS: c.runtime(p), RampS: c.ramp()})
		}
	}
	return out, nil
}

// only is a list's one value (the profile has checked it holds at most
// one), or def when it is empty.
func only[T any](list []T, def T) T {
	if len(list) == 1 {
		return list[0]
	}
	return def
}

// readShare is the percentage of reads of rw: 70 for a mixed rw unless
// readPct says otherwise, 0 for one direction, where --read-pct is refused.
func readShare(rw string, readPct *int) (int, error) {
	switch {
	case Mixed(rw) && readPct != nil:
		return *readPct, nil
	case Mixed(rw):
		return 70, nil
	case readPct != nil:
		return 0, fmt.Errorf("--read-pct applies to a mixed --rw (randrw or rw), not %s", rw)
	}
	return 0, nil
}

// jobsOrCPUs is --jobs, or by default one job per CPU up to four: enough
// submitters to keep a random load's queue full without one per core of a
// large machine.
func (c Config) jobsOrCPUs() int {
	if c.Jobs != 0 {
		return c.Jobs
	}
	return min(max(c.CPUs, 1), 4)
}
