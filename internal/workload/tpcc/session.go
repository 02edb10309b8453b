package tpcc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"dbio/internal/engine/txerr"
	"dbio/internal/metrics"
	"dbio/internal/workload"
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

// mixDeckCards is mixDeck as a terminal keeps its copy: a byte a card.
var mixDeckCards = func() (cards [100]uint8) {
	for i, t := range mixDeck {
		cards[i] = uint8(t)
	}
	return cards
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

// terminal is one TPC-C terminal without its connection: its home
// warehouse and Stock-Level district, its input generator and deck, its
// pacing, and the transaction it has keyed in. A few hundred bytes: behind a
// transaction monitor thousands of them share a few connections.
type terminal struct {
	w *Workload
	r *rnd
	// wID is the home warehouse; slDID the constant Stock-Level district.
	wID   int
	slDID int
	// pacing adds the keying and think times, each multiplied by
	// pacingScale (1: the specification's).
	pacing      bool
	pacingScale float64
	deck        [len(mixDeckCards)]uint8
	pos         int
	shuffled    bool

	// tx and run are the transaction drawn by Wait, run by Run.
	tx  int
	run txRun

	nowFunc func() time.Time
}

// txRun runs one prepared transaction on a connection's executor.
type txRun func(ctx context.Context, e executor) error

// conn is one connection to the database and the recorder its
// transactions are counted on.
type conn struct {
	// classify is the instance's own sorting of its engine's errors.
	classify txerr.Classifier
	exec     executor
	rec      *metrics.Recorder
	// inPoller says the connection's socket waits in Go's network poller,
	// where the goroutine parks at every read (see execute).
	inPoller bool
	yielder  workload.Yielder
}

// session is a virtual user with a connection of its own.
//
// It does not keep a thread (vusers.ThreadKeeper), though it waits on its
// own on a blocking socket: a transaction is one round trip, so it yields
// at nearly every transaction, and a pinned goroutine's yield hands its P
// to another thread and back, where pinning pays off only over many round
// trips between yields. Measured at 64 users on MariaDB (10 warehouses, six
// alternating pairs of 20 s runs), pinning did not help: the driver's CPU
// per transaction had a median 1.07x unpinned and New-Orders 0.94x, neither
// a significant difference (U test p 0.49 and 0.94).
type session struct {
	terminal
	conn
}

var _ workload.Session = (*session)(nil)

func (s *session) Close() error { return s.exec.close() }

func (t *terminal) nextType() int {
	if t.pos == len(t.deck) || !t.shuffled {
		if !t.shuffled {
			copy(t.deck[:], mixDeckCards[:])
			t.shuffled = true
		}
		t.r.Shuffle(len(t.deck), func(i, j int) { t.deck[i], t.deck[j] = t.deck[j], t.deck[i] })
		t.pos = 0
	}
	tx := int(t.deck[t.pos])
	t.pos++
	return tx
}

// keying and think are the terminal's pacing for a transaction of type tx.
func (t *terminal) keying(tx int) time.Duration {
	if !t.pacing {
		return 0
	}
	return t.scaled(pacingFor[tx].Keying)
}

func (t *terminal) think(tx int) time.Duration {
	if !t.pacing {
		return 0
	}
	return t.scaled(pacingFor[tx].ThinkTime(t.r.Rand))
}

func (t *terminal) scaled(d time.Duration) time.Duration {
	if t.pacingScale <= 0 || t.pacingScale == 1 {
		return d
	}
	return time.Duration(float64(d) * t.pacingScale)
}

// Next implements workload.Session: the user keys, runs and thinks on its
// own connection.
func (s *session) Next(ctx context.Context) error {
	t := s.nextType()
	run := s.prepare(t)
	if s.pacing && !workload.Sleep(ctx, s.keying(t)) {
		return nil
	}
	if err := s.execute(ctx, t, run); err != nil {
		return err
	}
	if s.pacing {
		workload.Sleep(ctx, s.think(t))
	}
	return nil
}

// execute runs a transaction of type t, resubmitting it on a deadlock or
// serialization failure, and records it from its start on the connection.
// It returns an error only when the connection cannot go on.
func (c *conn) execute(ctx context.Context, t int, run txRun) error {
	// A goroutine that only ever waits in blocking system calls (or cgo
	// calls, on SQLite) yields now and then, as sqlclient.Conn.Run's does
	// (workload.Yielder). A connection in the poller parks at every read
	// and needs none.
	start := time.Now()
	if !c.inPoller && c.yielder.Yield(start) {
		start = time.Now()
	}
	var err error
	retries := 0
	// Statements run on a context that cannot be cancelled, as sqlclient's
	// sessions' do: given a cancellable one, database/sql and the drivers
	// start or wake a watcher goroutine for every statement. A cancelled
	// run shuts the session's socket down instead (sqlclient's sockets),
	// and is noticed after the transaction.
	stmtCtx := context.WithoutCancel(ctx)
	for {
		err = run(stmtCtx, c.exec)
		if err == nil || errors.Is(err, errRollback) || ctx.Err() != nil {
			break
		}
		class := c.classify(err)
		if class == txerr.Fatal || class == txerr.Lost {
			// A TPC-C connection serves its users for the run: a lost one ends it.
			return fmt.Errorf("%w: %s: %w", workload.ErrSessionLost, txNames[t], err)
		}
		if class != txerr.Retry || retries == maxRetries {
			break
		}
		retries++
	}
	elapsed := time.Since(start)
	switch {
	case err == nil:
		c.rec.RecordRetried(t, elapsed, metrics.Committed, retries)
	case errors.Is(err, errRollback):
		c.rec.RecordRetried(t, elapsed, metrics.RolledBack, retries)
	case ctx.Err() != nil:
		// cancelled mid-transaction: neither counted nor an error
	default:
		c.rec.RecordRetried(t, elapsed, metrics.Failed, retries)
	}
	return nil
}

// Wait implements workload.Terminal: after the transaction just run the
// terminal thinks, then draws its next transaction and keys it in
// (5.2.5.7); Wait returns the two together. The first Wait starts the
// terminal part-way through a cycle (see firstWait).
func (t *terminal) Wait() time.Duration {
	if t.run == nil {
		return t.firstWait()
	}
	last := t.tx
	t.tx = t.nextType()
	t.run = t.prepare(t.tx)
	return t.think(last) + t.keying(t.tx)
}

// firstWait draws a terminal's first transaction and the time to its
// submission as a system running for a while would find the terminal: at
// a uniformly random point of a cycle (a think time after one transaction,
// then the keying of the next), the cycle and its two transaction types
// drawn in proportion to its length, since a random moment falls in a long
// cycle (a New-Order's keying) more often than in a short one. Terminals
// started together then submit at the steady rate from the start, instead
// of ringing for several cycles, so a ramp-up of about a cycle suffices.
// The first transaction's type comes from this draw, not the deck; the
// deck deals every later one.
func (t *terminal) firstWait() time.Duration {
	if !t.pacing {
		t.tx = t.nextType()
		t.run = t.prepare(t.tx)
		return 0
	}
	longest := float64(t.scaled(maxThinkMean*10) + t.scaled(maxKeying))
	for {
		before, next := mixDeck[t.r.IntN(len(mixDeck))], mixDeck[t.r.IntN(len(mixDeck))]
		cycle := t.think(before) + t.keying(next)
		if t.r.Float64()*longest < float64(cycle) {
			t.tx = next
			t.run = t.prepare(next)
			return time.Duration(t.r.Float64() * float64(cycle))
		}
	}
}

// maxKeying is the longest keying time (New-Order's).
const maxKeying = 18 * time.Second

// maxThinkMean is the longest mean think time of the mix (New-Order's and
// Payment's); a think time is truncated at ten times its mean.
const maxThinkMean = 12 * time.Second

// Run implements workload.Terminal: the transaction keyed in runs on a
// pooled connection, recorded on that connection's recorder.
func (t *terminal) Run(ctx context.Context, c workload.Session) error {
	pc, ok := c.(*pooledConn)
	if !ok {
		return fmt.Errorf("tpcc: a terminal was given a %T, not a TPC-C connection", c)
	}
	return pc.execute(ctx, t.tx, t.run)
}

// pooledConn is a connection of the monitor's pool: it runs the
// terminals' transactions, never its own.
type pooledConn struct{ conn }

func (p *pooledConn) Next(context.Context) error {
	return errors.New("tpcc: a pooled connection runs its terminals' transactions")
}

func (p *pooledConn) Close() error { return p.exec.close() }

// prepare draws the inputs of a transaction of type t and returns the call
// that runs it, so that inputs are fixed before keying time and resubmission
// repeats the same transaction.
func (s *terminal) prepare(t int) txRun {
	now := s.nowFunc()
	switch t {
	case TxNewOrder:
		in := s.newOrderInput(now)
		return func(ctx context.Context, e executor) error { return e.newOrder(ctx, in) }
	case TxPayment:
		in := s.paymentInput(now)
		return func(ctx context.Context, e executor) error { return e.payment(ctx, in) }
	case TxOrderStatus:
		in := &orderStatusIn{wID: s.wID, dID: s.r.uniform(1, DistrictsPerWarehouse), customer: s.customer()}
		return func(ctx context.Context, e executor) error { return e.orderStatus(ctx, in) }
	case TxDelivery:
		in := &deliveryIn{wID: s.wID, carrierID: s.r.uniform(1, 10), date: now}
		return func(ctx context.Context, e executor) error { return e.delivery(ctx, in) }
	default:
		in := &stockLevelIn{wID: s.wID, dID: s.slDID, threshold: s.r.uniform(10, 20)}
		return func(ctx context.Context, e executor) error { return e.stockLevel(ctx, in) }
	}
}

// newOrderInput follows 2.4.1: a NURand customer, 5 to 15 lines of NURand
// items, 1 % of supplying warehouses remote when there are several, and 1 %
// of orders whose last item is unused so the transaction rolls back.
func (s *terminal) newOrderInput(now time.Time) *newOrderIn {
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
func (s *terminal) paymentInput(now time.Time) *paymentIn {
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
func (s *terminal) customer() customerSel {
	if s.r.uniform(1, 100) <= 60 {
		return customerSel{byName: true, last: s.r.lastNameRun()}
	}
	return customerSel{cID: s.r.customerID()}
}

// otherWarehouse picks a warehouse other than the home one, uniformly.
func (s *terminal) otherWarehouse() int {
	w := s.r.uniform(1, s.w.cfg.Warehouses-1)
	if w >= s.wID {
		w++
	}
	return w
}
