package results

// Pacing is how a step offered its load when it ran open loop: every
// virtual user sent its transactions at the intended starts of a schedule
// instead of one after the other. A closed-loop step has none.
type Pacing struct {
	// Arrival is the schedule's process: "fixed" or "poisson".
	Arrival string `json:"arrival"`
	// OfferedTPS is the offered rate over all the step's users, in
	// transactions per second.
	OfferedTPS float64 `json:"offered_tps"`
	// AchievedTPS is the rate of transactions started on the schedule that
	// finished in the measured time (committed, rolled back or failed).
	AchievedTPS float64 `json:"achieved_tps"`
	// Transactions counts them.
	Transactions int64 `json:"transactions"`
	// Late counts those that started more than LateToleranceMS after their
	// intended start: the users could not keep up with the schedule.
	Late            int64   `json:"late"`
	LateToleranceMS float64 `json:"late_tolerance_ms"`
	// Connections is the transaction monitor's pool when the step's users
	// were terminals sharing connections (Arrival "terminals"): a late
	// start is then one that waited beyond the tolerance for a connection.
	Connections int `json:"connections,omitempty"`
}

// ArrivalTerminals is the Arrival of a step whose users were terminals
// pacing themselves with keying and think times through a transaction
// monitor: its intended starts are their submissions.
const ArrivalTerminals = "terminals"

// Terminals says the step's users were terminals sharing a transaction
// monitor's pool (Arrival "terminals"): its name and its figures count
// terminals, not connections.
func (s Step) Terminals() bool { return s.Pacing != nil && s.Pacing.Arrival == ArrivalTerminals }

// Figures and series columns of an open-loop step.
const (
	// FigureLatencyP99Corrected is the 99th percentile of every
	// transaction's latency from its intended start, in ms; the plain
	// FigureLatencyP99 stays the service time, from the actual start.
	FigureLatencyP99Corrected FigureName = "latency_p99_corrected"
	// Per-second columns: the offered and achieved rates (tx/s), the
	// transactions that started late, and percentiles of the latency from
	// the intended start (ms).
	SeriesOfferedTPS          = "offered_tps"
	SeriesAchievedTPS         = "achieved_tps"
	SeriesLate                = "late"
	SeriesLatencyP50Corrected = "latency_p50_corrected_ms"
	SeriesLatencyP99Corrected = "latency_p99_corrected_ms"
)

// GoalSearch is run.json's record of a latency goal search: the objective,
// every probe in the order it ran (each a step of the run), and the answer
// once the search ended.
type GoalSearch struct {
	// Objective is the goal as dbio reads it: "new_order:p99<=50ms".
	Objective string `json:"objective"`
	// Tx is the transaction type judged, empty for all of them; Stat is
	// "mean" or a percentile such as "p99"; LimitMS is the highest value
	// that meets the objective. The statistic is read from the latency
	// from the intended start.
	Tx      string  `json:"tx,omitempty"`
	Stat    string  `json:"stat"`
	LimitMS float64 `json:"limit_ms"`
	// Users are the virtual users every probe ran with.
	Users int `json:"users"`
	// Resolution ends the bisection: "10%" of the rate, or "5" tx/s.
	Resolution string `json:"resolution"`
	// Answer is "found", "below_start" (even the first rate failed) or
	// "at_least" (no rate failed); empty while the search runs.
	Answer string `json:"answer,omitempty"`
	// RateTPS is the highest offered rate that met the objective;
	// FailRateTPS the lowest above it that did not.
	RateTPS     float64 `json:"rate_tps,omitempty"`
	FailRateTPS float64 `json:"fail_rate_tps,omitempty"`
	// Truncated says the probe budget ended the search before its resolution.
	Truncated bool `json:"truncated,omitempty"`
	// Inconsistent says some rate failed at or below one that passed: the
	// answer lies within the run's noise.
	Inconsistent bool        `json:"inconsistent,omitempty"`
	Probes       []GoalProbe `json:"probes"`
}

// Answers of a goal search.
const (
	GoalFound      = "found"
	GoalBelowStart = "below_start"
	GoalAtLeast    = "at_least"
)

// GoalProbe is one probe of a goal search: a step at an offered rate.
type GoalProbe struct {
	// Step is the step's name; Index its index among the run's steps.
	Step  string `json:"step"`
	Index int    `json:"index"`
	// Phase is "bracket", "bisect" or "confirm".
	Phase       string  `json:"phase"`
	OfferedTPS  float64 `json:"offered_tps"`
	AchievedTPS float64 `json:"achieved_tps"`
	// MeasuredMS is the objective's statistic at this rate; nil when no
	// transaction of the objective's type finished.
	MeasuredMS *float64 `json:"measured_ms,omitempty"`
	Pass       bool     `json:"pass"`
	// Reason is "objective met", "objective missed" or "offered rate not achieved".
	Reason string `json:"reason"`
}
