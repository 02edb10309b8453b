// Package metrics records transaction outcomes and latencies per virtual user
// and merges them, once a second, into step totals and per-second intervals.
//
// Latency lives in HDR histograms with 1 µs resolution, so percentiles are
// merged from distributions and never averaged.
package metrics

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: 1 µs resolution up to one hour, three significant digits.
const (
	LowestMicros  = 1
	HighestMicros = int64(time.Hour / time.Microsecond)
	SigFigs       = 3
)

// NewHistogram returns an empty latency histogram in microseconds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestMicros, HighestMicros, SigFigs)
}

// Outcome is how a transaction ended.
type Outcome uint8

const (
	// Committed transactions count towards throughput.
	Committed Outcome = iota
	// RolledBack transactions ended as the workload intends (TPC-C's 1 % of
	// New-Orders on an unused item): they are part of the mix, not errors.
	RolledBack
	// Failed transactions hit an error the workload did not intend.
	Failed
)

// TxCounts accumulates outcomes and the latency of completed transactions
// (committed or rolled back) of one transaction type.
type TxCounts struct {
	Committed  int64
	RolledBack int64
	Failed     int64
	// Retries counts serialization failures and deadlocks that were retried
	// inside a transaction that then completed.
	Retries int64
	// Reconnects counts sessions that lost their connection during a
	// transaction of this type and opened a new one to go on.
	Reconnects int64
	// Latency is the service time of completed transactions: from the
	// moment each was sent to its end.
	Latency *hdrhistogram.Histogram

	// Of transactions started on an open-loop schedule (see Recorder.Begin):
	// Paced counts them, whatever their outcome; Late those that started
	// beyond the run's tolerance after their intended start; Corrected is
	// the latency of the completed ones from their intended start. All stay
	// zero (Corrected nil) in a closed-loop run.
	Paced     int64
	Late      int64
	Corrected *hdrhistogram.Histogram
}

func newTxCounts() TxCounts { return TxCounts{Latency: NewHistogram()} }

func (t *TxCounts) add(o TxCounts) {
	t.Committed += o.Committed
	t.RolledBack += o.RolledBack
	t.Failed += o.Failed
	t.Retries += o.Retries
	t.Reconnects += o.Reconnects
	t.Paced += o.Paced
	t.Late += o.Late
	if o.Latency != nil {
		t.Latency.Merge(o.Latency)
	}
	if o.Corrected != nil {
		t.corrected().Merge(o.Corrected)
	}
}

// corrected returns the corrected histogram, created on first use so that
// a closed-loop run carries none.
func (t *TxCounts) corrected() *hdrhistogram.Histogram {
	if t.Corrected == nil {
		t.Corrected = NewHistogram()
	}
	return t.Corrected
}

func (t *TxCounts) reset() {
	t.Committed, t.RolledBack, t.Failed, t.Retries, t.Reconnects = 0, 0, 0, 0, 0
	t.Paced, t.Late = 0, 0
	if t.Latency != nil {
		t.Latency.Reset()
	}
	if t.Corrected != nil {
		t.Corrected.Reset()
	}
}

// clone copies t with histograms of its own.
func (t TxCounts) clone() TxCounts {
	if t.Latency != nil {
		t.Latency = t.Latency.Clone()
	}
	if t.Corrected != nil {
		t.Corrected = t.Corrected.Clone()
	}
	return t
}

// Completed is committed plus intended rollbacks.
func (t TxCounts) Completed() int64 { return t.Committed + t.RolledBack }

// Recorder is one virtual user's handle. Only its user writes to it; the
// collector drains it once a second, so the lock is practically uncontended.
type Recorder struct {
	mu sync.Mutex
	// pending counts outcomes per type since the last tick; its Latency is
	// nil: latencies wait as raw values until the collector records them.
	// A histogram takes 188 KB, so one per type and user would make the
	// driver's memory grow by about 1 MB per virtual user; a user's second
	// of values takes a few hundred bytes.
	pending   []TxCounts
	latencies [][]int64
	// corrected are the pending latencies from intended starts.
	corrected [][]int64
	// paced is set by Begin for the transaction in hand: it started delay
	// after its intended start, beyond the tolerance when late.
	paced bool
	late  bool
	delay time.Duration
}

// maxPendingLatencies bounds the values a recorder keeps between ticks.
// Past it they go into a histogram of the recorder's own, created then.
const maxPendingLatencies = 1 << 16

// Record notes one finished transaction of type tx (an index into the
// collector's type names). Failed transactions are counted but their latency
// is not recorded: an error's time says nothing about the storage.
func (r *Recorder) Record(tx int, d time.Duration, o Outcome) {
	r.RecordRetried(tx, d, o, 0)
}

// Begin says that the session's next transaction runs on an open-loop
// schedule and was sent delay after its intended start (0 when on time);
// late says whether that is beyond the run's tolerance. The transaction's
// record then also counts it as paced (and late), and adds its latency
// from the intended start, delay plus the service time, to the corrected
// histogram. A closed-loop session never calls Begin.
func (r *Recorder) Begin(delay time.Duration, late bool) {
	r.mu.Lock()
	r.paced, r.late, r.delay = true, late, max(delay, 0)
	r.mu.Unlock()
}

