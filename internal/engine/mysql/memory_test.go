package mysql

import (
	"testing"

	"dbio/internal/engine"
	"dbio/internal/execx"
)

// TestSettingsReadAsTheServerReadsThem: the connection limit and the
// buffer pool a managed MariaDB server will have are read from the user's
// settings by my.cnf's rule (dashes for underscores, any case), the rule
// the option file is written by; of two spellings, the one written last.
func TestSettingsReadAsTheServerReadsThem(t *testing.T) {
	e := New("mariadb", execx.Real{}, "/proc")
	base, _ := e.MemoryNeed(engine.Options{BufferPool: 1 << 30}, 0)
	for _, tc := range []struct {
		name     string
		settings map[string]string
		conns    int
		pool     int64
	}{
		{"none", nil, 300, innodbDefaultPool},
		{"underscores", map[string]string{"max_connections": "500", "innodb_buffer_pool_size": "1G"}, 500, 1 << 30},
		{"dashes", map[string]string{"max-connections": "50", "innodb-buffer-pool-size": "1G"}, 50, 1 << 30},
		{"upper case", map[string]string{"MAX_CONNECTIONS": "400"}, 400, innodbDefaultPool},
		{"two spellings", map[string]string{"max-connections": "50", "max_connections": "60"}, 60, innodbDefaultPool},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := engine.Options{Settings: tc.settings}
			if n, from := e.MaxConnections(o); n != tc.conns {
				t.Errorf("MaxConnections = %d (%s), want %d", n, from, tc.conns)
			}
			if need, what := e.MemoryNeed(o, 0); need != base-(1<<30)+tc.pool {
				t.Errorf("MemoryNeed = %d (%s), want a %d-byte buffer pool", need, what, tc.pool)
			}
		})
	}
}
