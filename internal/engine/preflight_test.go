package engine

import (
	"strings"
	"testing"
)

func TestMaskDSN(t *testing.T) {
	tests := []struct{ dsn, want string }{
		{"postgres://u:S3cret@127.0.0.1:5432/db", "postgres://u:***@127.0.0.1:5432/db"},
		{"postgres://u:S3c@ret@host:x/db", "postgres://u:***@host:x/db"},
		{"postgresql://u@host/db?password=S3cret&sslmode=disable", "postgresql://u@host/db?password=***&sslmode=disable"},
		{"host=h user=u password='S3 cret' dbname=d", "host=h user=u password=*** dbname=d"},
		{"host=h password = S3cret", "host=h password = ***"},
		{"root:S3cret@tcp(127.0.0.1:3306)/db", "root:***@tcp(127.0.0.1:3306)/db"},
		{"root@unix(/run/mysqld.sock)/", "root@unix(/run/mysqld.sock)/"},
		{"postgres://host/db", "postgres://host/db"},
	}
	for _, tt := range tests {
		got, scrub := MaskDSN(tt.dsn)
		if got != tt.want {
			t.Errorf("MaskDSN(%q) = %q, want %q", tt.dsn, got, tt.want)
		}
		if s := scrub("cannot parse " + tt.dsn); strings.Contains(s, "S3c") {
			t.Errorf("scrub left the password in %q", s)
		}
	}
}
