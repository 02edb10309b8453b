package secret

import (
	"strings"
	"testing"
)

// A driver that cannot parse a DSN quotes it back in its error; the
// preflight shows that error through Scrubber.
func TestScrubberHidesADriverEchoingTheDSN(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:S3cret@127.0.0.1:5432/db",
		"postgres://u:S3c@ret@host:x/db",
		"postgresql://u@host/db?password=S3cret&sslmode=disable",
		"host=h user=u password='S3 cret' dbname=d",
		"host=h password = S3cret",
		"root:S3cret@tcp(127.0.0.1:3306)/db",
	} {
		if got := RedactDSN(dsn); strings.Contains(got, "S3") {
			t.Errorf("RedactDSN(%q) = %q, still has the password", dsn, got)
		}
		if got := Scrubber(dsn)("cannot parse `" + dsn + "`: bad port"); strings.Contains(got, "S3") {
			t.Errorf("Scrubber(%q) left the password in %q", dsn, got)
		}
	}
}

// A MySQL DSN missing its /database is still recognised: its password is
// hidden, not the user or the port that a message about it will name.
func TestRedactMySQLWithoutDatabase(t *testing.T) {
	dsn := "root:S3cret@tcp(127.0.0.1:3306"
	if got, want := RedactDSN(dsn), "root:***@tcp(127.0.0.1:3306"; got != want {
		t.Errorf("RedactDSN(%q) = %q, want %q", dsn, got, want)
	}
	if got := Scrubber(dsn)("use tcp(host:3306)/ as root"); got != "use tcp(host:3306)/ as root" {
		t.Errorf("scrubbed more than the password: %q", got)
	}
}
