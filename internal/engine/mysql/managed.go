package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/execx"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/units"
)

const (
	// account is the server account dbio creates and connects as.
	account    = "dbio"
	socketName = "mysqld.sock"
	pidName    = "mysqld.pid"
	// initFile holds this start's account password; the server runs it before
	// accepting connections and dbio removes it once the server is up.
	initFile = "init.sql"
	redoFile = "ib_logfile0"
)

func (e *Engine) startManaged(ctx context.Context, p engine.Placement, o engine.Options) (_ engine.Instance, err error) {
	bins, err := e.findBinaries(ctx)
	if err != nil {
		return nil, err
	}
	prev := server.Previous{Dir: filepath.Join(p.Data.Dir, string(bins.flavour)), Name: string(bins.flavour)}
	prev.PidFile = filepath.Join(prev.Dir, "run", pidName)
	begun, err := e.BeginManaged(ctx, o, server.Begin{Name: string(bins.flavour), Previous: prev, Shutdown: shutdown,
		Users: []string{"mysql", "nobody"}, Claim: func() (server.Layout, error) { return prepareLayout(p, bins.flavour, o.Fresh) }, SocketName: socketName})
	if err != nil {
		return nil, err
	}
	defer begun.RemoveOnFailure(&err)
	l, user := begun.Layout, begun.User
	// The pid file and the init file are in Run even when the socket is not.
	if err := user.MakeDir(l.Run, 0o700); err != nil {
		return nil, err
	}
	at := places{data: l.Data, redo: l.Log, socket: filepath.Join(begun.SocketDir, socketName), pidFile: filepath.Join(l.Run, pidName)}
	cnf := filepath.Join(l.Base, "my.cnf")

	initialized := server.Created(l.Base)
	if initialized {
		if err := checkExisting(l); err != nil {
			return nil, err
		}
	}

	m := &managedServer{Managed: begun, bins: bins, at: at, cnf: cnf, password: server.RandomPassword()}
	proc, err := server.LaunchOnFreePort(e.FreePort, func(port int) (*server.Process, error) {
		m.at.port = port
		base := append(benchmarkSettings(bins.flavour, m.at, server.MaxConnections(o.MaxConns), o.BufferPool), fileWaitSettings(bins.flavour)...)
		if o.Preallocate > 0 {
			base = append(base, preallocateSetting)
		}
		var err error
		if m.settings, err = settingNames.Apply(base, o.Settings, server.ConfinementOf(p)); err != nil {
			return nil, err
		}
		if err := m.writeCnf(); err != nil {
			return nil, err
		}
		if !initialized {
			// The installer's bootstrap server has been seen to abort once on a
			// busy machine and succeed when run again; install starts from
			// clean directories, so one more attempt is safe.
			err := e.install(ctx, bins, user, l, cnf)
			if err != nil && ctx.Err() == nil {
				err = e.install(ctx, bins, user, l, cnf)
			}
			if err != nil {
				return nil, err
			}
			initialized = true
		}
		return m.launch(ctx)
	})
	if err != nil {
		return nil, err
	}
	defer shutdown.StopOnFailure(ctx, &err, proc)

	admin := m.admin()
	database := server.Database(o)
	adminDB, err := openAdmin(admin)
	if err != nil {
		return nil, err
	}
	dataDir, err := checkDataDir(ctx, adminDB, l.Data)
	if err == nil {
		err = ensureDatabase(ctx, adminDB, database, false, "the managed server")
	}
	adminDB.Close()
	if err != nil {
		return nil, err
	}
	transport := server.Transport(o)
	cfg := admin
	if transport == "tcp" {
		cfg = admin.Clone()
		cfg.Net, cfg.Addr = "tcp", "127.0.0.1:"+strconv.Itoa(m.at.port)
	}
	in, err := e.open(ctx, workloadConfig(cfg, database), o.MaxConns)
	if err != nil {
		return nil, err
	}
	in.managed, in.admin = m, admin
	m.Supervise(&in.Instance, proc)
	durability, _ := durabilityNote(ctx, in.StatsDB()) // a server that does not say is recorded without it
	redoDir := l.Log
	if redoDir == "" {
		redoDir = l.Data
	}
	version := in.Facts.Version
	in.Facts = results.EngineInfo{
		Engine:    string(bins.flavour),
		Version:   version,
		Managed:   true,
		Transport: transport,
		DataDir:   dataDir,
		LogDir:    redoDir,
		Database:  database,
		Settings:  server.SettingsMap(m.settings),
		Notes:     m.Notes(durability),
	}
	in.Facts.Settings = server.RecordDefault(ctx, in.StatsDB(), in.Facts.Settings, "innodb_buffer_pool_size", "SELECT @@innodb_buffer_pool_size", bytesText)
	in.startDBTime(ctx, o)
	return in, nil
}