// RecordRetried is Record for a transaction that needed retries to complete.
func (r *Recorder) RecordRetried(tx int, d time.Duration, o Outcome, retries int) {
	r.mu.Lock()
	c := &r.pending[tx]
	c.Retries += int64(retries)
	paced := r.paced
	if paced {
		c.Paced++
		if r.late {
			c.Late++
		}
		r.paced = false
	}
	switch o {
	case Committed:
		c.Committed++
	case RolledBack:
		c.RolledBack++
	default:
		c.Failed++
	}
	if o == Committed || o == RolledBack {
		r.recordLatency(tx, micros(d), &r.latencies, func(c *TxCounts) **hdrhistogram.Histogram { return &c.Latency })
		if paced {
			r.recordLatency(tx, micros(d+r.delay), &r.corrected, func(c *TxCounts) **hdrhistogram.Histogram { return &c.Corrected })
		}
	}
	r.mu.Unlock()
}

// micros is d in the histograms' unit, within their bounds.
func micros(d time.Duration) int64 {
	return min(max(int64(d/time.Microsecond), LowestMicros), HighestMicros)
}

// recordLatency keeps one latency until the next tick in pending, or past
// maxPendingLatencies in the histogram hist picks of the type's counts;
// r.mu is held.
func (r *Recorder) recordLatency(tx int, us int64, pending *[][]int64, hist func(*TxCounts) **hdrhistogram.Histogram) {
	if len(*pending) == 0 {
		*pending = make([][]int64, len(r.pending))
	}
	if len((*pending)[tx]) < maxPendingLatencies {
		(*pending)[tx] = append((*pending)[tx], us)
		return
	}
	h := hist(&r.pending[tx])
	if *h == nil {
		*h = NewHistogram()
	}
	_ = (*h).RecordValue(us)
}

// drainInto adds what r holds to t and empties r; r.mu is held.
func (r *Recorder) drainInto(tx int, t *TxCounts) {
	t.add(r.pending[tx])
	for _, us := range r.latencies[tx] {
		_ = t.Latency.RecordValue(us)
	}
	if len(r.corrected) > 0 && len(r.corrected[tx]) > 0 {
		h := t.corrected()
		for _, us := range r.corrected[tx] {
			_ = h.RecordValue(us)
		}
	}
	r.clear(tx)
}

// clear drops what r holds for type tx; r.mu is held.
func (r *Recorder) clear(tx int) {
	r.pending[tx].reset()
	r.latencies[tx] = r.latencies[tx][:0]
	if len(r.corrected) > 0 {
		r.corrected[tx] = r.corrected[tx][:0]
	}
}

// RecordReconnect notes that the session lost its connection during a
// transaction of type tx and reconnected.
func (r *Recorder) RecordReconnect(tx int) {
	r.mu.Lock()
	r.pending[tx].Reconnects++
	r.mu.Unlock()
}

// Collector owns the recorders of one run and the totals of the current step.
type Collector struct {
	types []string

	mu       sync.Mutex
	recs     []*Recorder
	interval []TxCounts
	step     []TxCounts
}

// NewCollector prepares a collector for the named transaction types.
func NewCollector(types []string) *Collector {
	c := &Collector{types: append([]string(nil), types...)}
	c.interval = make([]TxCounts, len(types))
	c.step = make([]TxCounts, len(types))
	for i := range types {
		c.interval[i] = newTxCounts()
		c.step[i] = newTxCounts()
	}
	return c
}

// Types are the transaction type names, indexed as recorders expect.
func (c *Collector) Types() []string { return c.types }

// NewRecorder gives a virtual user its own handle.
func (c *Collector) NewRecorder() *Recorder {
	r := &Recorder{pending: make([]TxCounts, len(c.types)), latencies: make([][]int64, len(c.types))}
	c.mu.Lock()
	c.recs = append(c.recs, r)
	c.mu.Unlock()
	return r
}

// Adopt adds a recorder made by another collector of the same transaction
// types: a session that outlives one collector (a background job running
// through every step) records into each step's collector in turn. What the
// recorder holds from before is dropped.
func (c *Collector) Adopt(r *Recorder) {
	r.mu.Lock()
	for i := range r.pending {
		r.clear(i)
	}
	r.mu.Unlock()
	c.mu.Lock()
	c.recs = append(c.recs, r)
	c.mu.Unlock()
}

// Tick drains every recorder into the step totals and returns what happened
// since the previous tick. The returned counts are owned by the caller.
func (c *Collector) Tick() []TxCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.interval {
		c.interval[i].reset()
	}
	for _, r := range c.recs {
		r.mu.Lock()
		for i := range r.pending {
			r.drainInto(i, &c.interval[i])
		}
		r.mu.Unlock()
	}
	out := make([]TxCounts, len(c.types))
	for i := range c.interval {
		c.step[i].add(c.interval[i])
		out[i] = c.interval[i].clone()
	}
	return out
}

// Reset drops everything recorded so far: the end of a ramp-up.
func (c *Collector) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.recs {
		r.mu.Lock()
		for i := range r.pending {
			r.clear(i)
		}
		r.mu.Unlock()
	}
	for i := range c.step {
		c.step[i].reset()
	}
}

// StepTotals returns a copy of the totals since the last Reset, as of the last Tick.
func (c *Collector) StepTotals() []TxCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]TxCounts, len(c.step))
	for i := range c.step {
		out[i] = c.step[i].clone()
	}
	return out
}

// Merge sums counts of several types (or hosts) into one, merging histograms.
func Merge(counts ...TxCounts) TxCounts {
	m := newTxCounts()
	for _, c := range counts {
		m.add(c)
	}
	return m
}
