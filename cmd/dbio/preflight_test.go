package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"dbio/internal/testenv"
)

// mountTmpfs mounts a tmpfs with opts at dir for the test (root only: make
// test runs as root; elsewhere the case is skipped, except in CI).
func mountTmpfs(t *testing.T, dir, opts string) {
	t.Helper()
	testenv.Require(t, os.Geteuid() == 0, "root (the case mounts a tmpfs)", "run the tests as root")
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs -o %s on %s: %v: %s", opts, dir, err, out)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// tree lists every path below root with its type and size, to show that a
// refused command wrote nothing.
func tree(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, _ := d.Info()
		size := int64(0)
		if info != nil && d.Type().IsRegular() {
			size = info.Size()
		}
		lines = append(lines, fmt.Sprintf("%s %s %d", p, d.Type(), size))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

const preflightSuite = `name = "pf"
[targets.data]
path = "%DATA%"
[engines.e]
engine = "%ENGINE%"
%ENGINE_EXTRA%
[workloads.w]
kind = "tpcc"
warehouses = 1
%USERS%
[[runs]]
workload = "w"
engine = "e"
data = "data"
`

// TestPreflightRefusesBeforeWriting runs the CLI on each kind of bad input:
// exit code 2, every problem named at once, and nothing written: no results
// directory, no file in the target.
func TestPreflightRefusesBeforeWriting(t *testing.T) {
	type env struct{ root, target, results string }
	suiteFile := func(e env, engine, extra, users string) string {
		text := strings.NewReplacer("%DATA%", e.target, "%ENGINE%", engine, "%ENGINE_EXTRA%", extra, "%USERS%", users).Replace(preflightSuite)
		file := filepath.Join(e.root, "suite.toml")
		os.WriteFile(file, []byte(text), 0o644)
		return file
	}
	tests := []struct {
		name    string
		args    func(t *testing.T, e env) []string
		want    []string
		notWant []string
	}{
		{"missing target", func(t *testing.T, e env) []string {
			return []string{"tpcc", "--target", filepath.Join(e.root, "typo"), "--results", e.results}
		}, []string{"typo does not exist: create it (mkdir -p ", "or pass --create-target"}, nil},
		{"target is a file", func(t *testing.T, e env) []string {
			file := filepath.Join(e.root, "file")
			os.WriteFile(file, []byte("x"), 0o644)
			return []string{"sysbench", "--target", file, "--results", e.results}
		}, []string{"file is not a directory"}, nil},
		{"read-only target", func(t *testing.T, e env) []string {
			mountTmpfs(t, e.target, "ro,size=1m")
			return []string{"as3ap", "--target", e.target, "--results", e.results}
		}, []string{"is on a read-only filesystem"}, nil},
		{"log target missing and users bad, together", func(t *testing.T, e env) []string {
			return []string{"tpcc", "--engine", "postgres", "--target", e.target, "--log-target", filepath.Join(e.root, "nowal"), "--users", "0", "--warehouses", "0", "--results", e.results}
		}, []string{"nowal does not exist", "--users", "--warehouses 0"}, nil},
		{"no space on the target", func(t *testing.T, e env) []string {
			return []string{"tpcc", "--target", e.target, "--warehouses", "90000", "--results", e.results}
		}, []string{"tpcc at this scale", "need about", "free some space"}, nil},
		{"no room for MariaDB's redo log beside the data", func(t *testing.T, e env) []string {
			// 768 MiB hold one warehouse's data but not the 1 GB redo log
			// MariaDB creates at its first start.
			mountTmpfs(t, e.target, "size=768m")
			return []string{"tpcc", "--engine", "mariadb", "--target", e.target, "--warehouses", "1", "--results", e.results}
		}, []string{"has 768.0 MiB free but tpcc at this scale (225.0 MiB) and MariaDB's redo log (innodb_log_file_size, as dbio sets it) (1.0 GiB) and InnoDB's system and temporary tablespaces and the system schemas (32.0 MiB) and ibdata1's growth with the undo logs (one innodb_autoextend_increment step, 64M by default) (64.0 MiB) together need about 1.3 GiB"}, nil},
		{"suite: no room for MariaDB's redo log", func(t *testing.T, e env) []string {
			mountTmpfs(t, e.target, "size=768m")
			return []string{"suite", suiteFile(e, "mariadb", "", ""), "--results", e.results}
		}, []string{"run ", "(tpcc at this scale) (225.0 MiB) and MariaDB's redo log", "together need about 1.3 GiB"}, nil},
		{"no space for the results", func(t *testing.T, e env) []string {
			mountTmpfs(t, e.results, "size=1m")
			return []string{"tpcc", "--target", e.target, "--results", e.results}
		}, []string{"target " + "", "the results needs about", "has 1.0 MiB free"}, nil},
		{"--limit on tmpfs", func(t *testing.T, e env) []string {
			mountTmpfs(t, e.target, "size=64m")
			return []string{"tpcc", "--target", e.target, "--limit", "sata-ssd", "--results", e.results}
		}, []string{"--limit: target " + "", "is on tmpfs, which has no block device to throttle"}, nil},
		{"--dsn with --buffer-pool, --setting and --limit", func(t *testing.T, e env) []string {
			return []string{"tpcc", "--engine", "postgres", "--dsn", "postgres://u:S3cret@127.0.0.1:5432/db", "--buffer-pool", "1GB", "--setting", "work_mem=4MB", "--limit", "sata-ssd", "--results", e.results}
		}, []string{"--buffer-pool: applies to a server dbio runs", "--setting: applies to a server dbio runs", "--limit: applies to a server dbio runs on a target, not to --dsn: dbio cannot throttle the storage of a server it did not start"}, []string{"S3cret"}},
		{"--server-memory below what the server needs", func(t *testing.T, e env) []string {
			return []string{"tpcc", "--engine", "postgres", "--target", e.target, "--buffer-pool", "256MB", "--server-memory", "128MB", "--users", "1,16", "--results", e.results}
		}, []string{"--server-memory 128.0 MiB: postgres cannot start and serve 18 connections in it", "256.0 MiB of shared_buffers +", "18 connections × 4.0 MiB", "raise the cap"}, nil},
		{"--server-memory on an engine inside dbio", func(t *testing.T, e env) []string {
			return []string{"tpcc", "--engine", "sqlite", "--target", e.target, "--server-memory", "1GB", "--results", e.results}
		}, []string{"--server-memory 1.0 GiB: sqlite runs inside dbio, so there is no server to cap"}, nil},
		{"--server-memory with --dsn", func(t *testing.T, e env) []string {
			return []string{"tpcc", "--engine", "postgres", "--dsn", "postgres://u:S3cret@127.0.0.1:5432/db", "--server-memory", "1GB", "--results", e.results}
		}, []string{"--server-memory: applies to a server dbio runs on a target, not to --dsn"}, []string{"S3cret"}},
		{"unparseable postgres DSN", func(t *testing.T, e env) []string {
			return []string{"tpcc", "--engine", "postgres", "--dsn", "postgres://u:S3cret@127.0.0.1:port/db", "--results", e.results}
		}, []string{"--dsn postgres://u:***@127.0.0.1:port/db does not parse"}, []string{"S3cret"}},
		{"unparseable mariadb DSN", func(t *testing.T, e env) []string {
			return []string{"sysbench", "--engine", "mariadb", "--dsn", "root:S3cret@tcp(127.0.0.1:3306", "--results", e.results}
		}, []string{"--dsn root:***@tcp(127.0.0.1:3306 does not parse"}, []string{"S3cret"}},
		{"sqlite with --dsn", func(t *testing.T, e env) []string {
			return []string{"tpcc", "--engine", "sqlite", "--dsn", "file:x.db", "--results", e.results}
		}, []string{"--dsn: sqlite has no external mode"}, nil},
		{"--transport against the DSN", func(t *testing.T, e env) []string {
			return []string{"tpcc", "--engine", "postgres", "--dsn", "postgres://u:S3cret@127.0.0.1/db", "--transport", "socket", "--results", e.results}
		}, []string{"--transport socket does not match --dsn postgres://u:***@127.0.0.1/db, which connects over tcp"}, []string{"S3cret"}},
		{"a link in dbio's place", func(t *testing.T, e env) []string {
			outside := filepath.Join(e.root, "outside")
			os.Mkdir(outside, 0o755)
			os.Symlink(outside, filepath.Join(e.target, "dbio"))
			return []string{"quick", "--target", e.target, "--results", e.results}
		}, []string{"/dbio is a symbolic link, which dbio did not create"}, nil},
		{"disk: size 0, runtime 0s, unknown ioengine, missing target", func(t *testing.T, e env) []string {
			return []string{"disk", "--target", filepath.Join(e.root, "typo"), "--size", "0", "--runtime", "0s", "--engine", "spdk", "--results", e.results}
		}, []string{"--size 0: give the working file's size", "--runtime 0s: give the measured time", `--ioengine "spdk": not an fio ioengine`, "typo does not exist"}, nil},
		{"disk: no room for the working file", func(t *testing.T, e env) []string {
			return []string{"disk", "--target", e.target, "--size", "1000T", "--runtime", "1s", "--results", e.results}
		}, []string{"the fio working file", "need about"}, nil},
		{"suite: users = []", func(t *testing.T, e env) []string {
			return []string{"suite", suiteFile(e, "sqlite", "", "users = []"), "--results", e.results}
		}, []string{"workloads.w.users: is empty"}, nil},
		{"suite: target is a file", func(t *testing.T, e env) []string {
			file := filepath.Join(e.root, "file")
			os.WriteFile(file, []byte("x"), 0o644)
			return []string{"suite", suiteFile(env{root: e.root, target: file}, "sqlite", "", ""), "--results", e.results}
		}, []string{"the suite cannot start", "file is not a directory"}, nil},
		{"suite: missing target, a DSN against its transport", func(t *testing.T, e env) []string {
			file := suiteFile(env{root: e.root, target: filepath.Join(e.root, "typo")}, "postgres", `dsn = "postgres://u:S3cret@127.0.0.1:5432/db"`+"\ntransport = \"socket\"\nbuffer_pool = \"1GB\"", "")
			return []string{"suite", file, "--results", e.results}
		}, []string{"transport \"socket\" does not match dsn postgres://u:***@127.0.0.1:5432/db, which connects over tcp", "buffer_pool: applies to a server dbio runs on a target, not to dsn: size the existing server's buffer pool in its own configuration, or drop dsn"}, []string{"S3cret"}},
		{"suite: server_memory below what the server needs", func(t *testing.T, e env) []string {
			return []string{"suite", suiteFile(e, "mariadb", "server_memory = \"128MB\"\nbuffer_pool = \"64MB\"", ""), "--results", e.results}
		}, []string{"server_memory 128.0 MiB: mariadb cannot start and serve", "64.0 MiB of buffer pool +"}, nil},
		{"suite: missing target", func(t *testing.T, e env) []string {
			return []string{"suite", suiteFile(env{root: e.root, target: filepath.Join(e.root, "typo")}, "sqlite", "", ""), "--results", e.results}
		}, []string{"the suite cannot start", "typo does not exist"}, nil},

		// Settings that would take the instance out of the target (issue 28).
		{"a setting moves MariaDB onto a stopped server's data directory", func(t *testing.T, e env) []string {
			return []string{"tpcc", "-e", "mariadb", "--transport", "tcp", "-t", e.target, "--setting", "datadir=" + stoppedInstance(t, e.root),
				"-u", "1", "--runtime", "3s", "--ramp-time", "1s", "--results", e.results}
		}, []string{"--setting datadir=" + "", "/stopped: dbio places the data directory itself, in <target>/dbio/mariadb: use --target (and --log-target for the redo log)"}, nil},
		{"MariaDB settings naming paths, programs and code", func(t *testing.T, e env) []string {
			inside := filepath.Join(e.target, "dbio")
			return []string{"tpcc", "-e", "mariadb", "-t", e.target, "--results", e.results,
				"--setting", "log_error=/var/log/dbio-test.err", "--setting", "innodb_data_home_dir=" + stoppedInstance(t, e.root),
				"--setting", "tmpdir=" + inside + "/tmp:/tmp", "--setting", "loose-socket=" + inside + "/s.sock",
				"--setting", "plugin_load_add=ha_connect.so", "--setting", "init_file=" + inside + "/init.sql",
				"--setting", "innodb_undo_directory=" + inside + "/../../undo", "--setting", "innodb_io_capacity=2000"}
		}, []string{"--setting log_error=/var/log/dbio-test.err: /var/log/dbio-test.err is outside dbio's directory on the targets: give a path inside " + "",
			"/stopped is outside dbio's directory", "tmpdir=", ":/tmp: /tmp is outside",
			"--setting loose-socket=", ": dbio places the server's socket itself",
			"--setting plugin_load_add=ha_connect.so: loads code into the server",
			"--setting init_file=", "runs statements dbio did not write",
			"--setting innodb_undo_directory=", "/undo is outside"}, []string{"innodb_io_capacity"}},
		{"PostgreSQL settings naming paths, programs and code", func(t *testing.T, e env) []string {
			return []string{"tpcc", "-e", "postgres", "-t", e.target, "--results", e.results,
				"--setting", "data_directory=" + stoppedInstance(t, e.root), "--setting", "archive_command=cp %p /tmp/%f",
				"--setting", "shared_preload_libraries=pg_stat_statements", "--setting", "log_directory=/tmp",
				"--setting", "ssl_passphrase_command=echo x", "--setting", "Log_Filename=../../x.log", "--setting", "work_mem=8MB"}
		}, []string{"--setting data_directory=", ": dbio places the data directory itself, in <target>/dbio/postgres",
			"--setting archive_command=cp %p /tmp/%f: runs a shell command as the server's user: dbio runs no program a setting names",
			"--setting shared_preload_libraries=pg_stat_statements: loads libraries into the server",
			"--setting log_directory=/tmp: /tmp is outside dbio's directory on the targets",
			"--setting ssl_passphrase_command=", ": runs a shell command as the server's user",
			"--setting Log_Filename=../../x.log: give a file name without a directory part"}, []string{"work_mem"}},
		{"a SQLite PRAGMA naming a directory elsewhere", func(t *testing.T, e env) []string {
			return []string{"tpcc", "-e", "sqlite", "-t", e.target, "--results", e.results, "--setting", "temp_store_directory=/tmp"}
		}, []string{"--setting temp_store_directory=/tmp: /tmp is outside dbio's directory on the targets"}, nil},
		{"suite: a setting that moves the data directory", func(t *testing.T, e env) []string {
			return []string{"suite", suiteFile(e, "mariadb", `settings = { datadir = "`+stoppedInstance(t, e.root)+`" }`, ""), "--results", e.results}
		}, []string{"the suite cannot start", "settings datadir=", ": dbio places the data directory itself"}, nil},

		// Control characters in paths (issue 28).
		{"a line break in --target", func(t *testing.T, e env) []string {
			return []string{"tpcc", "-e", "mariadb", "-t", e.root + "/A\ndatadir=" + e.root + "/B\n#", "--create-target", "--results", e.results}
		}, []string{`target "` + "", `/A\ndatadir=`, `\n#": the path holds a line break (U+000A) at byte `, "give a path without control characters"}, nil},
		{"an escape sequence in --results", func(t *testing.T, e env) []string {
			return []string{"tpcc", "-t", e.target, "--results", e.results + "/\x1b[2J"}
		}, []string{`results directory "`, `\x1b[2J": the path holds an escape character (U+001B)`}, nil},
		{"a line break in --name", func(t *testing.T, e env) []string {
			return []string{"tpcc", "-t", e.target, "--results", e.results, "--name", "a\u2028b"}
		}, []string{`--name "a\u2028b": holds a line break (U+2028) at byte 1`}, nil},
		{"suite: a line break in a target's path", func(t *testing.T, e env) []string {
			file := suiteFile(env{root: e.root, target: e.root + `/A\ndatadir=` + e.root + `/B\n#`}, "mariadb", "", "")
			return []string{"suite", file, "--create-target", "--results", e.results}
		}, []string{"invalid suite", "line 3: targets.data.path: ", `\ndatadir=`, "holds a line break (U+000A) at byte"}, nil},
		{"suite: a line break in a target's path on a host", func(t *testing.T, e env) []string {
			file := filepath.Join(e.root, "hosts.toml")
			os.WriteFile(file, []byte("name = \"h\"\n[[host]]\nname = \"h1\"\ndestination = \"h1\"\n[targets.data]\npath = \"h1:/srv/a\\u001b[2Jb\"\n"+
				"[engines.e]\nengine = \"sqlite\"\n[workloads.w]\nkind = \"tpcc\"\n[[runs]]\nworkload = \"w\"\nengine = \"e\"\ndata = \"data\"\n"), 0o644)
			return []string{"suite", file, "--results", e.results}
		}, []string{"invalid suite", "targets.data.path: ", `holds an escape character (U+001B)`}, nil},

		// Names and DSNs dbio cannot use (issue 28).
		{"a PostgreSQL setting that is not one", func(t *testing.T, e env) []string {
			return []string{"tpcc", "-e", "postgres", "-t", e.target, "--results", e.results, "--setting", "wrok_mem=64MB"}
		}, []string{`--setting wrok_mem=64MB: PostgreSQL 15 has no setting "wrok_mem" (did you mean work_mem?)`}, nil},
		{"a MariaDB setting that is not one", func(t *testing.T, e env) []string {
			return []string{"tpcc", "-e", "mariadb", "-t", e.target, "--results", e.results, "--setting", "innodb_bufer_pool_size=1G", "--setting", "loose-no-such-thing=1"}
		}, []string{`--setting innodb_bufer_pool_size=1G: MariaDB 10.11`, `has no setting "innodb_bufer_pool_size" (did you mean innodb-buffer-pool-size?)`,
			`has no setting "loose-no-such-thing"`}, nil},
		{"a database name with a space", func(t *testing.T, e env) []string {
			return []string{"tpcc", "-e", "postgres", "-t", e.target, "--results", e.results, "--database", "a b"}
		}, []string{`--database: database name "a b": use letters, digits and _ (not starting with a digit), at most 63 characters, e.g. dbio_tpcc`}, nil},
		{"a DSN nothing listens on", func(t *testing.T, e env) []string {
			return []string{"tpcc", "-e", "postgres", "--dsn", "postgres://u:S3cret@127.0.0.1:" + closedPort(t) + "/db?sslmode=disable", "--results", e.results}
		}, []string{"--dsn postgres://u:***@127.0.0.1:", "/db?sslmode=disable: connection refused on 127.0.0.1:", ": nothing listens there: check the DSN's host and port, and that the server runs"}, []string{"S3cret"}},
		{"suite: a DSN nothing listens on", func(t *testing.T, e env) []string {
			file := suiteFile(e, "mariadb", `dsn = "u:S3cret@tcp(127.0.0.1:`+closedPort(t)+`)/"`, "")
			return []string{"suite", file, "--results", e.results}
		}, []string{"the suite cannot start", "run ", ": dsn u:***@tcp(127.0.0.1:", ")/: connection refused on 127.0.0.1:", "nothing listens there"}, []string{"S3cret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			e := env{root: root, target: filepath.Join(root, "target"), results: filepath.Join(root, "results")}
			os.Mkdir(e.target, 0o755)
			os.Mkdir(e.results, 0o755)
			args := tt.args(t, e)
			before := tree(t, root)
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), args)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d; output:\n%s", code, exitUsage, out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output does not say %q:\n%s", w, out.String())
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out.String(), w) {
					t.Errorf("output says %q:\n%s", w, out.String())
				}
			}
			if after := tree(t, root); after != before {
				t.Errorf("a refused command wrote:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// stoppedInstance is a directory standing for a stopped server's data
// directory beside the test's target: what a setting must never move
// dbio's server onto. The test's tree shows that nothing was written in it.
func stoppedInstance(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(root, "stopped")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ib_logfile0"), []byte("another server's redo log"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// closedPort is a loopback port nothing listens on, now.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return strconv.Itoa(port)
}

// TestPreflightConnectsToTheDSN runs dbio on real servers that demand a
// password, with DSNs that cannot work: a wrong password, user, port or
// database is refused with exit code 2 before anything is written, the
// server's complaint said once, the password masked.
func TestPreflightConnectsToTheDSN(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts real servers")
	}
	for _, engineName := range []string{"postgres", "mariadb"} {
		t.Run(engineName, func(t *testing.T) {
			s := startPasswordServer(t, engineName)
			wrongPort := s
			wrongPort.port = closedPort(t)
			cases := []struct {
				name, dsn string
				want      []string
			}{
				{"wrong password", s.dsn("WrongPw9", false), []string{"check the DSN's", "password authentication failed|Access denied for user 'bench'", "on 127.0.0.1:" + s.port}},
				{"wrong port", wrongPort.dsn(s.pw, false), []string{"connection refused on 127.0.0.1:" + wrongPort.port + ": nothing listens there: check the DSN's host and port"}},
			}
			if engineName == "postgres" {
				cases = append(cases,
					struct {
						name, dsn string
						want      []string
					}{"wrong database", strings.Replace(s.dsn(s.pw, false), "/postgres?", "/nosuchdb?", 1), []string{`database "nosuchdb" does not exist on 127.0.0.1:` + s.port + ": check the DSN's database"}},
					struct {
						name, dsn string
						want      []string
					}{"wrong user", strings.Replace(s.dsn(s.pw, false), "bench:", "nobody:", 1), []string{`password authentication failed for user "nobody" on 127.0.0.1:` + s.port + ": check the DSN's password, or PGPASSWORD"}})
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					root := t.TempDir()
					results := filepath.Join(root, "results")
					os.Mkdir(results, 0o755)
					before := tree(t, root)
					var out bytes.Buffer
					code := run(context.Background(), testApp(&out), []string{"sysbench", "-e", engineName, "--dsn", c.dsn, "--results", results,
						"--tables", "1", "--table-size", "100", "-u", "1", "--runtime", "1s", "--ramp-time", "0s"})
					if code != exitUsage {
						t.Errorf("exit code %d, want %d:\n%s", code, exitUsage, out.String())
					}
					for _, w := range c.want {
						found := false
						for _, alt := range strings.Split(w, "|") {
							if n := strings.Count(out.String(), alt); n > 1 {
								t.Errorf("%q is said %d times, want once:\n%s", alt, n, out.String())
							} else if n == 1 {
								found = true
							}
						}
						if !found {
							t.Errorf("output does not say %q:\n%s", w, out.String())
						}
					}
					if strings.Contains(out.String(), s.pw) || strings.Contains(out.String(), "WrongPw9") {
						t.Errorf("a password is printed:\n%s", out.String())
					}
					if after := tree(t, root); after != before {
						t.Errorf("a refused command wrote:\n%s", after)
					}
				})
			}
		})
	}
}
