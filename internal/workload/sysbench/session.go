package sysbench

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

// maxRetries bounds how often one transaction runs again after an error
// sysbench would ignore (deadlock, duplicate key, busy database).
const maxRetries = 100

// The statements of a transaction, as sysbench sends them.
const (
	qPoint    = "SELECT c FROM %s WHERE id = ?"
	qSimple   = "SELECT c FROM %s WHERE id BETWEEN ? AND ?"
	qSum      = "SELECT SUM(k) FROM %s WHERE id BETWEEN ? AND ?"
	qOrder    = "SELECT c FROM %s WHERE id BETWEEN ? AND ? ORDER BY c"
	qDistinct = "SELECT DISTINCT c FROM %s WHERE id BETWEEN ? AND ? ORDER BY c"
	qIndexUpd = "UPDATE %s SET k = k + 1 WHERE id = ?"
	qNonIndex = "UPDATE %s SET c = ? WHERE id = ?"
	qDelete   = "DELETE FROM %s WHERE id = ?"
	qInsert   = "INSERT INTO %s (id, k, c, pad) VALUES (?, ?, ?, ?)"
)

// NewSession implements workload.Workload: user u gets its own connection,
// as each sysbench thread has, and its own random stream.
func (w *Workload) NewSession(ctx context.Context, inst engine.Instance, user int, rec *metrics.Recorder) (workload.Session, error) {
	d, err := dialectFor(inst)
	if err != nil {
		return nil, err
	}
	s := &session{
		w: w, d: d, db: inst.DB(), rec: rec,
		r:   rand.New(rand.NewPCG(w.cfg.Seed^0x5b5b, uint64(user)+1)),
		ids: w.cfg.ids(),
	}
	if err := s.connect(ctx); err != nil {
		return nil, fmt.Errorf("user %d: connect: %w", user+1, err)
	}
	return s, nil
}

type session struct {
	w    *Workload
	d    *dialect
	db   *sql.DB
	conn *sql.Conn
	// stmts are this connection's prepared statements by SQL text; a nil
	// entry is a statement the engine would not prepare, sent as text.
	stmts map[string]*sql.Stmt
	rec   *metrics.Recorder
	r     *rand.Rand
	ids   idFunc
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
		if st != nil {
			st.Close()
		}
	}
	return s.conn.Close()
}

// Next implements workload.Session: one transaction of the shape, run again
// with fresh ids after an error sysbench ignores, as sysbench restarts its
// event. Latency runs from the first attempt to the end of the last.
func (s *session) Next(ctx context.Context) error {
	start := time.Now()
	retries := 0
	for {
		err := s.transaction(ctx)
		if err == nil {
			s.rec.RecordRetried(0, time.Since(start), metrics.Committed, retries)
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
			return fmt.Errorf("%w: %s: %v", workload.ErrSessionLost, s.w.cfg.Workload, err)
		case txerr.Lost:
			s.rec.RecordRetried(0, 0, metrics.Failed, retries)
			s.Close()
			if cerr := s.connect(ctx); cerr != nil {
				return fmt.Errorf("%w: %s: %v; reconnecting: %v", workload.ErrSessionLost, s.w.cfg.Workload, err, cerr)
			}
			s.rec.RecordReconnect(0)
			return nil
		}
		s.rec.RecordRetried(0, 0, metrics.Failed, retries)
		return nil
	}
}

// transaction runs the shape once, in sysbench's order: point selects,
// ranges, index and non-index updates, delete-inserts. Each group of
// statements goes to one table drawn uniformly, ids with the distribution.
//
// Statements run on a context that cannot be cancelled: given a cancellable
// one, database/sql and the drivers start or wake a watcher goroutine for
// every query, which costs the load generator more CPU than the query's own
// round trip and, on a busy machine, takes it from the database. A
// cancellation is noticed between statements instead.
func (s *session) transaction(ctx context.Context) (err error) {
	sh := s.w.shape
	writes := sh.writesData()
	if writes && s.d.writeLock != nil {
		s.d.writeLock.Lock()
		defer s.d.writeLock.Unlock()
	}
	if sh.trx {
		begin := s.d.beginRead
		if writes {
			begin = s.d.beginWrite
		}
		if _, err := s.conn.ExecContext(context.WithoutCancel(ctx), begin); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				// The connection may be gone; the error that matters is err.
				s.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			}
		}()
	}
	size := s.w.cfg.TableSize
	span := s.w.cfg.RangeSize - 1
	table := func() string { return tableName(1 + s.r.IntN(s.w.cfg.Tables)) }
	id := func() int { return s.ids(s.r, 1, size) }

	t := table()
	for range sh.pointSelects {
		if err := s.read(ctx, qPoint, t, id()); err != nil {
			return err
		}
	}
	for _, g := range []struct {
		query string
		n     int
	}{{qSimple, sh.simpleRanges}, {qSum, sh.sumRanges}, {qOrder, sh.orderRanges}, {qDistinct, sh.distinctRanges}} {
		t := table()
		for range g.n {
			lo := id()
			if err := s.read(ctx, g.query, t, lo, lo+span); err != nil {
				return err
			}
		}
	}
	t = table()
	for range sh.indexUpdates {
		if err := s.write(ctx, qIndexUpd, t, id()); err != nil {
			return err
		}
	}
	t = table()
	for range sh.nonIndexUpdates {
		if err := s.write(ctx, qNonIndex, t, cValue(s.r), id()); err != nil {
			return err
		}
	}
	t = table()
	for range sh.deleteInserts {
		row, k := id(), id()
		if err := s.write(ctx, qDelete, t, row); err != nil {
			return err
		}
		if err := s.write(ctx, qInsert, t, row, k, cValue(s.r), padValue(s.r)); err != nil {
			return err
		}
	}
	if sh.trx {
		_, err = s.conn.ExecContext(context.WithoutCancel(ctx), "COMMIT")
	}
	return err
}

// stmt returns the prepared statement for query on table, preparing it on
// first use; nil means send it unprepared.
func (s *session) stmt(ctx context.Context, query, table string) (*sql.Stmt, string, error) {
	text := s.d.bind(fmt.Sprintf(query, table))
	if st, ok := s.stmts[text]; ok {
		return st, text, nil
	}
	st, err := s.conn.PrepareContext(ctx, text)
	if err != nil {
		if s.d.tooManyPrepared == nil || !s.d.tooManyPrepared(err) {
			return nil, text, err
		}
		st = nil
	}
	s.stmts[text] = st
	return st, text, nil
}

// read runs a SELECT and reads every row, as a client does.
func (s *session) read(ctx context.Context, query, table string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	st, text, err := s.stmt(ctx, query, table)
	if err != nil {
		return err
	}
	var rows *sql.Rows
	if st != nil {
		rows, err = st.QueryContext(ctx, args...)
	} else {
		rows, err = s.conn.QueryContext(ctx, text, args...)
	}
	if err != nil {
		return err
	}
	var v sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
	}
	return errors.Join(rows.Err(), rows.Close())
}

func (s *session) write(ctx context.Context, query, table string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	st, text, err := s.stmt(ctx, query, table)
	if err != nil {
		return err
	}
	if st != nil {
		_, err = st.ExecContext(ctx, args...)
	} else {
		_, err = s.conn.ExecContext(ctx, text, args...)
	}
	return err
}