// checkDataDir asks the running server for its data directory, and
// refuses one other than placed, where dbio put the instance.
func checkDataDir(ctx context.Context, db *sql.DB, placed string) (string, error) {
	var dir string
	if err := db.QueryRowContext(ctx, "SELECT @@datadir").Scan(&dir); err != nil {
		return "", fmt.Errorf("ask the server for its data directory: %w", err)
	}
	dir = filepath.Clean(dir) // the server ends it with a slash
	return dir, server.SameDataDir(dir, placed)
}

// bytesText writes a size in bytes as the server reports it ("134217728")
// in the units a reader expects ("128.0 MiB"); other text is kept.
func bytesText(v string) string {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return v
	}
	return units.FormatBytes(n)
}

// managedServer is what it takes to start a managed instance's server, at
// first and again after a restore has replaced its files.
type managedServer struct {
	*server.Managed
	bins     binaries
	at       places
	cnf      string
	settings []server.Setting
	// password is dbio's account's; the init file sets it at every start.
	password string
}

// writeCnf writes the server's option file, readable by the server's user;
// it holds no secret.
func (m *managedServer) writeCnf() error {
	cnf, err := renderCnf(m.settings)
	if err != nil {
		return err
	}
	return target.WriteFile(m.cnf, []byte(cnf), 0o644)
}

// launch starts the server with dbio's account (re)created by the init file
// and waits until it accepts connections; a server that does not come up is
// stopped again.
func (m *managedServer) launch(ctx context.Context) (*server.Process, error) {
	if err := m.writeCnf(); err != nil {
		return nil, err
	}
	init := filepath.Join(m.Layout.Run, initFile)
	if err := m.User.WritePrivate(init, accountSQL(m.password)); err != nil {
		return nil, err
	}
	defer os.Remove(init)
	admin := m.admin()
	cmd := execx.Cmd{Name: m.bins.server, Args: []string{"--defaults-file=" + m.cnf, "--init-file=" + init}}
	return m.Launch(ctx, cmd, func(ctx context.Context) error { return ping(ctx, admin) })
}

// admin reaches the server over its socket, with no database selected.
func (m *managedServer) admin() *mysqldrv.Config { return adminConfig(m.at, m.password) }

// prepareLayout claims dbio's directories for the instance on the placement,
// removing them first (and only them) when a fresh instance is asked for,
// unless a server still runs on them. The installed server's flavour names
// the directories.
func prepareLayout(p engine.Placement, f flavour, fresh bool) (server.Layout, error) {
	sub := string(f)
	if pid := target.RunningPID(filepath.Join(p.Data.Dir, sub, "run", pidName)); pid != 0 {
		return server.Layout{}, fmt.Errorf("a %s server (pid %d) is already running on %s, probably started by another dbio: wait for it to finish, stop it with `kill %d`, or use another target",
			f, pid, filepath.Join(p.Data.Dir, sub), pid)
	}
	return server.Dirs{Data: sub, Log: sub + "-redo", LogDir: "redo", LogWhat: "redo log"}.Claim(p, fresh)
}

