package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"dbio/internal/engine"
	"dbio/internal/units"
)

var (
	_ engine.ConnectionLimit     = (*Engine)(nil)
	_ engine.ExternalConnections = (*Engine)(nil)
	_ engine.MemoryNeeds         = (*Engine)(nil)
)

// MaxConnections implements engine.ConnectionLimit: every server engine's
// managed server gets ConfiguredMaxConnections, the user's setting read by
// the engine's own names for it.
func (e *Engine) MaxConnections(o engine.Options) (int, string) {
	return e.own.Settings.ConfiguredMaxConnections(o.Settings, o.MaxConns)
}

// OwnConnections implements engine.ConnectionLimit: the connection the
// server's counters are read on, and the one its database time is sampled
// on (Activity) unless that is turned off.
func (e *Engine) OwnConnections(o engine.Options) (int, string) {
	if ActivityOff(o.Getenv) {
		return 1, "the server's counters"
	}
	return 2, "the server's counters and its database time"
}

// ExternalMaxConnections implements engine.ExternalConnections: it
// connects as the engine's ExternalAdmin does, reads max_connections and
// disconnects.
func (e *Engine) ExternalMaxConnections(ctx context.Context, o engine.Options) (int, error) {
	db, err := e.own.ExternalAdmin(o)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, e.own.MaxConnectionsQuery).Scan(&n); err != nil {
		if ce := e.own.ConnectError(o.DSN, err); ce != err {
			return 0, ce
		}
		return 0, errors.New(oneLine(err.Error()))
	}
	return n, nil
}

// oneLine puts a driver's error on one line, each of its lines once: pgx
// reports every attempt of a connection (with TLS, then without) on a
// line of its own, mostly the same.
func oneLine(msg string) string {
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return msg
	}
	return strings.TrimSpace(lines[0] + " " + strings.Join(lines[1:], "; "))
}

// Memory is what an engine's managed server holds, as MemoryNeed counts
// it: its buffer pool, what it holds beside the pool, and each
// connection's share.
type Memory struct {
	Pool BufferPool
	// Beside is what the server holds beside a buffer pool of pool bytes.
	Beside func(pool int64) []MemoryPart
	// PerConnection is what each connection takes once it has run the
	// workload's statements.
	PerConnection int64
}

// MemoryPart is memory a server holds beside its buffer pool: Bytes, said
// as Of after its size ("of WAL buffers").
type MemoryPart struct {
	Bytes int64
	Of    string
}

// MemoryNeed implements engine.MemoryNeeds: the engine's buffer pool (its
// default, --buffer-pool or the user's setting), what the server holds
// beside it, and each of conns connections' share.
func (e *Engine) MemoryNeed(o engine.Options, conns int) (int64, string) {
	m := e.own.Memory
	pool, what := m.Pool.Size(o)
	need, words := pool, []string{what}
	for _, part := range m.Beside(pool) {
		need += part.Bytes
		words = append(words, units.FormatBytes(uint64(part.Bytes))+" "+part.Of)
	}
	need += int64(conns) * m.PerConnection
	words = append(words, fmt.Sprintf("%d connections × %s", conns, units.FormatBytes(uint64(m.PerConnection))))
	return need, strings.Join(words, " + ")
}

// BufferPool is how an engine's managed server sizes its buffer pool, for
// its MemoryNeed: the engine's default, --buffer-pool, or the user's own
// setting of it, which dbio writes after its choices and so wins.
type BufferPool struct {
	// Setting is the name of the engine's setting that sizes the pool,
	// compared with the user's settings as Names.Same does.
	Setting string
	Names   SettingNames
	// Parse reads the setting's value as the server does, in bytes.
	Parse func(value string) (int64, error)
	// Default is the server's own size, said as DefaultWords.
	Default      int64
	DefaultWords string
	// Of follows a size in the explanation ("of buffer pool").
	Of string
}

// Size is the pool o gives the server, and where it came from in words.
func (b BufferPool) Size(o engine.Options) (int64, string) {
	pool, what := b.Default, b.DefaultWords
	if o.BufferPool > 0 {
		pool, what = o.BufferPool, units.FormatBytes(uint64(o.BufferPool))+" "+b.Of
	}
	if v, ok := b.Names.Value(o.Settings, b.Setting); ok {
		if n, err := b.Parse(v); err == nil && n > 0 {
			pool, what = n, units.FormatBytes(uint64(n))+" "+b.Of+" (setting)"
		}
	}
	return pool, what
}
