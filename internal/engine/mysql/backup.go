package mysql

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/execx"
)

// errPhysicalExternal is why an external server has no physical backup.
var errPhysicalExternal = errors.New("a physical backup and restore (mariadb-backup) needs the server's own files, which dbio has only for a server it runs itself: with --dsn use the logical backup (mariadb-dump), or drop --dsn to let dbio run the server")

// Tool names recorded in BackupResult.
const (
	physicalTool = "mariadb-backup --backup then --prepare"
	logicalTool  = "mariadb-dump --single-transaction"
)

// backupHint is the fix offered when mariadb-backup is missing.
const backupHint = "install it with `apt-get install -y mariadb-backup`"

// program finds the first of names in PATH or the engine's directories.
func (in *Instance) program(hint string, names ...string) (string, error) {
	var errs []string
	for _, n := range names {
		p, err := server.Find(in.Runner, n, in.BinDirs...)
		if err == nil {
			return p, nil
		}
		errs = append(errs, err.Error())
	}
	return "", fmt.Errorf("%s: %s", strings.Join(errs, "; "), hint)
}

var _ engine.Backuper = (*Instance)(nil)

// Backup implements engine.Backuper: mariadb-backup copies the running
// instance's files into dst (a new or empty directory) while the server keeps
// working, then prepares the copy (applies the redo written meanwhile), so
// that dst is ready to be restored. Both run as the server's user, who can
// read the instance's files and owns the copy.
func (in *Instance) Backup(ctx context.Context, dst string) (engine.BackupResult, error) {
	m := in.managed
	if m == nil {
		return engine.BackupResult{}, errPhysicalExternal
	}
	if m.bins.flavour != mariadb {
		return engine.BackupResult{}, errors.New("a physical backup of a MySQL server needs Percona XtraBackup, which dbio does not run: use the logical backup (mysqldump) with it, or MariaDB")
	}
	tool, err := in.program(backupHint, "mariadb-backup", "mariabackup")
	if err != nil {
		return engine.BackupResult{}, err
	}
	// The server's options tell mariadb-backup where the files are; the
	// client group gives it dbio's account without a password on its command line.
	cnf, err := renderCnf(m.settings)
	if err != nil {
		return engine.BackupResult{}, err
	}
	opts, err := writeOptions(m.Layout.Run, m.User, cnf+clientGroup(in.admin))
	if err != nil {
		return engine.BackupResult{}, err
	}
	defer os.Remove(opts)
	var steps []server.BackupStep
	for _, step := range []string{"--backup", "--prepare"} {
		steps = append(steps, server.BackupStep{What: filepath.Base(tool) + " " + step, Explain: backupToolError,
			Cmd: execx.Cmd{Name: tool, Args: []string{"--defaults-file=" + opts, step, "--target-dir=" + dst}}})
	}
	return in.RunBackup(ctx, physicalTool, dst, m.User, steps)
}

// Restore implements engine.Backuper: it stops the server, sets its files
// aside inside dbio's own directory, has mariadb-backup --copy-back put the
// prepared backup in src into the emptied data (and redo) directories, gives
// the files to the server's user and starts the server on them. The set-aside
// files are removed once the server is up; if the restore fails they are put
// back and the server restarted on them. Connections in use fail; stop the
// workload first.
func (in *Instance) Restore(ctx context.Context, src string) error {
	m := in.managed
	if m == nil {
		return errPhysicalExternal
	}
	if err := checkPrepared(src); err != nil {
		return err
	}
	tool, err := in.program(backupHint, "mariadb-backup", "mariabackup")
	if err != nil {
		return err
	}
	l := m.Layout
	dirs := []string{l.Data}
	if l.Log != "" {
		dirs = append(dirs, l.Log)
	}
	return in.RunRestore(ctx, &server.Restore{
		Src: src,
		Replace: func(ctx context.Context, r *server.Restore) error {
			for _, d := range dirs {
				if err := r.SetAside(d, filepath.Dir(d)); err != nil {
					return err
				}
				if err := m.User.MakeDir(d, 0o700); err != nil {
					return err
				}
			}
			// As dbio, which may read a backup whatever its owner; the files are
			// given to the server's user afterwards.
			cmd := execx.Cmd{Name: tool, Args: []string{"--defaults-file=" + m.cnf, "--copy-back", "--target-dir=" + src}}
			if _, err := in.Runner.Run(ctx, in.Tool(cmd)); err != nil {
				return fmt.Errorf("%s --copy-back: %w", filepath.Base(tool), backupToolError(err))
			}
			for _, d := range dirs {
				if err := server.OwnTree(d, m.User); err != nil {
					return err
				}
			}
			return nil
		},
		Launch: m.launch,
	})
}

