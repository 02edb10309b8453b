package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/jackc/pgx/v5"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/execx"
	"dbio/internal/results"
	"dbio/internal/target"
)

const (
	// dataSub and walSub are dbio's subdirectories on the data and log targets.
	dataSub = "postgres"
	walSub  = "postgres-wal"
	// superuser is the role initdb creates; dbio connects as it.
	superuser = "dbio"
	// socketName is the longest name PostgreSQL gives its socket.
	socketName = ".s.PGSQL.65535"
)

// dirs are dbio's directories for PostgreSQL on the targets.
var dirs = server.Dirs{Data: dataSub, Log: walSub, LogDir: "pg_wal", LogWhat: "WAL"}

func (e *Engine) startManaged(ctx context.Context, p engine.Placement, o engine.Options) (_ engine.Instance, err error) {
	bins, err := e.findBinaries(ctx)
	if err != nil {
		return nil, err
	}
	prev := server.Previous{Dir: filepath.Join(p.Data.Dir, dataSub), Name: "PostgreSQL"}
	prev.PidFile = filepath.Join(prev.Dir, "data", "postmaster.pid")
	begun, err := e.BeginManaged(ctx, o, server.Begin{Name: "postgres", Previous: prev, Shutdown: shutdown,
		Users: []string{"postgres", "nobody"}, Claim: func() (server.Layout, error) { return prepareLayout(p, o.Fresh) }, SocketName: socketName})
	if err != nil {
		return nil, err
	}
	defer begun.RemoveOnFailure(&err)
	l := begun.Layout
	if !server.Created(l.Base) {
		if err := e.initdb(ctx, bins, begun.User, l); err != nil {
			return nil, err
		}
	} else if err := checkExisting(l, bins); err != nil {
		return nil, err
	}

	m := &managedServer{Managed: begun, bins: bins, database: server.Database(o), password: server.RandomPassword()}
	proc, err := server.LaunchOnFreePort(e.FreePort, func(port int) (*server.Process, error) {
		m.port = port
		var err error
		base := append(benchmarkSettings(m.port, m.SocketDir, server.MaxConnections(o.MaxConns), o.BufferPool), ioTimingSettings(bins.major)...)
		base = append(base, capSortSetting(e, o)...)
		m.settings, err = settingNames.Apply(base, o.Settings, server.ConfinementOf(p))
		if err != nil {
			return nil, err
		}
		return m.launch(ctx)
	})
	if err != nil {
		return nil, err
	}
	defer shutdown.StopOnFailure(ctx, &err, proc)

	if err := m.setup(ctx); err != nil {
		return nil, err
	}
	transport := server.Transport(o)
	dsn := m.socketDSN(m.database)
	if transport == "tcp" {
		dsn = keywordDSN([2]string{"host", "127.0.0.1"}, [2]string{"port", strconv.Itoa(m.port)}, [2]string{"user", superuser},
			[2]string{"password", m.password}, [2]string{"dbname", m.database}, [2]string{"sslmode", "disable"},
			[2]string{"application_name", "dbio"})
	}
	in, err := e.open(ctx, dsn, o.MaxConns)
	if err != nil {
		return nil, err
	}
	in.managed = m
	if in.admin, err = pgx.ParseConfig(m.socketDSN("postgres")); err != nil {
		in.ClosePools()
		return nil, err
	}
	in.tools = toolConn{conninfo: m.socketDSN(m.database), binDir: filepath.Dir(bins.postgres)}
	m.Supervise(&in.Instance, proc)
	durability, _ := durabilityNote(ctx, in.StatsDB()) // a server that does not say is recorded without it
	walDir := l.Log
	if walDir == "" {
		walDir = filepath.Join(l.Data, "pg_wal")
	}
	in.Facts = results.EngineInfo{
		Engine:    "postgres",
		Version:   in.Facts.Version,
		Managed:   true,
		Transport: transport,
		DataDir:   m.dataDir,
		LogDir:    walDir,
		Database:  server.Database(o),
		Settings:  server.SettingsMap(initdbSettings, m.settings),
		Notes:     m.Notes(durability),
	}
	in.Facts.Settings = server.RecordDefault(ctx, in.StatsDB(), in.Facts.Settings, "shared_buffers", "SHOW shared_buffers", nil)
	if o.Preallocate > 0 {
		in.Facts.Notes = append(in.Facts.Notes, "--preallocate: PostgreSQL has no setting to reserve data files ahead; its WAL segments are always created at full size (wal_init_zero), so only the data files grow as they fill")
	}
	in.startDBTime(ctx, o)
	return in, nil
}

// prepareLayout claims dbio's directories for the instance on the placement,
// removing them first (and only them) when a fresh instance is asked for,
// unless a server still runs on them.
func prepareLayout(p engine.Placement, fresh bool) (server.Layout, error) {
	data := filepath.Join(p.Data.Dir, dataSub, "data")
	if pid := target.RunningPID(filepath.Join(data, "postmaster.pid")); pid != 0 {
		return server.Layout{}, runningError(data, pid)
	}
	return dirs.Claim(p, fresh)
}

