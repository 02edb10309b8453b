package tpcc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"dbio/internal/metrics"
	"dbio/internal/workload"
	"dbio/internal/workload/txerr"
)

// mixDeck is one deck of 100 cards in the standard mix: New-Order 45 %,
// Payment 43 %, Order-Status, Delivery and Stock-Level 4 % each. Each user
// draws from its own shuffled deck, which keeps every type at or above its
// minimum share over any 100 transactions (5.2.4.2 allows deck selection).
var mixDeck = func() []int {
	deck := make([]int, 0, 100)
	for t, n := range [numTxTypes]int{45, 43, 4, 4, 4} {
		for range n {
			deck = append(deck, t)
		}
	}
	return deck
}()

// pacingFor gives each type's keying time and mean think time (5.2.5.7).
var pacingFor = [numTxTypes]workload.Pacing{
	TxNewOrder:    {Keying: 18 * time.Second, ThinkMean: 12 * time.Second},
	TxPayment:     {Keying: 3 * time.Second, ThinkMean: 12 * time.Second},
	TxOrderStatus: {Keying: 2 * time.Second, ThinkMean: 10 * time.Second},
	TxDelivery:    {Keying: 2 * time.Second, ThinkMean: 5 * time.Second},
	TxStockLevel:  {Keying: 2 * time.Second, ThinkMean: 5 * time.Second},
}

// maxRetries bounds resubmission of a transaction the engine rolled back on
// a deadlock, serialization failure or busy database.
const maxRetries = 10

type session struct {
	w *Workload
	b backend
	// classify is the instance's own sorting of its engine's errors.
	classify txerr.Classifier
	exec     executor
	rec      *metrics.Recorder
	r        *rnd
	wID      int
	slDID    int
	pacing   bool
	deck     []int
	pos      int

	nowFunc func() time.Time
}

var _ workload.Session = (*session)(nil)

func (s *session) Close() error { return s.exec.close() }

func (s *session) nextType() int {
	if s.pos == len(s.deck) {
		if s.deck == nil {
			s.deck = append([]int(nil), mixDeck...)
		}
		s.r.Shuffle(len(s.deck), func(i, j int) { s.deck[i], s.deck[j] = s.deck[j], s.deck[i] })
		s.pos = 0
	}
	t := s.deck[s.pos]
	s.pos++
	return t
}

// Next implements workload.Session.
func (s *session) Next(ctx context.Context) error {
	t := s.nextType()
	run := s.prepare(t)
	if s.pacing && !workload.Sleep(ctx, pacingFor[t].Keying) {
		return nil
	}
	start := s.nowFunc()
	var err error
	retries := 0
	for {
		err = run(ctx)
		if err == nil || errors.Is(err, errRollback) || ctx.Err() != nil {
			break
		}
		class := s.classify(err)
		if class == txerr.Fatal || class == txerr.Lost {
			// A TPC-C user keeps one connection for the run: a lost one ends it.
			return fmt.Errorf("%w: %s: %v", workload.ErrSessionLost, txNames[t], err)
		}
		if class != txerr.Retry || retries == maxRetries {
			break
		}
		retries++
	}
	elapsed := s.nowFunc().Sub(start)
	switch {
	case err == nil:
		s.rec.RecordRetried(t, elapsed, metrics.Committed, retries)
	case errors.Is(err, errRollback):
		s.rec.RecordRetried(t, elapsed, metrics.RolledBack, retries)
	case ctx.Err() != nil:
		return nil // cancelled mid-transaction: neither counted nor an error
	default:
		s.rec.RecordRetried(t, elapsed, metrics.Failed, retries)
	}
	if s.pacing {
		workload.Sleep(ctx, pacingFor[t].ThinkTime(s.r.Rand))
	}
	return nil
}

// prepare draws the inputs of a transaction of type t and returns the call
// that runs it, so that inputs are fixed before keying time and resubmission
// repeats the same transaction.
func (s *session) prepare(t int) func(context.Context) error {
	now := s.nowFunc()
	switch t {
	case TxNewOrder:
		in := s.newOrderInput(now)
		return func(ctx context.Context) error { return s.exec.newOrder(ctx, in) }
	case TxPayment:
		in := s.paymentInput(now)
		return func(ctx context.Context) error { return s.exec.payment(ctx, in) }
	case TxOrderStatus:
		in := &orderStatusIn{wID: s.wID, dID: s.r.uniform(1, DistrictsPerWarehouse), customer: s.customer()}
		return func(ctx context.Context) error { return s.exec.orderStatus(ctx, in) }
	case TxDelivery:
		in := &deliveryIn{wID: s.wID, carrierID: s.r.uniform(1, 10), date: now}
		return func(ctx context.Context) error { return s.exec.delivery(ctx, in) }
	default:
		in := &stockLevelIn{wID: s.wID, dID: s.slDID, threshold: s.r.uniform(10, 20)}
		return func(ctx context.Context) error { return s.exec.stockLevel(ctx, in) }
	}
}

// newOrderInput follows 2.4.1: a NURand customer, 5 to 15 lines of NURand
// items, 1 % of supplying warehouses remote when there are several, and 1 %
// of orders whose last item is unused so the transaction rolls back.
func (s *session) newOrderInput(now time.Time) *newOrderIn {
	r := s.r
	in := &newOrderIn{wID: s.wID, dID: r.uniform(1, DistrictsPerWarehouse), cID: r.customerID(), entryD: now, allLocal: true}
	n := r.uniform(5, 15)
	rollback := r.uniform(1, 100) == 1
	in.lines = make([]orderLine, n)
	for i := range in.lines {
		l := &in.lines[i]
		l.itemID = r.itemID()
		if rollback && i == n-1 {
			l.itemID = Items + 1 // 2.4.1.5: an unused value
		}
		l.supplyWID = s.wID
		if W := s.w.cfg.Warehouses; W > 1 && r.uniform(1, 100) == 1 {
			l.supplyWID = s.otherWarehouse()
			l.remote = true
			in.allLocal = false
		}
		l.quantity = r.uniform(1, 10)
	}
	return in
}

// paymentInput follows 2.5.1: 85 % of payments to the home district's
// customers, 15 % to a random district of a remote warehouse (when there is
// one); 60 % of customers chosen by last name; amounts from 1.00 to 5,000.00.
func (s *session) paymentInput(now time.Time) *paymentIn {
	r := s.r
	in := &paymentIn{wID: s.wID, dID: r.uniform(1, DistrictsPerWarehouse), date: now}
	in.cWID, in.cDID = in.wID, in.dID
	if r.uniform(1, 100) > 85 && s.w.cfg.Warehouses > 1 {
		in.cWID = s.otherWarehouse()
		in.cDID = r.uniform(1, DistrictsPerWarehouse)
	}
	in.customer = s.customer()
	in.amount = float64(r.uniform(100, 500000)) / 100
	return in
}

// customer selects by last name 60 % of the time, by id otherwise.
func (s *session) customer() customerSel {
	if s.r.uniform(1, 100) <= 60 {
		return customerSel{byName: true, last: s.r.lastNameRun()}
	}
	return customerSel{cID: s.r.customerID()}
}

// otherWarehouse picks a warehouse other than the home one, uniformly.
func (s *session) otherWarehouse() int {
	w := s.r.uniform(1, s.w.cfg.Warehouses-1)
	if w >= s.wID {
		w++
	}
	return w
}
