package secret

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

func TestRedactDSN(t *testing.T) {
	tests := []struct {
		name, in, want string
		hidden         []string // none of these may remain
	}{
		// PostgreSQL URLs.
		{"url", "postgres://u:S3cret@127.0.0.1:5432/db", "postgres://u:***@127.0.0.1:5432/db", []string{"S3cret"}},
		{"postgresql scheme", "postgresql://u:S3cret@h/db?sslmode=disable", "postgresql://u:***@h/db?sslmode=disable", []string{"S3cret"}},
		{"url without password", "postgres://u@h:5432/db?sslmode=disable", "postgres://u@h:5432/db?sslmode=disable", nil},
		{"url without user", "postgres://h/db", "postgres://h/db", nil},
		{"password parameter", "postgres://u@h/db?sslmode=require&password=S3cret&application_name=x", "postgres://u@h/db?sslmode=require&password=***&application_name=x", []string{"S3cret"}},
		{"both places", "postgres://u:Pw1@h/db?password=Pw2", "postgres://u:***@h/db?password=***", []string{"Pw1", "Pw2"}},
		{"sslpassword", "postgres://u@h/db?sslpassword=KeyPw&sslmode=verify-full", "postgres://u@h/db?sslpassword=***&sslmode=verify-full", []string{"KeyPw"}},
		{"escaped key", "postgres://u@h/db?pass%77ord=S3cret", "postgres://u@h/db?pass%77ord=***", []string{"S3cret"}},
		{"upper-case key", "postgres://u@h/db?PASSWORD=S3cret", "postgres://u@h/db?PASSWORD=***", []string{"S3cret"}},
		{"percent-encoded password", "postgres://u:p%40ss%2Fw@h/db", "postgres://u:***@h/db", []string{"p%40ss%2Fw"}},
		{"multi-host", "postgres://u:S3cret@h1:5432,h2:5433/db", "postgres://u:***@h1:5432,h2:5433/db", []string{"S3cret"}},
		{"ipv6", "postgres://u:S3cret@[::1]:5432/db", "postgres://u:***@[::1]:5432/db", []string{"S3cret"}},
		{"at sign in a query value", "postgres://u:S3cret@h/db?application_name=a@b", "postgres://u:***@h/db?application_name=a@b", []string{"S3cret"}},
		// Malformed URLs: more is hidden, never less.
		{"unescaped @ in password", "postgres://u:p@ssword@h/db", "postgres://u:***@h/db", []string{"p@ssword", "ssword"}},
		{"unescaped / in password", "postgres://u:pa/ssword@h/db", "postgres://u:***@h/db", []string{"pa/ssword", "ssword"}},
		{"unescaped ? in password", "postgres://u:pa?ssword@h/db", "postgres://u:***@h/db", []string{"pa?ssword", "ssword"}},
		{"unescaped # in password", "postgres://u:pa#ssword@h/db", "postgres://u:***@h/db", []string{"pa#ssword"}},
		{"colons in password", "postgres://u:sec:ret:pw@h/db", "postgres://u:***@h/db", []string{"sec:ret:pw", "ret:pw"}},
		{"unescaped & in password parameter", "postgres://h/db?password=abc&defgh&sslmode=disable", "postgres://h/db?password=***&***&sslmode=disable", []string{"abc", "defgh"}},
		{"bad escape", "postgres://u:S3cret%zz@h/db", "postgres://u:***@h/db", []string{"S3cret"}},
		{"no host", "postgres://u:S3cret@", "postgres://u:***@", []string{"S3cret"}},
		{"leading space", "  postgres://u:S3cret@h/db", "  postgres://u:***@h/db", []string{"S3cret"}},
		{"other scheme", "mysql://u:S3cret@h/db", "mysql://u:***@h/db", []string{"S3cret"}},
		// libpq keyword/value.
		{"keywords", "host=h user=u password=S3cret dbname=d", "host=h user=u password=*** dbname=d", []string{"S3cret"}},
		{"spaces around =", "host=h password = S3cret dbname=d", "host=h password = *** dbname=d", []string{"S3cret"}},
		{"quoted", "host=h password='S3 cr\\'et' dbname=d", "host=h password=*** dbname=d", []string{"S3", "cr\\'et", "cr'et"}},
		{"unterminated quote", "host=h password='S3cret dbname=d", "host=h password=***", []string{"S3cret", "dbname=d"}},
		{"unquoted space", "host=h password=S3 cret dbname=d", "host=h password=*** *** dbname=d", []string{"S3", "cret"}},
		{"backslash-escaped space", `password=S3\ cret host=h`, "password=*** host=h", []string{"S3", "cret"}},
		{"password last", "host=h password=S3cret", "host=h password=***", []string{"S3cret"}},
		{"password only", "password=S3cret", "password=***", []string{"S3cret"}},
		{"sslpassword keyword", "host=h sslpassword=KeyPw sslkey=/k", "host=h sslpassword=*** sslkey=/k", []string{"KeyPw"}},
		{"keywords without password", "host=/var/run/postgresql dbname=d", "host=/var/run/postgresql dbname=d", nil},
		// libpq skips the spaces after '=': the password is "dbname=d".
		{"empty password", "host=h password= dbname=d", "host=h password= ***", []string{"dbname=d"}},
		// go-sql-driver/mysql.
		{"mysql tcp", "bench:S3cret@tcp(127.0.0.1:3306)/db", "bench:***@tcp(127.0.0.1:3306)/db", []string{"S3cret"}},
		{"mysql unix", "bench:S3cret@unix(/run/mysqld/mysqld.sock)/", "bench:***@unix(/run/mysqld/mysqld.sock)/", []string{"S3cret"}},
		{"mysql params", "bench:S3cret@tcp(h:3306)/db?tls=true&timeout=5s", "bench:***@tcp(h:3306)/db?tls=true&timeout=5s", []string{"S3cret"}},
		{"mysql without password", "bench@tcp(h:3306)/", "bench@tcp(h:3306)/", nil},
		{"mysql without user", "tcp(h:3306)/db", "tcp(h:3306)/db", nil},
		{"mysql @ in password", "bench:p@ss:w/rd@tcp(h)/db", "bench:***@tcp(h)/db", []string{"p@ss:w/rd", "ss:w"}},
		{"mysql @ in user", "a@b:S3cret@tcp(h)/", "a@b:***@tcp(h)/", []string{"S3cret"}},
		{"mysql default address", "bench:S3cret@/db", "bench:***@/db", []string{"S3cret"}},
		{"mysql password parameter", "bench@tcp(h)/db?password=S3cret", "bench@tcp(h)/db?password=***", []string{"S3cret"}},
		// Nothing dbio accepts: hidden whole.
		{"bare password", "S3cret", "***", []string{"S3cret"}},
		{"mysql without slash", "bench:S3cret@tcp(h:3306)", "bench:***@tcp(h:3306)", []string{"S3cret"}},
		{"empty", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RedactDSN(tt.in)
			if got != tt.want {
				t.Errorf("RedactDSN(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for _, h := range tt.hidden {
				if strings.Contains(got, h) {
					t.Errorf("RedactDSN(%q) = %q keeps %q", tt.in, got, h)
				}
			}
			if again := RedactDSN(got); again != got {
				t.Errorf("redacting twice changes %q into %q", got, again)
			}
		})
	}
}

