package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/secret"
)

// OwnerComment marks a database dbio created (COMMENT ON DATABASE). dbio drops
// or reloads only databases that carry it.
const OwnerComment = "created by dbio"

// externalConfig is how dbio reaches the existing server o.DSN names: the
// administrative connection's configuration (to the postgres database when
// the DSN names the one dbio would create, which cannot be the one
// connected to while it is created, dropped or checked), the DSN, and how
// it is reached. When the DSN has no password, libpq's variable gives it,
// read through the environment dbio was handed; it goes into the DSN the
// instance hands to workloads, which open their own pools.
func externalConfig(o engine.Options) (cfg *pgx.ConnConfig, dsn, transport string, err error) {
	cfg, transport, err = dsns.External(o)
	if err != nil {
		return nil, "", "", err
	}
	dsn = o.DSN
	if pw := passwordFromEnv(o); pw != "" && len(secret.Values(o.DSN)) == 0 {
		cfg.Password = pw
		dsn = withPassword(dsn, pw)
	}
	if cfg.Database == server.Database(o) {
		cfg.Database = "postgres"
	}
	return cfg, dsn, transport, nil
}

// openExternalAdmin opens a pool on the existing server o.DSN names, as
// externalConfig reaches it (to the postgres database when the DSN names
// the one dbio would create, which may not exist yet): the engine's
// ExternalAdmin, on which its max_connections is read.
func openExternalAdmin(o engine.Options) (*sql.DB, error) {
	cfg, _, _, err := externalConfig(o)
	if err != nil {
		return nil, err
	}
	return stdlib.OpenDB(*cfg), nil
}

func (e *Engine) startExternal(ctx context.Context, o engine.Options) (engine.Instance, error) {
	cfg, dsn, transport, err := externalConfig(o)
	if err != nil {
		return nil, err
	}
	name := server.Database(o)
	where := fmt.Sprintf("server %s:%d", cfg.Host, cfg.Port)
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", where, err)
	}
	err = ensureDatabase(ctx, admin, name, o.Fresh, where)
	admin.Close(context.WithoutCancel(ctx))
	if err != nil {
		return nil, err
	}
	in, err := e.open(ctx, withDatabase(dsn, name), o.MaxConns)
	if err != nil {
		return nil, err
	}
	in.admin = cfg
	in.tools = externalTools(dsn, name, cfg.Password)
	in.Facts.Engine = "postgres"
	in.Facts.Transport = transport
	in.Facts.Database = name
	if in.Facts.Settings, err = serverSettings(ctx, in); err != nil {
		in.Facts.Notes = append(in.Facts.Notes, "the server's settings could not be read: "+err.Error())
	}
	if note, err := durabilityNote(ctx, in.StatsDB()); err == nil {
		in.Facts.Notes = append(in.Facts.Notes, note)
	}
	in.FindLocal(ctx, e.ProcRoot, dsns.Address(cfg), localServer)
	in.startDBTime(ctx, o)
	return in, nil
}

// localServer finds an existing PostgreSQL on this host: the postmaster,
// its data directory (which only a superuser or pg_read_all_settings may
// read), and its WAL when pg_wal is a link to elsewhere.
var localServer = server.Local{
	Commands:     []string{"postgres", "postmaster"},
	DataDirQuery: "SELECT current_setting('data_directory')",
	ResolveLogDir: func(data, _ string) string {
		wal := filepath.Join(data, "pg_wal")
		if real, err := filepath.EvalSymlinks(wal); err == nil && real != wal {
			return real
		}
		return ""
	},
}

// PasswordEnv is the environment variable that gives an external server's
// password when the DSN has none, as for libpq's programs.
const PasswordEnv = "PGPASSWORD"

func passwordFromEnv(o engine.Options) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(PasswordEnv)
}

// ensureDatabase makes sure database name exists and is dbio's. It creates
// it (marking it with OwnerComment) when missing, drops and re-creates it
// when fresh and it is dbio's, and refuses a database that dbio did not
// create, whatever is asked.
func ensureDatabase(ctx context.Context, conn *pgx.Conn, name string, fresh bool, where string) error {
	var comment *string
	err := conn.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", name).Scan(&comment)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return createDatabase(ctx, conn, name, where)
	case err != nil:
		return fmt.Errorf("look for database %q on %s: %w", name, where, err)
	case comment == nil || *comment != OwnerComment:
		return fmt.Errorf("database %q on %s exists and was not created by dbio (its comment is not %q): dbio will not load into, drop or reload it; choose another name with --database, or drop it yourself if it is disposable",
			name, where, OwnerComment)
	case !fresh:
		return nil
	}
	if err := dropDatabase(ctx, conn, name, where); err != nil {
		return fmt.Errorf("%w for --fresh", err)
	}
	return createDatabase(ctx, conn, name, where)
}

