package as3ap

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/workload"
	"dbio/internal/workload/txerr"
)

// maxRetries bounds how often one transaction runs again after a deadlock,
// serialization failure or busy database.
const maxRetries = 100

// The statements of the three transactions.
const (
	qReadRow   = "SELECT col_key, col_int, col_signed, col_float, col_double, col_decim, col_date, col_code, col_name, col_address FROM uniques WHERE col_key = ?"
	qUpdateRow = "UPDATE updates SET col_signed = col_signed + 1 WHERE col_key = ?"
	qReadRange = "SELECT col_key, col_int, col_signed, col_double, col_decim FROM updates WHERE col_key BETWEEN ? AND ? ORDER BY col_key"
	qBumpRange = "UPDATE updates SET col_signed = col_signed + 1 WHERE col_key BETWEEN ? AND ?"
)

// NewSession implements workload.Workload: interactive user u, with its own
// connection, running single-row transactions back to back.
func (w *Workload) NewSession(ctx context.Context, inst engine.Instance, user int, rec *metrics.Recorder) (workload.Session, error) {
	return w.newSession(ctx, inst, false, user, rec)
}

// NewBackgroundSession starts batch job n (the runner's Background interface).
func (w *Workload) NewBackgroundSession(ctx context.Context, inst engine.Instance, n int, rec *metrics.Recorder) (workload.Session, error) {
	return w.newSession(ctx, inst, true, n, rec)
}

func (w *Workload) newSession(ctx context.Context, inst engine.Instance, batch bool, n int, rec *metrics.Recorder) (workload.Session, error) {
	w.mu.Lock()
	prepared := w.prepared
	w.mu.Unlock()
	if !prepared {
		return nil, errors.New("as3ap: Prepare must run before sessions start")
	}
	d, err := dialectFor(inst)
	if err != nil {
		return nil, err
	}
	stream := uint64(n) + 1
	if batch {
		stream += 1 << 32
	}
	s := &session{w: w, d: d, db: inst.DB(), batch: batch, rec: rec, r: rand.New(rand.NewPCG(w.cfg.Seed^0xa53a, stream)),
		spread: keySpread(w.cfg.Rows)}
	if err := s.connect(ctx); err != nil {
		kind := "user"
		if batch {
			kind = "batch job"
		}
		return nil, fmt.Errorf("%s %d: connect: %w", kind, n+1, err)
	}
	return s, nil
}

type session struct {
	w     *Workload
	d     *dialect
	db    *sql.DB
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
	batch bool
	rec   *metrics.Recorder
	r     *rand.Rand
	// spread turns row numbers into the sparse keys of uniques.
	spread int64
}

var _ workload.Session = (*session)(nil)

func (s *session) connect(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	s.conn, s.stmts = conn, map[string]*sql.Stmt{}
	return nil
}

// Close implements workload.Session.
func (s *session) Close() error {
	for _, st := range s.stmts {
		st.Close()
	}
	return s.conn.Close()
}

// Next implements workload.Session: a batch job's next range, or an
// interactive user's next single-row read or update (one in two each).
func (s *session) Next(ctx context.Context) error {
	tx := txBatch
	if !s.batch {
		tx = txRead
		if s.r.IntN(2) == 1 {
			tx = txUpdate
		}
	}
	start := time.Now()
	retries := 0
	// Statements run on a context that cannot be cancelled: given a
	// cancellable one, database/sql and the drivers start or wake a watcher
	// goroutine for every query, which costs the load generator more CPU
	// than the round trip itself. Cancellation is noticed between attempts.
	q := context.WithoutCancel(ctx)
	for {
		var err error
		switch tx {
		case txRead:
			err = s.readRow(q)
		case txUpdate:
			err = s.updateRow(q)
		default:
			err = s.batchRange(q)
		}
		if err == nil {
			s.rec.RecordRetried(tx, time.Since(start), metrics.Committed, retries)
			return nil
		}
		if ctx.Err() != nil {
			return nil // cancelled mid-transaction: neither counted nor an error
		}
		switch s.d.classify(err) {
		case txerr.Retry:
			if retries < maxRetries {
				retries++
				continue
			}
		case txerr.Fatal:
			return fmt.Errorf("%w: %s: %v", workload.ErrSessionLost, txNames[tx], err)
		case txerr.Lost:
			s.rec.RecordRetried(tx, 0, metrics.Failed, retries)
			s.Close()
			if cerr := s.connect(ctx); cerr != nil {
				return fmt.Errorf("%w: %s: %v; reconnecting: %v", workload.ErrSessionLost, txNames[tx], err, cerr)
			}
			s.rec.RecordReconnect(tx)
			return nil
		}
		s.rec.RecordRetried(tx, 0, metrics.Failed, retries)
		return nil
	}
}

