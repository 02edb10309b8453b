package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dbio/internal/engine"
	"dbio/internal/engine/engines"
	"dbio/internal/execx"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// passwordServer is a real server that demands a password over loopback
// TCP: a user bench with password pw, on 127.0.0.1:port.
type passwordServer struct {
	engine string
	port   string
	pw     string
	// admin is the server's administrative pool, for a test's own statements.
	admin *sql.DB
}

// startPasswordServer starts a managed instance of engineName and creates
// in it a user who must authenticate with a password: a PostgreSQL role
// checked with scram-sha-256 (dbio's pg_hba for TCP), a MariaDB user at
// 127.0.0.1 (the server binds loopback, skip-name-resolve).
func startPasswordServer(t *testing.T, engineName string) passwordServer {
	t.Helper()
	testenv.RequireEngine(t, engineName)
	e, err := engines.New(engines.Deps{Exec: execx.Real{}, ProcRoot: "/proc"}).Lookup(engineName)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The server runs as an unprivileged user, who must reach its directory.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tg, err := target.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := engine.Options{Database: "dbio_server", Transport: "tcp", Fresh: true, LogDir: dir}
	if engineName == "mariadb" {
		// A small redo log keeps creating the instance quick.
		o.Settings = map[string]string{"innodb_log_file_size": "48M"}
	}
	ctx := context.Background()
	inst, err := e.Start(ctx, engine.Placement{Data: tg}, o)
	if err != nil {
		t.Fatalf("start %s: %v", engineName, err)
	}
	t.Cleanup(func() { inst.Stop(context.Background()) })
	s := passwordServer{engine: engineName, pw: "PwS3cret" + randomHex(t), admin: inst.DB()}
	var stmts []string
	var portQuery string
	switch engineName {
	case "postgres":
		stmts = []string{"CREATE ROLE bench LOGIN CREATEDB PASSWORD '" + s.pw + "'"}
		portQuery = "SELECT current_setting('port')"
	case "mariadb":
		stmts = []string{"CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '" + s.pw + "'", "GRANT ALL PRIVILEGES ON *.* TO 'bench'@'127.0.0.1'"}
		portQuery = "SELECT @@port"
	}
	for _, q := range stmts {
		if _, err := inst.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := inst.DB().QueryRowContext(ctx, portQuery).Scan(&s.port); err != nil {
		t.Fatal(err)
	}
	return s
}

func randomHex(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// dsn is the server's DSN for bench with password pw ("" for none), in the
// engine's usual form (keyword/value for PostgreSQL when keywords is set).
func (s passwordServer) dsn(pw string, keywords bool) string {
	switch {
	case s.engine == "mariadb" && pw == "":
		return "bench@tcp(127.0.0.1:" + s.port + ")/"
	case s.engine == "mariadb":
		return "bench:" + pw + "@tcp(127.0.0.1:" + s.port + ")/"
	case keywords:
		return fmt.Sprintf("host=127.0.0.1 port=%s user=bench password='%s' dbname=postgres sslmode=disable", s.port, pw)
	case pw == "":
		return "postgres://bench@127.0.0.1:" + s.port + "/postgres?sslmode=disable"
	}
	return "postgres://bench:" + pw + "@127.0.0.1:" + s.port + "/postgres?sslmode=disable"
}

// passwordEnv is the variable the engine's clients read the password from.
func (s passwordServer) passwordEnv() string {
	if s.engine == "mariadb" {
		return "MYSQL_PWD"
	}
	return "PGPASSWORD"
}

// TestNoPasswordOnDiskOrScreen runs dbio end to end against real servers
// that demand a password, given every way dbio accepts one (and a wrong
// one), then looks for the passwords in every file of the results and in
// everything dbio printed.
func TestNoPasswordOnDiskOrScreen(t *testing.T) {
	// It checks what is recorded and said, not how fast: it shares the
	// machine with the other parallel tests.
	t.Parallel()
	if testing.Short() {
		t.Skip("starts real servers")
	}
	servers := []passwordServer{startPasswordServer(t, "postgres"), startPasswordServer(t, "mariadb")}
	wrong := "WrongPw" + randomHex(t)
	secrets := []string{wrong}
	for _, s := range servers {
		secrets = append(secrets, s.pw)
	}
	res := t.TempDir()
	var screen bytes.Buffer
	sysbenchArgs := []string{"--tables", "1", "--table-size", "500", "--users", "1", "--ramp-time", "0s", "--runtime", "1s"}
	// dbio runs the command line args as main does and returns what it
	// printed; its exit code must be one of want.
	dbio := func(t *testing.T, env map[string]string, want []int, args ...string) string {
		t.Helper()
		var out bytes.Buffer
		app := testApp(&out)
		app.Args = append([]string{"dbio"}, args...)
		app.Getenv = func(k string) string { return env[k] }
		code := run(context.Background(), app, args)
		screen.Write(out.Bytes())
		if !slices.Contains(want, code) {
			t.Fatalf("dbio %s: exit code %d, want %v:\n%s", strings.Join(app.Args, " "), code, want, out.String())
		}
		return out.String()
	}
	ok := []int{exitOK}

	for _, s := range servers {
		t.Run(s.engine, func(t *testing.T) {
			base := filepath.Join(res, s.engine)
			t.Run("password in --dsn", func(t *testing.T) {
				dbio(t, nil, ok, append([]string{"sysbench", "--engine", s.engine, "--dsn", s.dsn(s.pw, false),
					"--results", base, "--name", "inline"}, sysbenchArgs...)...)
				// The command is recorded, without the password.
				l := loadRun(t, base, "inline")
				if cmd := strings.Join(l.Run.Command, " "); !strings.Contains(cmd, "bench:***@") {
					t.Errorf("recorded command %q does not show the redacted DSN", cmd)
				}
			})
			t.Run("wrong password", func(t *testing.T) {
				// Refused by the preflight's connection, before anything is written.
				out := dbio(t, nil, []int{exitUsage}, append([]string{"sysbench", "--engine", s.engine, "--dsn=" + s.dsn(wrong, false),
					"--results", base, "--name", "wrong"}, sysbenchArgs...)...)
				if !strings.Contains(out, "password authentication failed") && !strings.Contains(out, "Access denied") {
					t.Errorf("the run was not refused on authentication:\n%s", out)
				}
				if m, _ := filepath.Glob(filepath.Join(base, "*-wrong")); len(m) > 0 {
					t.Errorf("a refused run wrote %v", m)
				}
			})
			t.Run("malformed DSN", func(t *testing.T) {
				// The driver rejects it and says why, quoting part of it:
				// pgx's own redaction misses "password = x", and
				// go-sql-driver/mysql quotes a bad parameter's value.
				bad := fmt.Sprintf("host=127.0.0.1 port=%s user=bench password = %s sslmode=%s", s.port, s.pw, s.pw)
				if s.engine == "mariadb" {
					bad = s.dsn(s.pw, false) + "?parseTime=" + s.pw
				}
				// Refused before (exit 2) or when the engine starts (exit 1).
				dbio(t, nil, []int{exitUsage, exitFailure}, append([]string{"sysbench", "--engine", s.engine, "--dsn", bad,
					"--results", base, "--name", "malformed"}, sysbenchArgs...)...)
			})
			t.Run("password in "+s.passwordEnv(), func(t *testing.T) {
				dbio(t, map[string]string{s.passwordEnv(): s.pw}, ok, append([]string{"sysbench", "--engine", s.engine, "--dsn", s.dsn("", false),
					"--results", base, "--name", "env"}, sysbenchArgs...)...)
			})
			t.Run("--dsn-file", func(t *testing.T) {
				file := filepath.Join(t.TempDir(), "dsn")
				if err := os.WriteFile(file, []byte(s.dsn(s.pw, true)+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				dbio(t, nil, ok, append([]string{"sysbench", "--engine", s.engine, "--dsn-file", file,
					"--results", base, "--name", "file"}, sysbenchArgs...)...)
			})
		})
	}

	t.Run("suite", func(t *testing.T) {
		pg, maria := servers[0], servers[1]
		file := filepath.Join(t.TempDir(), "maria.dsn")
		if err := os.WriteFile(file, []byte(maria.dsn(maria.pw, false)), 0o600); err != nil {
			t.Fatal(err)
		}
		suiteFile := filepath.Join(t.TempDir(), "s.toml")
		text := fmt.Sprintf(`name = "secrets"
[targets.none]
path = %q
[engines.pg]
engine = "postgres"
dsn_env = "PG_DSN"
transport = "tcp"
[engines.maria]
engine = "mariadb"
dsn_file = %q
transport = "tcp"
[engines.wrong]
engine = "postgres"
dsn = %q
transport = "tcp"
[workloads.sb]
kind = "sysbench"
tables = 1
table_size = 500
users = [1]
rampup = "0s"
step = "1s"
[[runs]]
workload = "sb"
engine = ["pg", "maria"]
data = "none"
`, t.TempDir(), file, pg.dsn(wrong, false))
		if err := os.WriteFile(suiteFile, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		dbio(t, map[string]string{"PG_DSN": pg.dsn(pg.pw, false)}, ok, "suite", suiteFile, "--results", filepath.Join(res, "suite"))
		// A run with the wrong password stops the suite before it starts.
		refused := strings.Replace(text, `engine = ["pg", "maria"]`, `engine = ["pg", "maria", "wrong"]`, 1)
		if err := os.WriteFile(suiteFile, []byte(refused), 0o600); err != nil {
			t.Fatal(err)
		}
		out := dbio(t, map[string]string{"PG_DSN": pg.dsn(pg.pw, false)}, []int{exitUsage}, "suite", suiteFile, "--results", filepath.Join(res, "suite"))
		if !strings.Contains(out, "run sb-wrong: dsn postgres://bench:***@") || !strings.Contains(out, "password authentication failed") {
			t.Errorf("want the wrong-password run refused:\n%s", out)
		}
		if m, _ := filepath.Glob(filepath.Join(res, "suite", "*", "suite.json")); len(m) != 1 {
			t.Errorf("suite.json: %v", m)
		}
	})

	// Every file dbio wrote, and everything it printed, without a password.
	kinds := map[string]int{}
	err := filepath.WalkDir(res, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		kinds[d.Name()]++
		if strings.HasSuffix(path, ".csv") {
			kinds["csv"]++
		}
		for _, pw := range secrets {
			if bytes.Contains(b, []byte(pw)) {
				t.Errorf("%s holds a password", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"run.json", "report.html", "summary.md", "csv", "suite.json"} {
		if kinds[name] == 0 {
			t.Errorf("no %s among the results: the search proves nothing about it (%v)", name, kinds)
		}
	}
	for _, pw := range secrets {
		if strings.Contains(screen.String(), pw) {
			t.Errorf("dbio printed a password:\n%s", screen.String())
		}
	}
}

// loadRun loads the one results directory named name under base.
func loadRun(t *testing.T, base, name string) *results.Loaded {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(base, "*-"+name))
	if len(m) != 1 {
		t.Fatalf("results directories %s: %v", name, m)
	}
	l, err := results.Load(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestDSNFileProblemsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{"--dsn-file", filepath.Join(dir, "nope")}, "--dsn-file: open " + filepath.Join(dir, "nope") + ": no such file or directory"},
		{"empty", []string{"--dsn-file", empty}, "--dsn-file " + empty + ": the file is empty"},
		{"both", []string{"--dsn-file", empty, "--dsn", "postgres://u:S3cret@h/db"}, "--dsn-file: give the DSN once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := t.TempDir()
			var out bytes.Buffer
			args := append([]string{"sysbench", "--engine", "postgres", "--results", res}, tt.args...)
			if code := run(context.Background(), testApp(&out), args); code != exitUsage {
				t.Errorf("exit code %d, want %d:\n%s", code, exitUsage, out.String())
			}
			if !strings.Contains(out.String(), tt.want) || strings.Contains(out.String(), "S3cret") {
				t.Errorf("output does not say %q (or shows the password):\n%s", tt.want, out.String())
			}
			if written, _ := os.ReadDir(res); len(written) != 0 {
				t.Errorf("a refused run wrote %v", written)
			}
		})
	}
}