// checkExisting refuses to start an instance whose redo log is elsewhere
// than this run asks.
func checkExisting(l server.Layout) error {
	inData := exists(filepath.Join(l.Data, redoFile))
	switch {
	case l.Log == "" && !inData:
		return fmt.Errorf("the instance in %s keeps its redo log on another target, but no log target was given: pass the same --log-target, or --fresh to re-create the instance", l.Data)
	case l.Log != "" && !exists(filepath.Join(l.Log, redoFile)):
		return fmt.Errorf("the instance in %s does not keep its redo log on the log target %s: rerun with --fresh to re-create it there", l.Data, l.Log)
	}
	return nil
}

// install creates the instance. What an interrupted earlier attempt left in
// dbio's own directories is removed first.
func (e *Engine) install(ctx context.Context, bins binaries, user server.User, l server.Layout, cnf string) error {
	if err := l.Recreate(user); err != nil {
		return err
	}
	cmd := execx.Cmd{Name: bins.install, Args: []string{"--defaults-file=" + cnf, "--skip-test-db", "--auth-root-authentication-method=socket"}}
	if bins.flavour == mysql {
		// MySQL's server creates the instance itself; the account dbio uses is
		// created at every start by the init file, so root is left without a
		// password but reachable only through the private socket.
		cmd = execx.Cmd{Name: bins.server, Args: []string{"--defaults-file=" + cnf, "--initialize-insecure"}}
	}
	user.Apply(&cmd)
	if _, err := e.Runner.Run(ctx, cmd); err != nil {
		var ee *execx.ExitError
		if errors.As(err, &ee) {
			if lines := errorLines(ee.Stderr); lines != "" {
				return fmt.Errorf("create the %s instance in %s: %s failed:\n%s", bins.flavour, l.Data, filepath.Base(cmd.Name), lines)
			}
		}
		return fmt.Errorf("create the %s instance in %s: %w", bins.flavour, l.Data, err)
	}
	return server.MarkCreated(l.Base)
}

// errorLines picks the server's own messages (errors, warnings, InnoDB's
// reports that lead to them) out of the installer's output, which otherwise
// buries them under generic advice; the last dozen are enough to see why.
func errorLines(out string) string {
	var picked []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "[ERROR]") || strings.Contains(line, "[Warning]") || strings.Contains(line, "InnoDB:") {
			picked = append(picked, strings.TrimSpace(line))
		}
	}
	if len(picked) > 12 {
		picked = picked[len(picked)-12:]
	}
	return strings.Join(picked, "\n")
}

// accountSQL creates dbio's account for socket and loopback connections, or
// gives it this start's password.
func accountSQL(password string) string {
	var s string
	for _, host := range []string{"localhost", "127.0.0.1"} {
		s += fmt.Sprintf("CREATE USER IF NOT EXISTS '%s'@'%s' IDENTIFIED BY '%s';\n", account, host, password)
		s += fmt.Sprintf("ALTER USER '%s'@'%s' IDENTIFIED BY '%s';\n", account, host, password)
		s += fmt.Sprintf("GRANT ALL PRIVILEGES ON *.* TO '%s'@'%s' WITH GRANT OPTION;\n", account, host)
	}
	return s
}

// adminConfig reaches the managed server over its socket, with no database selected.
func adminConfig(at places, password string) *mysqldrv.Config {
	cfg := mysqldrv.NewConfig()
	cfg.User, cfg.Passwd = account, password
	cfg.Net, cfg.Addr = "unix", at.socket
	cfg.Logger = quietLogger{}
	return cfg
}

func openAdmin(cfg *mysqldrv.Config) (*sql.DB, error) {
	connector, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	return db, nil
}

func ping(ctx context.Context, cfg *mysqldrv.Config) error {
	db, err := openAdmin(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(ctx)
}

// exists says whether there is a file at path.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
