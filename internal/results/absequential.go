package results

// ABSequentialFile is the file of an A/B directory that records a study
// that added runs until it was decided (dbio ab --until-decided).
const ABSequentialFile = "sequential.json"

// ABSequential is what a sequential A/B study decided, after how many runs,
// and every look that led there.
type ABSequential struct {
	// Figure names the figure judged: each run's headline ("TPM at its best step").
	Figure string `json:"figure"`
	// Alpha is the false-difference rate the design holds over every look;
	// MaxPerSide the runs a side it could take; MarginPct the difference
	// (in % either way) under which the sides count as not different.
	Alpha      float64 `json:"alpha"`
	MaxPerSide int     `json:"max_per_side"`
	MarginPct  float64 `json:"margin_pct"`
	// RunsPerSide is how many runs a side the study took.
	RunsPerSide int `json:"runs_per_side"`
	// Decided says the study stopped on a verdict before or at its
	// maximum; Verdict is "significant difference" or "no significant
	// difference" as the A/B table words them, or "undecided at the
	// maximum".
	Decided bool   `json:"decided"`
	Verdict string `json:"verdict"`
	// Looks are the comparisons after each pair of runs.
	Looks []ABLook `json:"looks"`
}

// ABLook is one look of a sequential study.
type ABLook struct {
	// N is the runs a side compared; A and B their figures, in run order.
	N int       `json:"n"`
	A []float64 `json:"a"`
	B []float64 `json:"b"`
	// Z is the standardized Mann-Whitney statistic (positive: B above A),
	// Bound the |Z| that would have called a difference (absent when none
	// could be at this look).
	Z     float64  `json:"z"`
	Bound *float64 `json:"bound,omitempty"`
	// RatioLo and RatioHi bound B/A at 1 - 2·alpha, when available.
	RatioLo *float64 `json:"ratio_lo,omitempty"`
	RatioHi *float64 `json:"ratio_hi,omitempty"`
}