func TestRedactArgs(t *testing.T) {
	tests := []struct {
		name   string
		in     []string
		want   []string
		hidden []string
	}{
		{"--dsn X", []string{"dbio", "tpcc", "--engine", "postgres", "--dsn", "postgres://u:S3cret@h/db", "--users", "1"},
			[]string{"dbio", "tpcc", "--engine", "postgres", "--dsn", "postgres://u:***@h/db", "--users", "1"}, []string{"S3cret"}},
		{"--dsn=X", []string{"dbio", "tpcc", "--dsn=bench:S3cret@tcp(h:3306)/"},
			[]string{"dbio", "tpcc", "--dsn=bench:***@tcp(h:3306)/"}, []string{"S3cret"}},
		{"-dsn=X", []string{"dbio", "-dsn=host=h password=S3cret"}, []string{"dbio", "-dsn=host=h password=***"}, []string{"S3cret"}},
		{"keyword DSN", []string{"dbio", "sysbench", "--dsn", "host=h password='S3x cret'"},
			[]string{"dbio", "sysbench", "--dsn", "host=h password=***"}, []string{"S3x", "cret"}},
		{"value that looks like a flag", []string{"dbio", "--dsn", "--S3cret"}, []string{"dbio", "--dsn", "***"}, []string{"--S3cret"}},
		{"--dsn last", []string{"dbio", "tpcc", "--dsn"}, []string{"dbio", "tpcc", "--dsn"}, nil},
		{"--dsn-file is a path", []string{"dbio", "--dsn-file", "/etc/dbio/pg.dsn"}, []string{"dbio", "--dsn-file", "/etc/dbio/pg.dsn"}, nil},
		{"password flag", []string{"dbio", "--password", "S3cret", "--db-password=Other"}, []string{"dbio", "--password", "***", "--db-password=***"}, []string{"S3cret", "Other"}},
		{"DSN given to dbio ab", []string{"dbio", "ab", "--a", "--dsn postgres://u:S3cret@h/db", "--", "tpcc", "--dsn=u:S3cret@tcp(h)/"},
			[]string{"dbio", "ab", "--a", "--dsn postgres://u:***@h/db", "--", "tpcc", "--dsn=u:***@tcp(h)/"}, []string{"S3cret"}},
		{"setup command", []string{"dbio", "ab", "--a-setup", "psql 'host=h password=S3cret' -c 'select 1'"},
			[]string{"dbio", "ab", "--a-setup", "psql 'host=h password=***' -c 'select 1'"}, []string{"S3cret"}},
		{"plain arguments untouched", []string{"dbio", "tpcc", "--target", "/mnt/nvme", "--users", "1,2,4", "--setting", "synchronous_commit=off", "--rampup", "-1s"},
			[]string{"dbio", "tpcc", "--target", "/mnt/nvme", "--users", "1,2,4", "--setting", "synchronous_commit=off", "--rampup", "-1s"}, nil},
		{"empty", nil, []string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RedactArgs(tt.in)
			if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") || len(got) != len(tt.want) {
				t.Errorf("RedactArgs(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			for _, h := range tt.hidden {
				for _, a := range got {
					if strings.Contains(a, h) {
						t.Errorf("argument %q keeps %q", a, h)
					}
				}
			}
			if tt.in != nil && &got[0] == &tt.in[0] {
				t.Error("RedactArgs changed its input in place")
			}
			values := ArgValues(tt.in)
			for _, h := range tt.hidden {
				msg := Scrub("failed: "+h+" was refused", values)
				if strings.Contains(msg, h) {
					t.Errorf("ArgValues %q do not scrub %q", values, h)
				}
			}
		})
	}
}

