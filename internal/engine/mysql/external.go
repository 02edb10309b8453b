package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
)

// OwnerTable is the table dbio creates inside every database it creates on
// a server; dbio drops or reloads only databases that hold it (MySQL has no
// database comments, so a marker table works on both servers).
const OwnerTable = "dbio_owner"

// PasswordEnv is the environment variable that gives an external server's
// password when the DSN has none, as for the mariadb and mysql clients.
const PasswordEnv = "MYSQL_PWD"

// externalConfig is how dbio reaches the existing server o.DSN names: the
// DSN's own configuration, with the password from PasswordEnv when the DSN
// has none (the mariadb and mysql clients' variable; the driver does not
// read it itself), and how it is reached.
func externalConfig(o engine.Options) (*mysqldrv.Config, string, error) {
	cfg, transport, err := dsns.External(o)
	if err != nil {
		return nil, "", err
	}
	if cfg.Passwd == "" && o.Getenv != nil {
		cfg.Passwd = o.Getenv(PasswordEnv)
	}
	return cfg, transport, nil
}

// externalAdmin is cfg without a database, for the statements dbio runs
// before its database exists, and without the driver's log lines.
func externalAdmin(cfg *mysqldrv.Config) *mysqldrv.Config {
	admin := cfg.Clone()
	admin.DBName = ""
	admin.Logger = quietLogger{}
	return admin
}

// openExternalAdmin opens a pool on the existing server o.DSN names, as the
// DSN says but without a database (the one dbio would create may not exist
// yet): the engine's ExternalAdmin, on which its max_connections is read.
func openExternalAdmin(o engine.Options) (*sql.DB, error) {
	cfg, _, err := externalConfig(o)
	if err != nil {
		return nil, err
	}
	return openAdmin(externalAdmin(cfg))
}

func (e *Engine) startExternal(ctx context.Context, o engine.Options) (engine.Instance, error) {
	cfg, transport, err := externalConfig(o)
	if err != nil {
		return nil, err
	}
	name := server.Database(o)
	where := fmt.Sprintf("server %s", cfg.Addr)
	admin := externalAdmin(cfg)
	adminDB, err := openAdmin(admin)
	if err != nil {
		return nil, err
	}
	err = ensureDatabase(ctx, adminDB, name, o.Fresh, where)
	adminDB.Close()
	if err != nil {
		return nil, err
	}
	in, err := e.open(ctx, workloadConfig(cfg, name), o.MaxConns)
	if err != nil {
		return nil, err
	}
	in.admin = admin
	in.Facts.Transport = transport
	in.Facts.Database = name
	if in.Facts.Settings, err = serverSettings(ctx, in.StatsDB()); err != nil {
		in.Facts.Notes = append(in.Facts.Notes, "the server's settings could not be read: "+err.Error())
	}
	if note, err := durabilityNote(ctx, in.StatsDB()); err == nil {
		in.Facts.Notes = append(in.Facts.Notes, note)
	}
	in.FindLocal(ctx, e.ProcRoot, cfg.Addr, localServer)
	in.startDBTime(ctx, o)
	return in, nil
}

// localServer finds an existing MariaDB or MySQL on this host: its one
// process, its data directory, and its redo log's when set apart.
var localServer = server.Local{
	Commands:     []string{"mariadbd", "mysqld"},
	DataDirQuery: "SELECT @@datadir",
	LogDirQuery:  "SELECT @@innodb_log_group_home_dir",
}

// ensureDatabase makes sure database name exists and is dbio's. It creates
// it (with OwnerTable inside) when missing, drops and re-creates it when
// fresh and it is dbio's, and refuses a database that dbio did not create,
// whatever is asked.
func ensureDatabase(ctx context.Context, db *sql.DB, name string, fresh bool, where string) error {
	var schemas, markers int
	err := db.QueryRowContext(ctx, `SELECT
  (SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?),
  (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?)`,
		name, name, OwnerTable).Scan(&schemas, &markers)
	switch {
	case err != nil:
		return fmt.Errorf("connect to %s: %w", where, err)
	case schemas == 0:
		return createDatabase(ctx, db, name, where)
	case markers == 0:
		return fmt.Errorf("database %q on %s exists and was not created by dbio (it has no %s table): dbio will not load into, drop or reload it; choose another name with --database, or drop it yourself if it is disposable",
			name, where, OwnerTable)
	case !fresh:
		return nil
	}
	if _, err := db.ExecContext(ctx, "DROP DATABASE "+quoteIdent(name)); err != nil {
		return fmt.Errorf("drop dbio's database %q on %s for --fresh: %w", name, where, err)
	}
	return createDatabase(ctx, db, name, where)
}

