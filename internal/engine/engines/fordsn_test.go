package engines

import "testing"

// TestForDSN chooses the engine a --dsn is written for, by its scheme or
// its form, and none for a DSN no engine takes.
func TestForDSN(t *testing.T) {
	r := New(Deps{})
	tests := map[string]string{
		"postgres://bench@127.0.0.1:5432/postgres":            "postgres",
		"postgresql://bench@db1/postgres?sslmode=disable":     "postgres",
		"host=127.0.0.1 port=5432 user=bench dbname=postgres": "postgres",
		"mysql://bench:pw@127.0.0.1:3306/":                    "mysql",
		"mysql://bench:pw@tcp(127.0.0.1:3306)/":               "mysql",
		"mariadb://bench@db1/":                                "mariadb",
		"bench:pw@tcp(127.0.0.1:3306)/":                       "mariadb",
		"bench@unix(/run/mysqld/mysqld.sock)/":                "mariadb",
		"sqlite:///tmp/x.db":                                  "",
		"just words":                                          "",
	}
	for dsn, want := range tests {
		got := ""
		if e := r.ForDSN(dsn); e != nil {
			got = e.Name()
		}
		if got != want {
			t.Errorf("ForDSN(%q) = %q, want %q", dsn, got, want)
		}
	}
}
