package suite

import (
	"errors"
	"strings"
	"testing"
)

// TestControlCharactersRefused: every value of a suite that reaches a
// configuration file, a job file or the terminal is refused, at its line,
// when it holds a control character; the DSN is shown without its password.
func TestControlCharactersRefused(t *testing.T) {
	text := `name = "s\u001b[2J"
results = "r\nx"
[targets."a\rb"]
path = "/srv/A\ndatadir=/srv/B\n#"
[targets.hosts]
paths = ["h1:/srv/a\u2028b"]
[[host]]
name = "h1"
destination = "h1"
[engines.e]
engine = "mariadb"
dsn = "u:S3cret@tcp(127.0.0.1:3306)/\u0085"
settings = { "log_error" = "x\ty" }
[workloads.w]
kind = "tpcc"
[[runs]]
name = "r\u007f"
workload = "w"
engine = "e"
data = "hosts"
`
	_, err := Parse("s.toml", []byte(text), testEnv(nil))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse = %v", err)
	}
	for _, want := range []string{
		`line 1: name: "s\x1b[2J" holds an escape character (U+001B) at byte 1`,
		`line 2: results: "r\nx" holds a line break (U+000A) at byte 1`,
		`"targets.a\rb": "a\rb" holds a line break (U+000D)`,
		`"targets.a\rb.path": "/srv/A\ndatadir=/srv/B\n#" holds a line break (U+000A) at byte 6`,
		`line 6: targets.hosts.paths: target "h1:/srv/a\u2028b" holds a line break (U+2028)`,
		`engines.e.dsn: "u:***@tcp(127.0.0.1:3306)/\u0085" holds a line break (U+0085)`,
		`engines.e.settings.log_error: "log_error = x\ty" holds a tab (U+0009) at byte 13`,
		`runs[0].name: "r\x7f" holds a control character (U+007F)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problems do not say %q:\n%s", want, err)
		}
	}
	if strings.Contains(err.Error(), "S3cret") {
		t.Errorf("a password is shown:\n%s", err)
	}
	if strings.ContainsAny(err.Error(), "\r\x1b\x7f\t\u2028\u0085") {
		t.Errorf("a control character is shown raw:\n%q", err)
	}
}
