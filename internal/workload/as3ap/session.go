package as3ap

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/workload"
	"dbio/internal/workload/sqlclient"
)

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
	d, err := w.dialect(inst)
	if err != nil {
		return nil, err
	}
	if batch {
		d = d.ForBackground()
	} else {
		d = d.ForUser(n)
	}
	stream := uint64(n) + 1
	if batch {
		stream += 1 << 32
	}
	conn, err := sqlclient.Connect(ctx, inst.DB(), d, rec)
	if err != nil {
		kind := "user"
		if batch {
			kind = "batch job"
		}
		return nil, fmt.Errorf("%s %d: connect: %w", kind, n+1, err)
	}
	return &session{Conn: conn, w: w, batch: batch, r: rand.New(rand.NewPCG(w.cfg.Seed^0xa53a, stream)), spread: keySpread(w.cfg.Rows)}, nil
}

// session is a batch job or an interactive user on a connection of its own
// (whose Close ends it).
type session struct {
	*sqlclient.Conn
	w     *Workload
	batch bool
	r     *rand.Rand
	// spread turns row numbers into the sparse keys of uniques.
	spread int64
}

var _ workload.Session = (*session)(nil)

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
	// Statements run on a context that cannot be cancelled (see
	// sqlclient.Conn.Read); cancellation is noticed between attempts.
	return s.Run(ctx, tx, txNames[tx], func() error {
		switch tx {
		case txRead:
			return s.readRow(ctx)
		case txUpdate:
			return s.updateRow(ctx)
		default:
			return s.batchRange(ctx)
		}
	})
}

// readRow reads one row of uniques by its (sparse) key.
func (s *session) readRow(ctx context.Context) error {
	n, err := s.Read(ctx, qReadRow, int64(1+s.r.IntN(s.w.cfg.Rows))*s.spread)
	if err == nil && n != 1 {
		err = fmt.Errorf("read %d rows of uniques for one key", n)
	}
	return err
}

// updateRow adds one to col_signed of one row of updates, in its own
// (autocommit) transaction.
func (s *session) updateRow(ctx context.Context) error {
	defer s.Dialect().LockWrites()()
	n, err := s.Write(ctx, qUpdateRow, 1+s.r.IntN(s.w.cfg.Rows))
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("updated %d rows of updates for one key", n)
	}
	s.w.increments.Add(1)
	return nil
}

// batchRange is one batch transaction: read BatchRows consecutive rows of
// updates (locking them where the engine can), then update them all.
func (s *session) batchRange(ctx context.Context) error {
	defer s.Dialect().LockWrites()()
	n := s.w.cfg.BatchRows
	lo := 1 + s.r.IntN(s.w.cfg.Rows-n+1)
	hi := lo + n - 1
	err := s.Tx(ctx, s.Dialect().BeginWrite, func() error {
		got, err := s.Read(ctx, qReadRange+s.Dialect().ForUpdate, lo, hi)
		if err != nil {
			return err
		}
		if got != n {
			return fmt.Errorf("batch read %d rows of updates for keys %d..%d, want %d", got, lo, hi, n)
		}
		k, err := s.Write(ctx, qBumpRange, lo, hi)
		if err != nil {
			return err
		}
		if k != int64(n) {
			return fmt.Errorf("batch updated %d rows of updates for keys %d..%d, want %d", k, lo, hi, n)
		}
		return nil
	})
	if err == nil {
		s.w.increments.Add(int64(n))
	}
	return err
}
