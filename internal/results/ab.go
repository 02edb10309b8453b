package results

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// ABResult is an A/B study's comparison as ab.json records it: the same
// workload run on side A and side B, each possibly several times, compared
// per user count.
type ABResult struct {
	LabelA string   `json:"label_a"`
	LabelB string   `json:"label_b"`
	RunsA  int      `json:"runs_a"`
	RunsB  int      `json:"runs_b"`
	Steps  []ABStep `json:"steps"`
	// Average compares the means over the steps both sides completed.
	Average []ABMetric `json:"average"`
	// MaxUsers are the largest loads each side kept (under its ceiling, when
	// the runs stepped to one), per run.
	MaxUsersA []float64 `json:"max_users_a"`
	MaxUsersB []float64 `json:"max_users_b"`
	// OpenA and OpenB mark runs that never reached their ceiling: their
	// largest load is at least the figure.
	OpenA []bool `json:"open_a,omitempty"`
	OpenB []bool `json:"open_b,omitempty"`
	// Cache accounting per side: the share of reads the engine's cache
	// served, and the device reads per second, over all measured steps.
	CacheA *CacheAccount `json:"cache_a,omitempty"`
	CacheB *CacheAccount `json:"cache_b,omitempty"`
}

// ABStep is one user count compared.
type ABStep struct {
	Users   int        `json:"users"`
	Metrics []ABMetric `json:"metrics"`
}

// ABMetric is one compared figure of one step: each side's mean over its
// runs, the spread (min to max) and the change from A to B.
type ABMetric struct {
	Name string `json:"name"`
	// HigherIsBetter decides the sign of an improvement.
	HigherIsBetter bool `json:"higher_is_better"`
	// NeitherBetter says the figure is neither better higher nor lower (a
	// share of database time): a change of it is higher or lower, never
	// better or worse, and ImprovementPct is the change itself.
	NeitherBetter bool    `json:"neither_better,omitempty"`
	A             ABSide  `json:"a"`
	B             ABSide  `json:"b"`
	Differential  float64 `json:"differential"`
	// ImprovementPct is the change from A to B in %, positive when B is
	// better (0 when A is 0, or when NoChangePct says there is none).
	ImprovementPct float64 `json:"improvement_pct"`
	// NoChangePct says no change in % is computed: A is 0, or a side is
	// under the smallest value the figure is read as a ratio from (a
	// fraction of a page refaulted per second); the differential stands.
	NoChangePct bool `json:"no_change_pct,omitempty"`
	// BeyondSpread says the ranges of A's and B's runs do not overlap, so
	// the difference is larger than the run-to-run noise measured here.
	BeyondSpread bool `json:"beyond_spread"`
	// Significance is what the repeats say about the difference.
	Significance ABSignificance `json:"significance"`
}

// ABSignificance is the distribution-free test of B's runs against A's: a
// Mann-Whitney U test, and a difference is called only when it also exceeds
// the spread between repeats of each side.
type ABSignificance struct {
	// Verdict is "significant difference", "no significant difference" or
	// "too few repeats to tell".
	Verdict string `json:"verdict"`
	// P is the test's two-sided p-value; Alpha the level it is read at.
	P     float64 `json:"p"`
	Alpha float64 `json:"alpha"`
	// WithinNoise says the test alone would call the difference, but it is
	// no larger than the spread of one side's own repeats.
	WithinNoise bool `json:"within_noise,omitempty"`
	// NeedPerSide is how many runs per side could show a difference.
	NeedPerSide int `json:"need_per_side"`
	// Ratio is median(B) / median(A); RatioLo and RatioHi its confidence
	// interval at 1 − Alpha, when the sizes and signs allow one.
	Ratio float64 `json:"ratio"`
	// NoRatio says B / A is no number (A's median is zero): Ratio is then
	// left at 0, since JSON has no infinity and a study with a figure at
	// zero on one side (no lock waits) must still write its ab.json.
	NoRatio       bool    `json:"no_ratio,omitempty"`
	RatioInterval bool    `json:"ratio_interval"`
	RatioLo       float64 `json:"ratio_lo,omitempty"`
	RatioHi       float64 `json:"ratio_hi,omitempty"`
}

