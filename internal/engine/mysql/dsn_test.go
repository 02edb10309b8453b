package mysql

import "testing"

// TestDSNForms reads the DSNs a user writes for MariaDB and MySQL as the
// driver must get them: a URL's scheme is dropped or the URL rewritten,
// since the driver alone would take "mysql" for the user.
func TestDSNForms(t *testing.T) {
	tests := []struct {
		dsn                  string
		user, passwd, addr   string
		db, net, wantErrText string
	}{
		{dsn: "bench:pw@tcp(127.0.0.1:3306)/", user: "bench", passwd: "pw", addr: "127.0.0.1:3306", net: "tcp"},
		{dsn: "mysql://bench:pw@tcp(127.0.0.1:3307)/", user: "bench", passwd: "pw", addr: "127.0.0.1:3307", net: "tcp"},
		{dsn: "mariadb://bench@unix(/run/mysqld/mysqld.sock)/shop", user: "bench", addr: "/run/mysqld/mysqld.sock", db: "shop", net: "unix"},
		{dsn: "mysql://bench:p%40ss@db1:3310/shop?timeout=5s", user: "bench", passwd: "p@ss", addr: "db1:3310", db: "shop", net: "tcp"},
		{dsn: "mariadb://bench@db1/", user: "bench", addr: "db1:3306", net: "tcp"},
		{dsn: "mysql://bench@[::1]:3306/", user: "bench", addr: "[::1]:3306", net: "tcp"},
		{dsn: "mysql://bench:%zz@db1/", wantErrText: "a mysql:// URL that does not parse"},
	}
	for _, tt := range tests {
		cfg, err := parseDSN(tt.dsn)
		if tt.wantErrText != "" {
			if err == nil || err.Error()[:len(tt.wantErrText)] != tt.wantErrText {
				t.Errorf("parseDSN(%q) = %v, want %q", tt.dsn, err, tt.wantErrText)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseDSN(%q): %v", tt.dsn, err)
			continue
		}
		if cfg.User != tt.user || cfg.Passwd != tt.passwd || cfg.Addr != tt.addr || cfg.DBName != tt.db || cfg.Net != tt.net {
			t.Errorf("parseDSN(%q) = user %q passwd %q %s(%s) db %q; want user %q passwd %q %s(%s) db %q",
				tt.dsn, cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName, tt.user, tt.passwd, tt.net, tt.addr, tt.db)
		}
	}
}
