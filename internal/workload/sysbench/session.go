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

// The statements of a transaction, as sysbench sends them, with %s for the table.
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

// tableStatements are the statements of one table, written once per run so
// that a transaction builds no text.
type tableStatements struct {
	point, simple, sum, order, distinct, indexUpd, nonIndex, delete, insert string
}

func statementsFor(tables int) []tableStatements {
	out := make([]tableStatements, tables)
	for i := range out {
		t := tableName(i + 1)
		f := func(q string) string { return fmt.Sprintf(q, t) }
		out[i] = tableStatements{point: f(qPoint), simple: f(qSimple), sum: f(qSum), order: f(qOrder), distinct: f(qDistinct),
			indexUpd: f(qIndexUpd), nonIndex: f(qNonIndex), delete: f(qDelete), insert: f(qInsert)}
	}
	return out
}

// NewSession implements workload.Workload: user u gets its own connection,
// as each sysbench thread has, and its own random stream.
func (w *Workload) NewSession(ctx context.Context, inst engine.Instance, user int, rec *metrics.Recorder) (workload.Session, error) {
	d, err := w.dialect(inst)
	if err != nil {
		return nil, err
	}
	conn, err := sqlclient.Connect(ctx, inst.DB(), d.ForUser(user), rec)
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
// Statements run on a context that cannot be cancelled (see
// sqlclient.Conn.Read); a cancellation is noticed between statements.
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
	return s.Tx(ctx, begin, func() error { return s.statements(ctx) })
}

// statements sends the shape's statements.
func (s *session) statements(ctx context.Context) error {
	sh := s.w.shape
	span := s.w.cfg.RangeSize - 1

	t := s.table()
	for range sh.pointSelects {
		if err := s.read(ctx, t.point, s.id()); err != nil {
			return err
		}
	}
	for _, g := range [...]struct {
		query func(*tableStatements) string
		n     int
	}{
		{func(t *tableStatements) string { return t.simple }, sh.simpleRanges},
		{func(t *tableStatements) string { return t.sum }, sh.sumRanges},
		{func(t *tableStatements) string { return t.order }, sh.orderRanges},
		{func(t *tableStatements) string { return t.distinct }, sh.distinctRanges},
	} {
		q := g.query(s.table())
		for range g.n {
			lo := s.id()
			if err := s.read(ctx, q, lo, lo+span); err != nil {
				return err
			}
		}
	}
	t = s.table()
	for range sh.indexUpdates {
		if err := s.write(ctx, t.indexUpd, s.id()); err != nil {
			return err
		}
	}
	t = s.table()
	for range sh.nonIndexUpdates {
		if err := s.write(ctx, t.nonIndex, cValue(s.r), s.id()); err != nil {
			return err
		}
	}
	t = s.table()
	for range sh.deleteInserts {
		row, k := s.id(), s.id()
		if err := s.write(ctx, t.delete, row); err != nil {
			return err
		}
		if err := s.write(ctx, t.insert, row, k, cValue(s.r), padValue(s.r)); err != nil {
			return err
		}
	}
	return nil
}

// table draws the table of a group of statements, uniformly.
func (s *session) table() *tableStatements { return &s.w.stmts[s.r.IntN(len(s.w.stmts))] }

// id draws a row id with the configured distribution.
func (s *session) id() int { return s.ids(s.r, 1, s.w.cfg.TableSize) }

// read runs a SELECT and reads every row, as a client does.
func (s *session) read(ctx context.Context, query string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.Receive(ctx, query, args...)
}

// write runs an UPDATE, DELETE or INSERT.
func (s *session) write(ctx context.Context, query string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := s.Write(ctx, query, args...)
	return err
}