// RatioValue is median(B) / median(A), NaN where there is none (NoRatio).
func (s ABSignificance) RatioValue() float64 {
	if s.NoRatio {
		return math.NaN()
	}
	return s.Ratio
}

// Significant says the difference is beyond chance and beyond the noise.
func (s ABSignificance) Significant() bool { return s.Verdict == "significant difference" }

// ABSide is one side's figure over its runs.
type ABSide struct {
	Mean float64   `json:"mean"`
	Min  float64   `json:"min"`
	Max  float64   `json:"max"`
	Runs []float64 `json:"runs"`
	// Median is the middle run's value; MedianLo and MedianHi its 95 %
	// confidence interval where there are runs enough for one (6).
	Median     float64 `json:"median"`
	MedianCI   bool    `json:"median_ci"`
	MedianLo   float64 `json:"median_lo,omitempty"`
	MedianHi   float64 `json:"median_hi,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
}

// CacheAccount says where a side's reads were served.
type CacheAccount struct {
	// CacheServedPct is the share of the engine's page reads its cache served.
	CacheServedPct float64 `json:"cache_served_pct"`
	// OSReadsPerS are the page reads the engine asked of the OS, per second.
	OSReadsPerS float64 `json:"os_reads_per_s"`
	// DeviceReadsPerS are the reads that reached the block devices, per second.
	DeviceReadsPerS float64 `json:"device_reads_per_s"`
	// DeviceReadAwaitMS is the mean device read latency.
	DeviceReadAwaitMS float64 `json:"device_read_await_ms"`
}

// ABStudyFile is an A/B study's record in the directory dbio ab writes:
// the comparison, and the results directories of each side's runs.
const ABStudyFile = "ab.json"

// ABStudy is ab.json: the comparison and each side's runs, in the order
// they ran, as paths the study wrote them.
type ABStudy struct {
	Result ABResult `json:"result"`
	RunsA  []string `json:"runs_a"`
	RunsB  []string `json:"runs_b"`
}

// IsABStudy says whether dir holds an A/B study's record (or something in
// its place, which ReadABStudy refuses).
func IsABStudy(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ABStudyFile))
	return err == nil
}

// ReadABStudy reads the A/B study in dir. Its runs are recorded as the
// paths the study was given (relative to where dbio ab ran, or absolute),
// and each lies in a side's directory inside the study's (a-1/<run>): they
// are found there, wherever the study has been moved or is read from, and
// a run not inside the study is refused.
func ReadABStudy(dir string) (ABStudy, error) {
	var s ABStudy
	if err := readJSON(filepath.Join(dir, ABStudyFile), &s); err != nil {
		return s, err
	}
	for _, runs := range []*[]string{&s.RunsA, &s.RunsB} {
		for i, r := range *runs {
			slashed := filepath.ToSlash(filepath.Clean(r))
			parts := strings.Split(slashed, "/")
			if len(parts) < 2 {
				return s, fmt.Errorf("%s: run %q is not in a side's directory of the study", filepath.Join(dir, ABStudyFile), r)
			}
			side, run := parts[len(parts)-2], parts[len(parts)-1]
			if side == ".." || run == ".." || side == "." || run == "." {
				return s, fmt.Errorf("%s: run %q is not in a side's directory of the study", filepath.Join(dir, ABStudyFile), r)
			}
			// A link is not followed out of the study's directory.
			for _, p := range []string{filepath.Join(dir, side), filepath.Join(dir, side, run)} {
				if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
					return s, fmt.Errorf("%s: %s is a link; dbio reads a study's runs only inside its directory", filepath.Join(dir, ABStudyFile), p)
				}
			}
			(*runs)[i] = filepath.Join(dir, side, run)
		}
	}
	if len(s.RunsA) == 0 || len(s.RunsB) == 0 {
		return s, fmt.Errorf("%s: the study has no run on side %s", filepath.Join(dir, ABStudyFile), map[bool]string{true: "A", false: "B"}[len(s.RunsA) == 0])
	}
	return s, nil
}
