package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
)

// TestDSNChoosesTheEngine refuses, before anything is written, a --dsn no
// engine takes and an --engine the DSN contradicts, naming both.
func TestDSNChoosesTheEngine(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--dsn", "foo://bench@db1/x"}, "--dsn foo://bench@db1/x: dbio cannot tell the engine from it: give --engine"},
		{[]string{"-e", "mariadb", "--dsn", "postgres://bench:Hunter2x@db1:5432/postgres"}, "--engine mariadb contradicts --dsn postgres://bench:***@db1:5432/postgres, which is written for postgres"},
		{[]string{"-e", "sqlite", "--dsn", "bench@tcp(db1:3306)/"}, "--engine sqlite contradicts --dsn bench@tcp(db1:3306)/, which is written for mariadb"},
		{[]string{"-e", "postgres", "--dsn", "mysql://bench@db1/"}, "--engine postgres contradicts --dsn mysql://bench@db1/, which is written for mysql"},
	}
	for _, tt := range tests {
		root := t.TempDir()
		var out bytes.Buffer
		args := append([]string{"sysbench", "--results", root}, tt.args...)
		if code := run(context.Background(), testApp(&out), args); code != exitUsage {
			t.Errorf("%v: exit code %d, want %d", tt.args, code, exitUsage)
		}
		if !strings.Contains(out.String(), tt.want) {
			t.Errorf("%v: output does not say %q:\n%s", tt.args, tt.want, out.String())
		}
		if strings.Contains(out.String(), "Hunter2x") {
			t.Errorf("%v: the password is printed:\n%s", tt.args, out.String())
		}
		if entries, _ := os.ReadDir(root); len(entries) > 0 {
			t.Errorf("%v: a refused command wrote %s", tt.args, entries[0].Name())
		}
	}
}

// databaseQuery finds a database by name, on each engine.
var databaseQuery = map[string]string{
	"postgres": "SELECT datname FROM pg_database WHERE datname = $1",
	"mariadb":  "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
}

// dataDirQuery asks a server for its data directory.
var dataDirQuery = map[string]string{
	"postgres": "SHOW data_directory",
	"mariadb":  "SELECT @@datadir",
}

// resultsDir is the results directory a run's output names.
func resultsDir(t *testing.T, out string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if dir, ok := strings.CutPrefix(line, "results: "); ok {
			return strings.TrimSpace(dir)
		}
	}
	t.Fatalf("no results directory in:\n%s", out)
	return ""
}

// unmark takes dbio's marker off the database the test's server was set
// up with, which makes it one dbio did not create.
var unmark = map[string]string{
	"postgres": "COMMENT ON DATABASE dbio_server IS NULL",
	"mariadb":  "DROP TABLE dbio_server.dbio_owner",
}

