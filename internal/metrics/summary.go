package metrics

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency is a latency distribution's summary, in microseconds.
type Latency struct {
	Count  int64   `json:"count"`
	MeanUS float64 `json:"mean_us"`
	P50US  int64   `json:"p50_us"`
	P95US  int64   `json:"p95_us"`
	P99US  int64   `json:"p99_us"`
	P999US int64   `json:"p99_9_us"`
	MaxUS  int64   `json:"max_us"`
}

// Summarize reads the percentiles dbio reports from a histogram.
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Count:  h.TotalCount(),
		MeanUS: h.Mean(),
		P50US:  h.ValueAtQuantile(50),
		P95US:  h.ValueAtQuantile(95),
		P99US:  h.ValueAtQuantile(99),
		P999US: h.ValueAtQuantile(99.9),
		MaxUS:  h.Max(),
	}
}

// TxSummary is one transaction type's figures over a step.
type TxSummary struct {
	Name       string  `json:"name"`
	Committed  int64   `json:"committed"`
	RolledBack int64   `json:"rolled_back"`
	Errors     int64   `json:"errors"`
	Retries    int64   `json:"retries"`
	Reconnects int64   `json:"reconnects,omitempty"`
	PerMinute  float64 `json:"per_minute"`
	// Latency is the service time: from each transaction's actual start.
	Latency Latency `json:"latency"`
	// Corrected is the latency from each transaction's intended start, in
	// a step run on an open-loop schedule; nil in a closed-loop step.
	Corrected *Latency `json:"corrected_latency,omitempty"`
	// Late counts the transactions of an open-loop step that started later
	// than the run's tolerance after their intended start.
	Late int64 `json:"late,omitempty"`
}

// SummarizeTx turns one type's counts over d into its summary; PerMinute counts committed transactions.
func SummarizeTx(name string, c TxCounts, d time.Duration) TxSummary {
	s := TxSummary{
		Name:       name,
		Committed:  c.Committed,
		RolledBack: c.RolledBack,
		Errors:     c.Failed,
		Retries:    c.Retries,
		Reconnects: c.Reconnects,
		PerMinute:  PerMinute(c.Committed, d),
		Latency:    Summarize(c.Latency),
		Late:       c.Late,
	}
	if c.Paced > 0 {
		l := Summarize(c.Corrected)
		s.Corrected = &l
	}
	return s
}

// PerMinute is n events over d, per minute; zero for an empty duration.
func PerMinute(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Minutes()
}