func (s *session) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := s.stmts[query]; ok {
		return st, nil
	}
	st, err := s.conn.PrepareContext(ctx, s.d.bind(query))
	if err != nil {
		return nil, err
	}
	s.stmts[query] = st
	return st, nil
}

// readRow reads one row of uniques by its (sparse) key.
func (s *session) readRow(ctx context.Context) error {
	st, err := s.stmt(ctx, qReadRow)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, int64(1+s.r.IntN(s.w.cfg.Rows))*s.spread)
	if err != nil {
		return err
	}
	n, err := drain(rows, 10)
	if err == nil && n != 1 {
		err = fmt.Errorf("read %d rows of uniques for one key", n)
	}
	return err
}

// updateRow adds one to col_signed of one row of updates, in its own
// (autocommit) transaction.
func (s *session) updateRow(ctx context.Context) error {
	if s.d.writeLock != nil {
		s.d.writeLock.Lock()
		defer s.d.writeLock.Unlock()
	}
	st, err := s.stmt(ctx, qUpdateRow)
	if err != nil {
		return err
	}
	res, err := st.ExecContext(ctx, 1+s.r.IntN(s.w.cfg.Rows))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("updated %d rows of updates for one key (%v)", n, err)
	}
	s.w.increments.Add(1)
	return nil
}

// batchRange is one batch transaction: read BatchRows consecutive rows of
// updates (locking them where the engine can), then update them all.
func (s *session) batchRange(ctx context.Context) (err error) {
	if s.d.writeLock != nil {
		s.d.writeLock.Lock()
		defer s.d.writeLock.Unlock()
	}
	n := s.w.cfg.BatchRows
	lo := 1 + s.r.IntN(s.w.cfg.Rows-n+1)
	hi := lo + n - 1
	if _, err := s.conn.ExecContext(ctx, s.d.beginWrite); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			// The connection may be gone; the error that matters is err.
			s.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	read, err := s.stmt(ctx, qReadRange+s.d.forUpdate)
	if err != nil {
		return err
	}
	rows, err := read.QueryContext(ctx, lo, hi)
	if err != nil {
		return err
	}
	got, err := drain(rows, 5)
	if err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("batch read %d rows of updates for keys %d..%d, want %d", got, lo, hi, n)
	}
	bump, err := s.stmt(ctx, qBumpRange)
	if err != nil {
		return err
	}
	res, err := bump.ExecContext(ctx, lo, hi)
	if err != nil {
		return err
	}
	if k, err := res.RowsAffected(); err != nil || k != int64(n) {
		return fmt.Errorf("batch updated %d rows of updates for keys %d..%d, want %d (%v)", k, lo, hi, n, err)
	}
	if _, err := s.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	s.w.increments.Add(int64(n))
	return nil
}

// drain reads every row of a result of cols columns, as a client does, and counts them.
func drain(rows *sql.Rows, cols int) (int, error) {
	dest := make([]any, cols)
	raw := make([]sql.RawBytes, cols)
	for i := range dest {
		dest[i] = &raw[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return n, err
		}
		n++
	}
	return n, errors.Join(rows.Err(), rows.Close())
}