func createDatabase(ctx context.Context, db *sql.DB, name, where string) error {
	q := quoteIdent(name)
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+q); err != nil {
		var me *mysqldrv.MySQLError
		if errors.As(err, &me) && (me.Number == 1044 || me.Number == 1045) {
			return fmt.Errorf("create database %q on %s: the user may not create it: GRANT ALL ON %s.* to the --dsn user, or use a user who may: %w", name, where, q, err)
		}
		return fmt.Errorf("create database %q on %s: %w", name, where, err)
	}
	for _, stmt := range []string{
		"CREATE TABLE " + q + "." + OwnerTable + " (note VARCHAR(100) NOT NULL, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)",
		"INSERT INTO " + q + "." + OwnerTable + " (note) VALUES ('created by dbio; dbio may drop this database')",
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("mark database %q on %s as dbio's: %w", name, where, err)
		}
	}
	return nil
}

// serverSettings reads the settings an external server's administrator
// chose (everything not at its compiled-in default), for the record: MariaDB
// tells where each value came from in SYSTEM_VARIABLES, MySQL in
// performance_schema.variables_info.
func serverSettings(ctx context.Context, db *sql.DB) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT VARIABLE_NAME, GLOBAL_VALUE FROM information_schema.SYSTEM_VARIABLES
WHERE GLOBAL_VALUE_ORIGIN IN ('CONFIG', 'COMMAND-LINE', 'SQL')`)
	if err != nil {
		rows, err = db.QueryContext(ctx, `SELECT i.VARIABLE_NAME, g.VARIABLE_VALUE FROM performance_schema.variables_info i
JOIN performance_schema.global_variables g ON g.VARIABLE_NAME = i.VARIABLE_NAME WHERE i.VARIABLE_SOURCE <> 'COMPILED'`)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var name string
		var value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		m[strings.ToLower(name)] = value.String
	}
	return m, rows.Err()
}

// OwnedDatabases implements engine.OwnedDatabases: the databases holding
// OwnerTable, with the space their tables and indexes take.
func (e *Engine) OwnedDatabases(ctx context.Context, o engine.Options) ([]engine.OwnedDatabase, error) {
	db, where, err := openOwnedAdmin(o)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT o.TABLE_SCHEMA, COALESCE(SUM(t.DATA_LENGTH + t.INDEX_LENGTH), 0)
FROM information_schema.TABLES o JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = o.TABLE_SCHEMA
WHERE o.TABLE_NAME = ? GROUP BY o.TABLE_SCHEMA ORDER BY o.TABLE_SCHEMA`, OwnerTable)
	if err != nil {
		return nil, fmt.Errorf("list dbio's databases on %s: %w", where, dsns.Refused(o.DSN, err))
	}
	defer rows.Close()
	var out []engine.OwnedDatabase
	for rows.Next() {
		var d engine.OwnedDatabase
		if err := rows.Scan(&d.Name, &d.Bytes); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// DropOwned implements engine.OwnedDatabases: it drops database name when
// it holds OwnerTable, and refuses it otherwise.
func (e *Engine) DropOwned(ctx context.Context, o engine.Options, name string) error {
	db, where, err := openOwnedAdmin(o)
	if err != nil {
		return err
	}
	defer db.Close()
	var schemas, markers int
	err = db.QueryRowContext(ctx, `SELECT
  (SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?),
  (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?)`,
		name, name, OwnerTable).Scan(&schemas, &markers)
	switch {
	case err != nil:
		return fmt.Errorf("connect to %s: %w", where, dsns.Refused(o.DSN, err))
	case schemas == 0:
		return nil
	case markers == 0:
		return fmt.Errorf("database %q on %s was not created by dbio (it has no %s table): dbio does not drop it", name, where, OwnerTable)
	}
	if _, err := db.ExecContext(ctx, "DROP DATABASE "+quoteIdent(name)); err != nil {
		return fmt.Errorf("drop dbio's database %q on %s: %w", name, where, err)
	}
	return nil
}

// openOwnedAdmin opens the administrative pool on the existing server
// o.DSN reaches, and says where the server is.
func openOwnedAdmin(o engine.Options) (*sql.DB, string, error) {
	cfg, _, err := externalConfig(o)
	if err != nil {
		return nil, "", err
	}
	where := "server " + cfg.Addr
	db, err := openAdmin(externalAdmin(cfg))
	return db, where, err
}
