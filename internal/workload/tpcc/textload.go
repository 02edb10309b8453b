package tpcc

import (
	"bytes"
	"context"
	"strings"
)

// copyChunk is how much text a loader gathers for one table before sending
// it: large enough that a bulk load command's fixed cost vanishes.
const copyChunk = 1 << 20

// bulkText is a server's bulk path for rows in the text of text.go
// (PostgreSQL's COPY, MariaDB's LOAD DATA) on one connection.
type bulkText interface {
	// exec runs a statement without rows (BEGIN, COMMIT).
	exec(ctx context.Context, stmt string) error
	// load sends b, the text of rows of table's columns (cols, comma-separated).
	load(ctx context.Context, table, cols string, b *bytes.Buffer) error
	// close gives the connection back; inTx says a transaction is still open.
	close(inTx bool) error
}

// textSink gathers each table's rows as text and sends a table's text
// through a server's bulk path once it fills a chunk, one transaction per
// flush (a warehouse).
type textSink struct {
	to    bulkText
	begin string // starts the transaction a flush commits
	enc   textEncoder
	bufs  map[string]*bytes.Buffer
	inTx  bool
}

func newTextSink(to bulkText, begin, timeLayout string) *textSink {
	return &textSink{to: to, begin: begin, enc: textEncoder{timeLayout: timeLayout}, bufs: map[string]*bytes.Buffer{}}
}

func (s *textSink) add(ctx context.Context, table string, row []value) error {
	b := s.bufs[table]
	if b == nil {
		b = bytes.NewBuffer(make([]byte, 0, copyChunk+4096))
		s.bufs[table] = b
	}
	s.enc.writeRow(b, row)
	if b.Len() >= copyChunk {
		return s.send(ctx, table, b)
	}
	return nil
}

func (s *textSink) send(ctx context.Context, table string, b *bytes.Buffer) error {
	if b.Len() == 0 {
		return nil
	}
	if !s.inTx {
		if err := s.to.exec(ctx, s.begin); err != nil {
			return err
		}
		s.inTx = true
	}
	if err := s.to.load(ctx, table, strings.Join(tableByName(table).columnNames(), ", "), b); err != nil {
		return err
	}
	b.Reset()
	return nil
}

func (s *textSink) flush(ctx context.Context) error {
	for _, t := range Tables {
		if b := s.bufs[t]; b != nil {
			if err := s.send(ctx, t, b); err != nil {
				return err
			}
		}
	}
	if !s.inTx {
		return nil
	}
	s.inTx = false
	return s.to.exec(ctx, "COMMIT")
}

func (s *textSink) close() error { return s.to.close(s.inTx) }
