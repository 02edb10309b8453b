package tpcc

import (
	"context"
	"database/sql"
	"fmt"

	"dbio/internal/workload/sqlclient"
)

// insertSink loads rows with multi-row INSERT statements inside one
// transaction per flush: the fast portable path (SQLite, MariaDB). Rows are
// buffered per table and sent batchRows at a time.
type insertSink struct {
	conn      *sql.Conn
	d         *sqlclient.Dialect
	batchRows int
	pending   map[string][]any // flattened rows waiting, per table
	inTx      bool
	stmts     map[string]*sql.Stmt // full-batch statements per table
}

func newInsertSink(ctx context.Context, db *sql.DB, d *sqlclient.Dialect, batchRows int) (*insertSink, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &insertSink{conn: conn, d: d, batchRows: batchRows, pending: map[string][]any{}, stmts: map[string]*sql.Stmt{}}, nil
}

func (s *insertSink) add(ctx context.Context, table string, row []value) error {
	p := s.pending[table]
	for _, v := range row {
		p = append(p, v.any())
	}
	s.pending[table] = p
	if len(p) >= s.batchRows*len(row) {
		return s.send(ctx, table)
	}
	return nil
}

func (s *insertSink) insertSQL(table string, rows int) string {
	return s.d.InsertSQL(table, tableByName(table).columnNames(), rows)
}

func (s *insertSink) send(ctx context.Context, table string) error {
	args := s.pending[table]
	if len(args) == 0 {
		return nil
	}
	rows := len(args) / len(tableByName(table).columns)
	if !s.inTx {
		if _, err := s.conn.ExecContext(ctx, s.d.BeginWrite); err != nil {
			return err
		}
		s.inTx = true
	}
	var err error
	if rows == s.batchRows {
		st, ok := s.stmts[table]
		if !ok {
			st, err = s.conn.PrepareContext(ctx, s.insertSQL(table, rows))
			if err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
			s.stmts[table] = st
		}
		_, err = st.ExecContext(ctx, args...)
	} else {
		_, err = s.conn.ExecContext(ctx, s.insertSQL(table, rows), args...)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", table, err)
	}
	clear(args) // let the sent values be collected
	s.pending[table] = args[:0]
	return nil
}

func (s *insertSink) flush(ctx context.Context) error {
	for _, t := range Tables {
		if err := s.send(ctx, t); err != nil {
			return err
		}
	}
	if s.inTx {
		s.inTx = false
		if _, err := s.conn.ExecContext(ctx, "COMMIT"); err != nil {
			return err
		}
	}
	return nil
}

func (s *insertSink) close() error {
	for _, st := range s.stmts {
		st.Close()
	}
	if s.inTx {
		s.conn.ExecContext(context.Background(), "ROLLBACK")
	}
	return s.conn.Close()
}