func runningError(data string, pid int) error {
	return fmt.Errorf("a PostgreSQL server (pid %d) is already running on %s, probably started by another dbio: wait for it to finish, stop it with `kill -INT %d`, or use another target", pid, data, pid)
}

// initdb creates the instance. What an interrupted earlier initdb left in
// dbio's own directories is removed first.
func (e *Engine) initdb(ctx context.Context, bins binaries, user server.User, l server.Layout) error {
	if err := l.Recreate(user); err != nil {
		return err
	}
	// initdb insists on a superuser password when password authentication is
	// enabled; it is replaced at every start, so this one is thrown away.
	pwfile := filepath.Join(l.Base, ".initdb-password")
	if err := user.WritePrivate(pwfile, server.RandomPassword()+"\n"); err != nil {
		return err
	}
	defer os.Remove(pwfile)
	args := []string{"-D", l.Data, "-U", superuser, "--pwfile", pwfile,
		// The socket directory is private to the server's user (and root), so
		// local connections are trusted; TCP needs the password.
		"--auth-local=trust", "--auth-host=scram-sha-256",
		"--encoding=UTF8", "--locale=C"}
	if l.Log != "" {
		args = append(args, "--waldir", l.Log)
	}
	cmd := execx.Cmd{Name: bins.initdb, Args: args}
	user.Apply(&cmd)
	if _, err := e.Runner.Run(ctx, cmd); err != nil {
		return fmt.Errorf("create the PostgreSQL instance in %s: %w", l.Data, err)
	}
	f, err := target.OpenFile(filepath.Join(l.Data, "postgresql.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "\n# dbio's settings, rewritten at every start\ninclude '%s'\n", confFile)
	if err := errors.Join(err, f.Close()); err != nil {
		return err
	}
	return server.MarkCreated(l.Base)
}

// checkExisting refuses to start an instance created for another
// PostgreSQL version or with its WAL elsewhere than this run asks.
func checkExisting(l server.Layout, bins binaries) error {
	v, err := dataVersion(l.Data)
	if err != nil {
		return err
	}
	if v != bins.major {
		return fmt.Errorf("the instance in %s was created by PostgreSQL %s but the server found is %s (%s): rerun with --fresh to re-create it (its data is lost), or put PostgreSQL %s's bin directory in PATH",
			l.Data, v, bins.major, bins.postgres, v)
	}
	link, err := os.Readlink(filepath.Join(l.Data, "pg_wal"))
	switch {
	case l.Log == "" && err == nil:
		return fmt.Errorf("the instance in %s keeps its WAL in %s, but no log target was given: pass the same --log-target, or --fresh to re-create the instance", l.Data, link)
	case l.Log != "" && link != l.Log:
		where := "inside the data directory"
		if err == nil {
			where = "in " + link
		}
		return fmt.Errorf("the instance in %s keeps its WAL %s, not on the log target %s: rerun with --fresh to re-create it there", l.Data, where, l.Log)
	}
	return nil
}

// managedServer is what it takes to start a managed instance's server, at
// first and again after a restore has replaced its files.
type managedServer struct {
	*server.Managed
	bins     binaries
	port     int
	settings []server.Setting
	database string
	// password is for TCP connections; it is set again after every start.
	password string
	// dataDir is the data directory the running server says it uses.
	dataDir string
}

// launch writes the settings, starts the server and waits until it accepts
// connections; a server that does not come up is stopped again.
func (m *managedServer) launch(ctx context.Context) (*server.Process, error) {
	conf, err := renderConf(m.settings)
	if err != nil {
		return nil, err
	}
	if err := m.User.WritePrivate(filepath.Join(m.Layout.Data, confFile), conf); err != nil {
		return nil, err
	}
	admin := m.socketDSN("postgres")
	cmd := execx.Cmd{Name: m.bins.postgres, Args: []string{"-D", m.Layout.Data}}
	return m.Launch(ctx, cmd, func(ctx context.Context) error {
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return err
		}
		return c.Close(ctx)
	})
}

// setup runs once the server accepts connections: it makes sure the
// server works in the data directory dbio placed it in, sets the password
// for TCP connections and makes sure the database dbio works in exists.
func (m *managedServer) setup(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, m.socketDSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var dir string
	if err := conn.QueryRow(ctx, "SHOW data_directory").Scan(&dir); err != nil {
		return fmt.Errorf("ask the server for its data directory: %w", err)
	}
	if err := server.SameDataDir(dir, m.Layout.Data); err != nil {
		return err
	}
	m.dataDir = dir
	if _, err := conn.Exec(ctx, "ALTER ROLE "+quoteIdent(superuser)+" PASSWORD '"+m.password+"'"); err != nil {
		return fmt.Errorf("set the password: %w", err)
	}
	return ensureDatabase(ctx, conn, m.database, false, "the managed server")
}

// socketDSN reaches database db over the server's socket, where dbio's
// role is trusted.
func (m *managedServer) socketDSN(db string) string {
	return keywordDSN([2]string{"host", m.SocketDir}, [2]string{"port", strconv.Itoa(m.port)}, [2]string{"user", superuser},
		[2]string{"dbname", db}, [2]string{"sslmode", "disable"}, [2]string{"application_name", "dbio"})
}
