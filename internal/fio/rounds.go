package fio

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"dbio/internal/results"
	"dbio/internal/steady"
)

// sniaRounds is the device preconditioning of SNIA's solid-state
// performance test specification, on dbio's working file: purge, a
// workload-independent fill, then rounds of the test workload until the
// rounds are steady.
//
//  1. Purge: every block of the working file is deallocated (a hole punched
//     over it), so that the filesystem frees them and, where it discards
//     online or at the next fstrim, the device learns they hold nothing.
//     Only dbio's own working file is purged; a device-level purge (secure
//     erase, sanitize) would erase what dbio did not create and is not done.
//  2. Precondition: two sequential passes of 128k writes over the file.
//  3. Rounds: 4k random writes (--bs, --iodepth, --jobs change them), each
//     round one point of --runtime (1 min), judged after each round on the
//     rounds' IOPS with fio's steady-state tests over the last 5 rounds: the
//     largest distance from the window's mean within 10 % of it, and the
//     least-squares slope within 2.5 % of the mean per round (a best-fit line
//     that moves at most 10 % across the window). SNIA's test asks the
//     rounds' range to stay within 20 % of their mean and the best-fit line
//     within 10 %; fio's deviation test is the same idea measured from the
//     mean. At most 25 rounds.
type sniaRounds struct{}

// Rounds of the SNIA-style profile: the window judged and the most rounds run.
const (
	RoundsWindow = 5
	RoundsMax    = 25
)

// sniaCriteria are the default tests on the rounds' IOPS.
var sniaCriteria = []string{"iops:10%", "iops_slope:2.5%"}

func (sniaRounds) Name() string { return "snia-rounds" }

func (sniaRounds) Describe() string {
	return "SNIA-style steady state of a flash device, on dbio's working file: purge (every block of the file deallocated; " +
		"only the file dbio created, never the device), precondition (two sequential 128k write passes), then rounds of " +
		fmt.Sprintf("4k random writes, one --runtime (1m) each, until the last %d rounds' IOPS are steady by fio's tests "+
			"(%s and %s: within 10 %% of their mean, and a best-fit line that moves at most 10 %% across the window), "+
			"at most %d rounds. --steady-state replaces both tests with one (in fio's form, on the rounds' IOPS). "+
			"Takes --bs, --iodepth (32) and --jobs for the rounds.", RoundsWindow, sniaCriteria[0], sniaCriteria[1], RoundsMax)
}

func (sniaRounds) DefaultRuntime() time.Duration { return time.Minute }

// purges marks a profile that purges the working file before its points.
func (sniaRounds) purges() {}

func (p sniaRounds) Points(c Config) ([]results.FioPlan, error) {
	errs := []error{unused(c, p.Name(), "rw", "read-pct", "rates"), single(c.BlockSizes, "bs", p.Name()), single(c.IODepths, "iodepth", p.Name())}
	if c.SteadyWindow > 0 || c.SteadyRamp > 0 {
		errs = append(errs, fmt.Errorf("--ss-window and --ss-ramp do not apply to the %s profile: its rounds are judged over the last %d rounds", p.Name(), RoundsWindow))
	}
	if _, err := roundCriteria(c.SteadyState); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	bs := only(c.BlockSizes, int64(4*kib))
	qd := only(c.IODepths, 32)
	jobs := c.jobsOrCPUs()
	ramp := 0 // each round starts where the one before left the device
	if c.Ramp != nil {
		ramp = c.ramp()
	}
	out := []results.FioPlan{{Name: "fill-128k-write", Series: "fill", RW: "write", BS: 128 * kib, IODepth: 32, Jobs: 1, Loops: 2}}
	for r := 1; r <= RoundsMax; r++ {
		out = append(out, results.FioPlan{Name: fmt.Sprintf("round-%02d-%s-randwrite", r, bsName(bs)), Series: "rounds-" + bsName(bs) + "-randwrite",
			RW: "randwrite", BS: bs, IODepth: qd, Jobs: jobs, RuntimeS: c.runtime(p), RampS: ramp, Round: r})
	}
	return out, nil
}

// roundCriteria are the tests on the rounds' IOPS: --steady-state's one, or
// the profile's two.
func roundCriteria(setting string) ([]steady.Criterion, error) {
	list := sniaCriteria
	if setting != "" && setting != "auto" {
		list = []string{setting}
	}
	var out []steady.Criterion
	for _, s := range list {
		c, err := steady.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("--steady-state: %w", err)
		}
		if err := c.OnRounds(); err != nil {
			return nil, fmt.Errorf("--steady-state %s: %w", s, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// rounder is a profile whose points repeat in rounds until steady: after
// each round it gives the verdict on the rounds so far.
type rounder interface {
	judge(c Config, done []results.FioPoint, last results.FioPoint) *results.FioRounds
}

// purger is a profile that purges the working file before its points.
type purger interface{ purges() }

// judge is the verdict after round last: fio's tests on the IOPS (or
// bytes per second) of the rounds of its series so far, over the last
// RoundsWindow.
func (sniaRounds) judge(c Config, done []results.FioPoint, last results.FioPoint) *results.FioRounds {
	criteria, err := roundCriteria(c.SteadyState)
	if err != nil {
		return nil // the plan was validated
	}
	v := &results.FioRounds{Window: RoundsWindow, Max: RoundsMax}
	for _, cr := range criteria {
		v.Criteria = append(v.Criteria, cr.String())
	}
	var series []float64
	for _, d := range append(append([]results.FioPoint(nil), done...), last) {
		if d.Round == 0 || d.Series != last.Series || d.Label != last.Label || d.Total == nil {
			continue
		}
		value := d.Total.IOPS
		if criteria[0].Metric == string(results.FigureBandwidth) {
			value = d.Total.BytesPerSec
		}
		series = append(series, value)
	}
	v.Last = last.Round >= RoundsMax
	if len(series) < RoundsWindow {
		return v
	}
	window := series[len(series)-RoundsWindow:]
	v.Judged, v.Steady = true, true
	v.WindowIOPS = append([]float64(nil), window...)
	for _, cr := range criteria {
		ch := cr.Evaluate(window)
		v.WindowIOPSMean = results.Round6(ch.Mean)
		v.Steady = v.Steady && ch.Steady
		if f := ch.Figure; !math.IsNaN(f) && !math.IsInf(f, 0) {
			f = results.Round6(f)
			v.Figures = append(v.Figures, &f)
		} else {
			v.Figures = append(v.Figures, nil)
		}
	}
	v.Last = v.Last || v.Steady
	return v
}

func (sniaRounds) Summarize(_ Config, points []results.FioPoint) []string {
	var lines []string
	for _, r := range points {
		v := r.Rounds
		if v == nil || !v.Last || r.Status != results.StatusCompleted {
			continue
		}
		tests := strings.Join(v.Criteria, " and ")
		if v.Steady {
			lines = append(lines, fmt.Sprintf("%s: steady after %d rounds (%s over the last %d), at %s IOPS", r.Label, r.Round, tests, v.Window, groupThousands(v.WindowIOPSMean)))
		} else {
			lines = append(lines, fmt.Sprintf("%s: not steady after %d rounds (%s over the last %d); the last %d averaged %s IOPS", r.Label, r.Round, tests, v.Window, v.Window, groupThousands(v.WindowIOPSMean)))
		}
	}
	return lines
}
