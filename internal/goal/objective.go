// Package goal holds the latency goal of a run (a service-level objective
// such as "p99 of new_order at most 50 ms") and the search for the highest
// offered rate that meets it: bracketing upward from a start rate, then
// bisection between the last rate that met the objective and the first that
// did not, down to a stated resolution.
//
// The package is pure logic: a probe function runs a step at a rate and
// reports what it measured through the small Latencies interface, so any
// workload and any result format can be searched.
package goal

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AllTypes is the transaction type of an objective over every transaction.
const AllTypes = ""

// Objective is a latency goal: a statistic of one transaction type's (or all
// transactions') latency that must not exceed Limit.
type Objective struct {
	// Tx is the transaction type, e.g. "new_order"; AllTypes for all.
	Tx string
	// Mean selects the mean instead of a percentile.
	Mean bool
	// Percentile is the percentile in (0, 100] when Mean is false: 99.9 for p99.9.
	Percentile float64
	// Limit is the highest latency that meets the objective.
	Limit time.Duration
}

// ErrSyntax marks an objective that does not parse; the message names the accepted form.
var ErrSyntax = errors.New("malformed latency objective")

const objectiveForm = "use [TYPE:]STAT<=DURATION, STAT a percentile such as p99 or p99.9 or the word mean, " +
	"TYPE a transaction type (all types when left out), e.g. p99<=50ms or new_order:p99.9<=200ms"

// ParseObjective reads an objective such as "p99<=50ms", "new_order:p99<=50ms",
// "mean<=10ms" or "all:p99.9<=200ms". The duration takes Go's units (us, ms, s).
func ParseObjective(s string) (Objective, error) {
	bad := func(why string) (Objective, error) {
		return Objective{}, fmt.Errorf("%w %q: %s; %s", ErrSyntax, s, why, objectiveForm)
	}
	text := strings.TrimSpace(s)
	if text == "" {
		return bad("it is empty")
	}
	var o Objective
	if tx, rest, found := strings.Cut(text, ":"); found {
		tx = strings.TrimSpace(tx)
		if tx == "" {
			return bad("the transaction type before ':' is empty")
		}
		for _, r := range tx {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return bad(fmt.Sprintf("transaction type %q may only hold letters, digits, '_' and '-'", tx))
			}
		}
		if !strings.EqualFold(tx, "all") {
			o.Tx = tx
		}
		text = rest
	}
	stat, limit, found := strings.Cut(text, "<=")
	if !found {
		if strings.ContainsAny(text, "<>=") {
			return bad("the only comparison is <= (at most)")
		}
		return bad("there is no <=")
	}
	stat = strings.ToLower(strings.TrimSpace(stat))
	switch {
	case stat == "mean":
		o.Mean = true
	case strings.HasPrefix(stat, "p"):
		p, err := strconv.ParseFloat(stat[1:], 64)
		if err != nil || !(p > 0 && p <= 100) {
			return bad(fmt.Sprintf("percentile %q must be p followed by a number above 0 and at most 100", stat))
		}
		o.Percentile = p
	default:
		return bad(fmt.Sprintf("statistic %q is neither a percentile (p99) nor mean", stat))
	}
	limit = strings.ReplaceAll(strings.TrimSpace(limit), " ", "") // "50 ms"
	d, err := time.ParseDuration(limit)
	if err != nil {
		return bad(fmt.Sprintf("limit %q is not a duration with a unit, such as 50ms", limit))
	}
	if d <= 0 {
		return bad(fmt.Sprintf("limit %v must be above zero", d))
	}
	o.Limit = d
	return o, nil
}

// For resolves the objective's transaction type among a workload's types,
// ignoring case and '-' for '_' ("New-Order" is new_order), and returns the
// objective with the workload's spelling; an objective over all types
// needs none.
func (o Objective) For(types []string) (Objective, error) {
	if o.Tx == AllTypes {
		return o, nil
	}
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	for _, t := range types {
		if norm(t) == norm(o.Tx) {
			o.Tx = t
			return o, nil
		}
	}
	return o, fmt.Errorf("objective %s: the workload has no transaction type %q: name one of %s, or none for every type",
		o, o.Tx, strings.Join(types, ", "))
}

// Stat names the statistic: "mean" or "p99.9".
func (o Objective) Stat() string {
	if o.Mean {
		return "mean"
	}
	return "p" + strconv.FormatFloat(o.Percentile, 'f', -1, 64)
}

// String writes the objective in the form ParseObjective reads.
func (o Objective) String() string {
	s := o.Stat() + "<=" + o.Limit.String()
	if o.Tx != AllTypes {
		s = o.Tx + ":" + s
	}
	return s
}

// Latencies is what a step measured, per transaction type. Implementations
// usually read HDR histograms; Table is a plain one.
type Latencies interface {
	// Percentile returns the latency at percentile p (0 < p ≤ 100) of type
	// tx, or of all transactions when tx is AllTypes.
	Percentile(tx string, p float64) (time.Duration, error)
	// Mean returns the mean latency of type tx, or of all when AllTypes.
	Mean(tx string) (time.Duration, error)
}

// Errors a Latencies returns; check them with errors.Is.
var (
	// ErrNoSamples means the step completed no transaction of the type.
	ErrNoSamples = errors.New("no transactions of that type were measured")
	// ErrNotRecorded means the step's figures do not include that percentile.
	ErrNotRecorded = errors.New("percentile not recorded")
)

// Evaluation is an objective judged against one step.
type Evaluation struct {
	// Measured is the step's value of the objective's statistic.
	Measured time.Duration
	// Met is true when Measured is at most the limit.
	Met bool
}

// Evaluate judges the objective against a step's latencies.
func (o Objective) Evaluate(l Latencies) (Evaluation, error) {
	var (
		d   time.Duration
		err error
	)
	if o.Mean {
		d, err = l.Mean(o.Tx)
	} else {
		d, err = l.Percentile(o.Tx, o.Percentile)
	}
	if err != nil {
		return Evaluation{}, fmt.Errorf("objective %s: %w", o, err)
	}
	return Evaluation{Measured: d, Met: d <= o.Limit}, nil
}

// Figures are one transaction type's latency figures.
type Figures struct {
	// Count is the number of transactions measured; 0 means none.
	Count int64
	// Mean is the mean latency.
	Mean time.Duration
	// Percentiles maps a percentile (99.9) to its latency.
	Percentiles map[float64]time.Duration
}

// Table is a Latencies from fixed figures per transaction type, with the key
// AllTypes for all transactions together.
type Table map[string]Figures

// Percentile returns a recorded percentile.
func (t Table) Percentile(tx string, p float64) (time.Duration, error) {
	f, err := t.figures(tx)
	if err != nil {
		return 0, err
	}
	d, ok := f.Percentiles[p]
	if !ok {
		return 0, fmt.Errorf("%s: p%v: %w", describeTx(tx), p, ErrNotRecorded)
	}
	return d, nil
}

// Mean returns the mean latency.
func (t Table) Mean(tx string) (time.Duration, error) {
	f, err := t.figures(tx)
	if err != nil {
		return 0, err
	}
	return f.Mean, nil
}

func (t Table) figures(tx string) (Figures, error) {
	f, ok := t[tx]
	if !ok || f.Count == 0 {
		return Figures{}, fmt.Errorf("%s: %w", describeTx(tx), ErrNoSamples)
	}
	return f, nil
}

func describeTx(tx string) string {
	if tx == AllTypes {
		return "all transactions"
	}
	return "transaction type " + strconv.Quote(tx)
}