// backupToolError keeps what mariadb-backup said about its failure, which
// otherwise drowns in the progress it reports on every run.
func backupToolError(err error) error {
	var ee *execx.ExitError
	if !errors.As(err, &ee) {
		return err
	}
	var picked []string
	for _, line := range strings.Split(ee.Stderr, "\n") {
		l := strings.ToLower(line)
		if strings.Contains(l, "error") || strings.Contains(l, "can't") || strings.Contains(l, "cannot") || strings.Contains(l, "failed") {
			picked = append(picked, strings.TrimSpace(line))
		}
	}
	if len(picked) == 0 {
		return err
	}
	return fmt.Errorf("%s: %w:\n%s", ee.Cmd, ee.Err, strings.Join(picked, "\n"))
}

// checkPrepared verifies that src holds a mariadb-backup backup that was
// prepared, which is what a server can start on.
func checkPrepared(src string) error {
	var f *os.File
	var err error
	for _, name := range []string{"mariadb_backup_checkpoints", "xtrabackup_checkpoints"} {
		if f, err = os.Open(filepath.Join(src, name)); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("restore: %s is not a mariadb-backup backup (it has no checkpoints file): give the directory a backup wrote", src)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok && strings.TrimSpace(k) == "backup_type" {
			// mariadb-backup writes log-applied after --prepare (older
			// versions, like XtraBackup, full-prepared).
			if t := strings.TrimSpace(v); t != "log-applied" && t != "full-prepared" {
				return fmt.Errorf("restore: the backup in %s is %s, not prepared: run `mariadb-backup --prepare --target-dir=%s` first", src, t, src)
			}
			return nil
		}
	}
	return fmt.Errorf("restore: the checkpoints file in %s names no backup type: give the directory a backup wrote", src)
}

var _ engine.LogicalBackuper = (*Instance)(nil)