func TestRedactText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"--dsn postgres://u:S3cret@h/db", "--dsn postgres://u:***@h/db"},
		{"connect with `host=h user=u password=S3cret`: refused", "connect with `host=h user=u password=***`: refused"},
		{`PGPASSWORD="S3 cret" psql -h h`, `PGPASSWORD=*** psql -h h`},
		{"bench:S3cret@tcp(h:3306)/", "bench:***@tcp(h:3306)/"},
		{"Access denied for user 'bench'@'127.0.0.1' (using password: YES)", "Access denied for user 'bench'@'127.0.0.1' (using password: YES)"},
		{"--buffer-pool 64MB", "--buffer-pool 64MB"},
	}
	for _, tt := range tests {
		if got := RedactText(tt.in); got != tt.want {
			t.Errorf("RedactText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestValuesScrubMessages(t *testing.T) {
	tests := []struct {
		dsn, message string
		hidden       []string
	}{
		{"postgres://u:S3cret@h/db", "cannot parse `postgres://u:S3cret@h/db`: bad", []string{"S3cret"}},
		{"postgres://u:p%40ss@h/db", "password p@ss was refused", []string{"p@ss"}},
		{"host=h password='a b\\'c'", "cannot parse `host=h password = a b'c`", []string{"a b'c"}},
		// libpq takes "pa" for the password and "ssword@h" for the host.
		{"postgres://u:pa@ssword@h/db", "lookup ssword@h: no such host", []string{"ssword"}},
		{"bench:S3cret@tcp(h)/", "invalid DSN bench:S3cret@tcp(h)/", []string{"S3cret"}},
	}
	for _, tt := range tests {
		got := Scrub(tt.message, Values(tt.dsn))
		for _, h := range tt.hidden {
			if strings.Contains(got, h) {
				t.Errorf("Scrub(%q, Values(%q)) = %q keeps %q", tt.message, tt.dsn, got, h)
			}
		}
	}
	if v := Values("postgres://u@h/db"); len(v) != 0 {
		t.Errorf("a DSN without password has secrets %q", v)
	}
}

func TestScrubErrorKeepsTheChain(t *testing.T) {
	base := fmt.Errorf("connect to postgres://u:S3cret@h/db: %w", fs.ErrNotExist)
	err := ScrubError(base, Values("postgres://u:S3cret@h/db"))
	if strings.Contains(err.Error(), "S3cret") || !strings.Contains(err.Error(), "u:***@h") {
		t.Errorf("message %q", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("errors.Is no longer sees the wrapped error")
	}
	plain := errors.New("no secret here")
	if ScrubError(plain, []string{"S3cret"}) != plain {
		t.Error("an error without secrets should come back unchanged")
	}
	if ScrubError(nil, []string{"x"}) != nil {
		t.Error("nil should stay nil")
	}
}

func TestDSNTypeNeverPrintsItsPassword(t *testing.T) {
	d := DSN("postgres://u:S3cret@h/db")
	type holder struct {
		DSN DSN `json:"dsn"`
	}
	b, err := json.Marshal(holder{d})
	if err != nil {
		t.Fatal(err)
	}
	outputs := []string{string(b), fmt.Sprint(d), fmt.Sprintf("%v %s %q %+v %#v %x %10s", d, d, d, d, d, d, d), fmt.Sprintf("%v %+v %#v", holder{d}, holder{d}, holder{d}), d.String()}
	for _, o := range outputs {
		if strings.Contains(o, "S3cret") || strings.Contains(o, fmt.Sprintf("%x", "S3cret")) {
			t.Errorf("%s shows the password", o)
		}
	}
	if string(b) != `{"dsn":"postgres://u:***@h/db"}` {
		t.Errorf("JSON %s", b)
	}
	if d.Reveal() != "postgres://u:S3cret@h/db" {
		t.Error("Reveal lost the password")
	}
}

func TestAPasswordIsHiddenWhereverItRepeats(t *testing.T) {
	if got := RedactDSN("host=h password=S3cret sslmode=S3cret"); strings.Contains(got, "S3cret") {
		t.Errorf("RedactDSN kept a repeated password: %q", got)
	}
	if got := RedactDSN("bench:S3cret@tcp(h)/?parseTime=S3cret"); strings.Contains(got, "S3cret") {
		t.Errorf("RedactDSN kept a repeated password: %q", got)
	}
	got := RedactArgs([]string{"dbio", "--dsn", "postgres://u:S3cret@h/db", "--name", "S3cret-run"})
	if strings.Contains(strings.Join(got, " "), "S3cret") {
		t.Errorf("RedactArgs kept a repeated password: %q", got)
	}
}
