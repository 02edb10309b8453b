package server

import (
	"context"

	"dbio/internal/engine"
	"dbio/internal/units"
)

var (
	_ engine.ConnectionLimit     = (*Engine)(nil)
	_ engine.ExternalConnections = (*Engine)(nil)
)

// MaxConnections implements engine.ConnectionLimit: every server engine's
// managed server gets ConfiguredMaxConnections, the user's setting read by
// the engine's own names for it.
func (e *Engine) MaxConnections(o engine.Options) (int, string) {
	return e.own.Settings.ConfiguredMaxConnections(o.Settings, o.MaxConns)
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
	err = db.QueryRowContext(ctx, e.own.MaxConnectionsQuery).Scan(&n)
	return n, err
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