// BackupLogical implements engine.LogicalBackuper: mariadb-dump writes the
// database dbio owns (tables, routines, triggers) as SQL to
// dst/<database>.sql, from one consistent snapshot while the workload goes
// on. It works on external servers too.
func (in *Instance) BackupLogical(ctx context.Context, dst string) (engine.BackupResult, error) {
	tool, err := in.program("install it with `apt-get install -y mariadb-client`", "mariadb-dump", "mysqldump")
	if err != nil {
		return engine.BackupResult{}, err
	}
	self := server.User{Self: true}
	created, err := server.PrepareDestination(dst, self)
	if err != nil {
		return engine.BackupResult{}, err
	}
	opts, env, err := in.clientOptions()
	if err != nil {
		return engine.BackupResult{}, err
	}
	defer os.Remove(opts)
	file := filepath.Join(dst, in.Facts.Database+".sql")
	cmd := execx.Cmd{Name: tool, Args: []string{"--defaults-file=" + opts, "--single-transaction", "--quick",
		"--routines", "--triggers", "--hex-blob", "--result-file=" + file, in.Facts.Database}, Env: env}
	if _, err := in.Runner.Run(ctx, in.Tool(cmd)); err != nil {
		if created {
			os.RemoveAll(dst)
		} else {
			os.Remove(file)
		}
		return engine.BackupResult{}, server.ToolError(filepath.Base(tool)+" to "+file, self, dst, err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		return engine.BackupResult{}, err
	}
	return engine.BackupResult{Tool: logicalTool, Path: file, Bytes: fi.Size()}, nil
}

// RestoreLogical implements engine.LogicalBackuper: the database dbio owns
// is dropped and created again (only if dbio created it), then the client
// runs the dump in src (a file BackupLogical wrote, or its directory) into it.
// Stop the workload first.
func (in *Instance) RestoreLogical(ctx context.Context, src string) error {
	file, err := server.DumpFile(src, in.Facts.Database+".sql")
	if err != nil {
		return err
	}
	tool, err := in.program("install it with `apt-get install -y mariadb-client`", "mariadb", "mysql")
	if err != nil {
		return err
	}
	return in.Exclusive(func() error {
		where := "the managed server"
		if in.managed == nil {
			where = "server " + in.admin.Addr
		}
		admin, err := openAdmin(in.admin)
		if err != nil {
			return err
		}
		err = ensureDatabase(ctx, admin, in.Facts.Database, true, where)
		admin.Close()
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		opts, env, err := in.clientOptions()
		if err != nil {
			return err
		}
		defer os.Remove(opts)
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		defer f.Close()
		cmd := execx.Cmd{Name: tool, Args: []string{"--defaults-file=" + opts, "--binary-mode", "--database=" + in.Facts.Database}, Stdin: f, Env: env}
		if _, err := in.Runner.Run(ctx, in.Tool(cmd)); err != nil {
			return fmt.Errorf("restore %s into database %q: %w", file, in.Facts.Database, err)
		}
		return nil
	})
}

// clientOptions writes an option file with dbio's account for the client
// programs, private to dbio (the caller removes it), and returns the
// environment that gives them the password: in MYSQL_PWD it is on no
// command line and, unlike in the file, in nothing a killed dbio leaves
// behind (the file of an external server sits in the system's temporary
// directory).
func (in *Instance) clientOptions() (string, []string, error) {
	dir := ""
	if in.managed != nil {
		dir = in.managed.Layout.Run
	}
	cfg := in.admin.Clone()
	var env []string
	if cfg.Passwd != "" {
		env = []string{PasswordEnv + "=" + cfg.Passwd}
		cfg.Passwd = ""
	}
	path, err := writeOptions(dir, server.User{Self: true}, clientGroup(cfg))
	return path, env, err
}

// writeOptions writes an option file readable by u alone, in dir (the
// system's temporary directory when empty).
func writeOptions(dir string, u server.User, content string) (string, error) {
	f, err := os.CreateTemp(dir, "dbio-options-*.cnf")
	if err != nil {
		return "", fmt.Errorf("option file for the client programs: %w", err)
	}
	_, err = f.WriteString(content)
	if err = errors.Join(err, f.Close(), u.Own(f.Name())); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("option file for the client programs: %w", err)
	}
	return f.Name(), nil
}

// clientGroup is the [client] option group that reaches the server the way
// cfg does, with its account and TLS choice.
func clientGroup(cfg *mysqldrv.Config) string {
	var b strings.Builder
	b.WriteString("\n[client]\n")
	fmt.Fprintf(&b, "user = %s\n", optionValue(cfg.User))
	if cfg.Passwd != "" {
		fmt.Fprintf(&b, "password = %s\n", optionValue(cfg.Passwd))
	}
	if cfg.Net == "unix" {
		fmt.Fprintf(&b, "socket = %s\nprotocol = SOCKET\n", optionValue(cfg.Addr))
	} else {
		host, port, err := net.SplitHostPort(cfg.Addr)
		if err != nil {
			host, port = cfg.Addr, "3306"
		}
		fmt.Fprintf(&b, "host = %s\nport = %s\nprotocol = TCP\n", optionValue(host), port)
	}
	switch cfg.TLSConfig {
	case "true":
		b.WriteString("ssl\nssl-verify-server-cert\n")
	case "skip-verify", "preferred":
		b.WriteString("ssl\n")
	}
	return b.String()
}

// optionValue quotes a value for an option file, where a backslash escapes
// the next character inside double quotes.
func optionValue(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