// dropDatabase drops database name, which the caller found to be dbio's.
func dropDatabase(ctx context.Context, conn *pgx.Conn, name, where string) error {
	drop := "DROP DATABASE " + quoteIdent(name)
	var versionNum int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&versionNum); err != nil {
		return fmt.Errorf("server version on %s: %w", where, err)
	}
	if versionNum >= 130000 {
		// Sessions left in dbio's own database (an earlier run killed mid-way) would block the drop.
		drop += " WITH (FORCE)"
	}
	if _, err := conn.Exec(ctx, drop); err != nil {
		return fmt.Errorf("drop dbio's database %q on %s: %w", name, where, err)
	}
	return nil
}

// connectAdmin connects to the existing server o.DSN reaches, on a
// database other than avoid (one about to be dropped cannot be the one
// connected to), and says where the server is.
func connectAdmin(ctx context.Context, o engine.Options, avoid string) (*pgx.Conn, string, error) {
	cfg, _, _, err := externalConfig(o)
	if err != nil {
		return nil, "", err
	}
	if cfg.Database == avoid {
		cfg.Database = "postgres"
	}
	where := "server " + dsns.Address(cfg)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, where, fmt.Errorf("connect to %s: %w", where, dsns.Refused(o.DSN, err))
	}
	return conn, where, nil
}

// OwnedDatabases implements engine.OwnedDatabases: the databases whose
// comment is OwnerComment, with their sizes.
func (e *Engine) OwnedDatabases(ctx context.Context, o engine.Options) ([]engine.OwnedDatabase, error) {
	conn, where, err := connectAdmin(ctx, o, "")
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, `SELECT datname, pg_database_size(oid) FROM pg_database
WHERE shobj_description(oid, 'pg_database') = $1 ORDER BY datname`, OwnerComment)
	if err != nil {
		return nil, fmt.Errorf("list dbio's databases on %s: %w", where, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.OwnedDatabase, error) {
		var d engine.OwnedDatabase
		err := r.Scan(&d.Name, &d.Bytes)
		return d, err
	})
}

// DropOwned implements engine.OwnedDatabases: it drops database name when
// it carries OwnerComment, and refuses it otherwise.
func (e *Engine) DropOwned(ctx context.Context, o engine.Options, name string) error {
	conn, where, err := connectAdmin(ctx, o, name)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var comment *string
	err = conn.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", name).Scan(&comment)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("look for database %q on %s: %w", name, where, err)
	case comment == nil || *comment != OwnerComment:
		return fmt.Errorf("database %q on %s was not created by dbio (its comment is not %q): dbio does not drop it", name, where, OwnerComment)
	}
	return dropDatabase(ctx, conn, name, where)
}

func createDatabase(ctx context.Context, conn *pgx.Conn, name, where string) error {
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+quoteIdent(name)); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42501" {
			return fmt.Errorf("create database %q on %s: the user may not create databases: grant it CREATEDB (ALTER ROLE ... CREATEDB) or use a --dsn with a user who may: %w", name, where, err)
		}
		return fmt.Errorf("create database %q on %s: %w", name, where, err)
	}
	if _, err := conn.Exec(ctx, "COMMENT ON DATABASE "+quoteIdent(name)+" IS '"+OwnerComment+"'"); err != nil {
		return fmt.Errorf("mark database %q on %s as dbio's: %w", name, where, err)
	}
	return nil
}

// serverSettings reads the settings an external server's administrator
// chose (everything not at its built-in default), for the record.
func serverSettings(ctx context.Context, in *Instance) (map[string]string, error) {
	rows, err := in.StatsDB().QueryContext(ctx, `SELECT name, current_setting(name) FROM pg_settings
WHERE source NOT IN ('default', 'override', 'client', 'session')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		m[name] = value
	}
	return m, rows.Err()
}