// TestYourOwnServer runs dbio on a real server it did not start, reached by
// a DSN alone (the engine read from it, MySQL's URL form included): it
// says it connects and will not start or stop the server, ends naming the
// database it left there, which dbio clean --dsn lists and drops (and
// nothing else), and --drop-after drops it at the end.
func TestYourOwnServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts real servers")
	}
	for _, engineName := range []string{"postgres", "mariadb"} {
		t.Run(engineName, func(t *testing.T) {
			s := startPasswordServer(t, engineName)
			dsn, again, called := s.dsn(s.pw, false), s.dsn(s.pw, false), engineName
			if engineName == "mariadb" {
				// The form the driver alone misreads, then a plain URL.
				dsn = "mysql://bench:" + s.pw + "@tcp(127.0.0.1:" + s.port + ")/"
				again = "mariadb://bench:" + s.pw + "@127.0.0.1:" + s.port + "/"
				called = "mysql"
			}
			resultsBase := filepath.Join(t.TempDir(), "results")
			if err := os.Mkdir(resultsBase, 0o755); err != nil {
				t.Fatal(err)
			}
			dbio := func(args ...string) string {
				t.Helper()
				var out bytes.Buffer
				if code := run(context.Background(), testApp(&out), args); code != exitOK {
					t.Fatalf("dbio %s: exit code %d:\n%s", strings.Join(args, " "), code, out.String())
				}
				if strings.Contains(out.String(), s.pw) {
					t.Errorf("the password is printed:\n%s", out.String())
				}
				return out.String()
			}
			sysbench := []string{"sysbench", "--results", resultsBase, "--tables", "1", "--table-size", "100", "-u", "1", "--runtime", "1s", "--ramp-time", "0s"}

			// The server runs on this host: dbio finds its processes by
			// the port it listens on, and its data directory by asking it
			// (which PostgreSQL tells only a role allowed to read settings).
			var dataDir string
			if err := s.admin.QueryRow(dataDirQuery[engineName]).Scan(&dataDir); err != nil {
				t.Fatal(err)
			}
			if engineName == "postgres" {
				if _, err := s.admin.Exec("GRANT pg_read_all_settings TO bench"); err != nil {
					t.Fatal(err)
				}
			}
			// Long enough for the per-second samples that show the server's CPU.
			out := dbio(append(sysbench, "--dsn", dsn, "--runtime", "3s")...)
			if want := "target:  " + filepath.Clean(dataDir) + " (data, your server's): "; !strings.Contains(out, want) {
				t.Errorf("the run does not say %q:\n%s", want, out)
			}
			l, err := results.Load(resultsDir(t, out))
			if err != nil {
				t.Fatal(err)
			}
			if tel := l.Steps[0].Telemetry; tel == nil || tel.ServerUnknown || tel.Metrics["proc_server_cpu_pct"].Samples == 0 {
				t.Errorf("the step has no CPU figure of the server found on this host: %+v", tel)
			}
			if want := "connecting to " + called + " at 127.0.0.1:" + s.port + " (your server: dbio will not start or stop it)\n"; !strings.Contains(out, want) {
				t.Errorf("the run does not say %q:\n%s", want, out)
			}
			if strings.Contains(out, "size on disk unknown") {
				t.Errorf("the load's size is unknown, though the server says its database's:\n%s", out)
			}
			if strings.Contains(out, "starting ") {
				t.Errorf("the run says it starts a server:\n%s", out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "left on your server: database dbio_sysbench (") || !strings.Contains(last, "dbio clean --dsn") {
				t.Errorf("the run ends with %q, want what it left on the server and how to drop it", last)
			}

			// A database without dbio's marker is the user's, never dbio's
			// to drop: the one the test's server was set up with becomes one.
			if _, err := s.admin.Exec(unmark[engineName]); err != nil {
				t.Fatal(err)
			}
			out = dbio("clean", "--dsn", again)
			if !strings.Contains(out, "database dbio_sysbench: ") || !strings.Contains(out, "1 database (") || strings.Contains(out, "dbio_server") {
				t.Errorf("dbio clean --dsn lists:\n%s", out)
			}
			out = dbio("clean", "--dsn", again, "--yes")
			if !strings.Contains(out, "dropped 1 database (") {
				t.Errorf("dbio clean --dsn --yes says:\n%s", out)
			}
			if err := s.admin.QueryRow(databaseQuery[engineName], "dbio_server").Scan(new(string)); err != nil {
				t.Errorf("the user's own database is gone: %v", err)
			}
			if out = dbio("clean", "--dsn", again); !strings.Contains(out, "no database of dbio's to drop") {
				t.Errorf("after dropping, dbio clean --dsn lists:\n%s", out)
			}

			out = dbio(append(sysbench, "--dsn", again, "--drop-after")...)
			if !strings.Contains(out, "dropped database dbio_sysbench (") {
				t.Errorf("the run with --drop-after does not say it dropped its database:\n%s", out)
			}
			if out = dbio("clean", "--dsn", again); !strings.Contains(out, "no database of dbio's to drop") {
				t.Errorf("after --drop-after, dbio clean --dsn lists:\n%s", out)
			}
		})
	}
}
