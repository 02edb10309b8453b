package sysbench

import (
	"context"
	"fmt"
	"math/rand/v2"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/workload"
	"dbio/internal/workload/sqlclient"
)

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
	d, err := w.dialect(inst)
	if err != nil {
		return nil, err
	}
	conn, err := sqlclient.Connect(ctx, inst.DB(), d, rec)
	if err != nil {
		return nil, fmt.Errorf("user %d: connect: %w", user+1, err)
	}
	return &session{Conn: conn, w: w, r: rand.New(rand.NewPCG(w.cfg.Seed^0x5b5b, uint64(user)+1)), ids: w.cfg.ids()}, nil
}

// session is one user, like a sysbench thread, on a connection of its own
// (whose Close ends it).
type session struct {
	*sqlclient.Conn
	w   *Workload
	r   *rand.Rand
	ids idFunc
}

var _ workload.Session = (*session)(nil)

// Next implements workload.Session: one transaction of the shape, run again
// with fresh ids after an error sysbench ignores, as sysbench restarts its
// event.
func (s *session) Next(ctx context.Context) error {
	return s.Run(ctx, 0, s.w.cfg.Workload, func() error { return s.transaction(ctx) })
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
func (s *session) transaction(ctx context.Context) error {
	sh := s.w.shape
	writes := sh.writesData()
	if writes {
		defer s.Dialect().LockWrites()()
	}
	if !sh.trx {
		return s.statements(ctx)
	}
	begin := s.Dialect().BeginRead
	if writes {
		begin = s.Dialect().BeginWrite
	}
	return s.Tx(context.WithoutCancel(ctx), begin, func() error { return s.statements(ctx) })
}

// statements sends the shape's statements.
func (s *session) statements(ctx context.Context) error {
	sh := s.w.shape
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
	return nil
}

// read runs a SELECT on table and reads every row, as a client does.
func (s *session) read(ctx context.Context, query, table string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rows, err := s.Query(context.WithoutCancel(ctx), fmt.Sprintf(query, table), args...)
	if err != nil {
		return err
	}
	_, err = sqlclient.Drain(rows, 1)
	return err
}

// write runs an UPDATE, DELETE or INSERT on table.
func (s *session) write(ctx context.Context, query, table string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := s.Exec(context.WithoutCancel(ctx), fmt.Sprintf(query, table), args...)
	return err
}
