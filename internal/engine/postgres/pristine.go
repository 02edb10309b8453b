package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/target"
)

var _ engine.Resetter = (*Instance)(nil)

// How a managed server's pristine copy is kept: a template database in
// the same instance, or a copy of the stopped server's files.
type pristineRoute int

const (
	// routeTemplate keeps the loaded database as a template database of
	// the instance, which CREATE DATABASE … TEMPLATE copies back: the
	// server copies only that database's files, and stays up.
	routeTemplate pristineRoute = iota
	// routeFiles copies the stopped server's whole data directory (and
	// WAL), where the file system clones them in a moment.
	routeFiles
)

// templateRecordFile, in the pristine copy's directory, names the
// template database that is the copy (routeTemplate); a directory without
// it holds the server's files (routeFiles).
const templateRecordFile = "template-database"

// pristineSuffix names the template database after the database it keeps.
const pristineSuffix = "_pristine"

// KeepPristine implements engine.Resetter for a managed server: a template
// database in the same instance, or, where the file system clones files or
// the template's name would be too long, a copy of the stopped server's
// files (see server.Instance.KeepPristine).
func (in *Instance) KeepPristine(ctx context.Context, dir string) (engine.PristineCopy, error) {
	return in.keepPristine(ctx, dir, in.pristineRoute(dir))
}

// RestorePristine implements engine.Resetter: the database is created
// again from the template the copy names, or the copy's files replace the
// server's and the server starts on them.
func (in *Instance) RestorePristine(ctx context.Context, dir string) (engine.PristineCopy, error) {
	name, err := readTemplateRecord(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return in.Instance.RestorePristine(ctx, dir, in.pristine())
	case err != nil:
		return engine.PristineCopy{}, fmt.Errorf("restore the pristine copy: %w", err)
	}
	return in.restoreTemplate(ctx, name)
}

// pristineRoute chooses how to keep the copy. The server copying one
// database beats dbio copying every byte of the instance, its WAL
// included, but not everywhere: a clone of the stopped server's files
// costs a restart and no copying, so it is taken where the data target
// clones (which a probe in the copy's parent directory, on the same file
// system, shows); and a server started inside a cgroup of the run's
// (a storage class, a memory cap) would make its copy under the run's
// limits, throttled and counted in what the run records of the group,
// where dbio's own copy is neither.
func (in *Instance) pristineRoute(dir string) pristineRoute {
	if in.managed == nil || in.managed.Wrap != nil || len(in.Facts.Database)+len(pristineSuffix) > 63 || clones(filepath.Dir(dir)) {
		return routeFiles
	}
	return routeTemplate
}

// clones says whether files in dir can be cloned (FICLONE).
func clones(dir string) bool {
	probe, err := os.CreateTemp(dir, ".clone-probe-")
	if err != nil {
		return false
	}
	defer os.Remove(probe.Name())
	_, err = probe.WriteString("dbio")
	if err = errors.Join(err, probe.Close()); err != nil {
		return false
	}
	clone := probe.Name() + "-clone"
	_, reflinked, err := engine.CloneFile(probe.Name(), clone, 0o600)
	os.Remove(clone)
	return err == nil && reflinked
}

func (in *Instance) keepPristine(ctx context.Context, dir string, route pristineRoute) (engine.PristineCopy, error) {
	if in.managed == nil {
		return engine.PristineCopy{}, server.ErrPristineExternal
	}
	// A template an earlier copy left would otherwise be copied with the
	// files, or be in the way of the new one.
	if err := in.dropTemplate(ctx, in.Facts.Database+pristineSuffix); err != nil {
		return engine.PristineCopy{}, fmt.Errorf("keep a pristine copy: %w", err)
	}
	if route == routeFiles {
		return in.Instance.KeepPristine(ctx, dir, in.pristine())
	}
	name := in.Facts.Database + pristineSuffix
	if err := os.Mkdir(dir, 0o700); err != nil {
		return engine.PristineCopy{}, fmt.Errorf("keep a pristine copy: %w", err)
	}
	var bytes int64
	err := in.withAdmin(ctx, func(conn *pgx.Conn) error {
		err := closeDatabase(ctx, conn, in.Facts.Database)
		if err == nil {
			err = copyDatabase(ctx, conn, in.Facts.Database, name)
		}
		if _, openErr := conn.Exec(context.WithoutCancel(ctx), "ALTER DATABASE "+quoteIdent(in.Facts.Database)+" WITH ALLOW_CONNECTIONS true"); openErr != nil {
			err = errors.Join(err, fmt.Errorf("open %q to connections again: %w", in.Facts.Database, openErr))
		}
		if err != nil {
			return err
		}
		// A template no one may connect to stays as it was copied; only
		// dbio drops it (it is marked as dbio's like every database dbio
		// makes), and only after making it an ordinary database again.
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+quoteIdent(name)+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
			return fmt.Errorf("make %q a template: %w", name, err)
		}
		return conn.QueryRow(ctx, "SELECT pg_database_size($1)", name).Scan(&bytes)
	})
	if err == nil {
		err = target.WriteFile(filepath.Join(dir, templateRecordFile), []byte(name+"\n"), 0o600)
	}
	if err != nil {
		os.RemoveAll(dir)
		return engine.PristineCopy{}, fmt.Errorf("keep a pristine copy: %w", errors.Join(err, in.dropTemplate(context.WithoutCancel(ctx), name)))
	}
	return engine.PristineCopy{Method: engine.CopyTemplate, Bytes: bytes}, nil
}

// restoreTemplate drops the database a run changed and creates it again
// from the template database name.
func (in *Instance) restoreTemplate(ctx context.Context, name string) (engine.PristineCopy, error) {
	if in.managed == nil {
		return engine.PristineCopy{}, server.ErrPristineExternal
	}
	var bytes int64
	err := in.withAdmin(ctx, func(conn *pgx.Conn) error {
		var template bool
		err := conn.QueryRow(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1 AND shobj_description(oid, 'pg_database') = $2",
			name, OwnerComment).Scan(&template)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && !template {
			return fmt.Errorf("the server has no template database %q of dbio's, which the copy is (an instance created again since): %w", name, engine.ErrPristineGone)
		}
		if err != nil {
			return err
		}
		if err := dropDatabase(ctx, conn, in.Facts.Database, "the managed server"); err != nil {
			return err
		}
		if err := copyDatabase(ctx, conn, name, in.Facts.Database); err != nil {
			return err
		}
		return conn.QueryRow(ctx, "SELECT pg_database_size($1)", in.Facts.Database).Scan(&bytes)
	})
	if err != nil {
		return engine.PristineCopy{}, fmt.Errorf("restore the pristine copy: %w", err)
	}
	return engine.PristineCopy{Method: engine.CopyTemplate, Bytes: bytes}, nil
}

// withAdmin runs f on a connection to the managed server's postgres
// database, with nothing else of dbio's running on the server's files
// meanwhile and dbio's pools reconnecting after it.
func (in *Instance) withAdmin(ctx context.Context, f func(conn *pgx.Conn) error) error {
	return in.Exclusive(func() error {
		conn, err := pgx.ConnectConfig(ctx, in.admin)
		if err != nil {
			return fmt.Errorf("connect to the managed server: %w", err)
		}
		defer conn.Close(context.WithoutCancel(ctx))
		return f(conn)
	})
}

// closeDatabase turns connections to database db away and ends its
// sessions but the caller's, since a database is copied only when no one
// is connected to it: dbio's pools and samplers reconnect once it opens
// again, and a sampler's reconnection meanwhile cannot fail the copy.
func closeDatabase(ctx context.Context, conn *pgx.Conn, db string) error {
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+quoteIdent(db)+" WITH ALLOW_CONNECTIONS false"); err != nil {
		return fmt.Errorf("close %q to connections: %w", db, err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", db); err != nil {
		return fmt.Errorf("end the sessions in %q: %w", db, err)
	}
	return nil
}

// copyDatabase creates database to as a copy of from by its files
// (STRATEGY FILE_COPY, which PostgreSQL 15 added beside the default of
// writing every block to the WAL; before 15 a copy was always by files),
// and marks it as dbio's.
func copyDatabase(ctx context.Context, conn *pgx.Conn, from, to string) error {
	var versionNum int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&versionNum); err != nil {
		return fmt.Errorf("server version: %w", err)
	}
	create := "CREATE DATABASE " + quoteIdent(to) + " TEMPLATE " + quoteIdent(from)
	if versionNum >= 150000 {
		create += " STRATEGY FILE_COPY"
	}
	if _, err := conn.Exec(ctx, create); err != nil {
		return fmt.Errorf("copy database %q into %q: %w", from, to, err)
	}
	if _, err := conn.Exec(ctx, "COMMENT ON DATABASE "+quoteIdent(to)+" IS '"+OwnerComment+"'"); err != nil {
		return fmt.Errorf("mark database %q as dbio's: %w", to, err)
	}
	return nil
}

// dropTemplate drops the template database name when there is one of
// dbio's; one that is not dbio's is refused.
func (in *Instance) dropTemplate(ctx context.Context, name string) error {
	return in.withAdmin(ctx, func(conn *pgx.Conn) error {
		var comment *string
		err := conn.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", name).Scan(&comment)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil:
			return fmt.Errorf("look for database %q: %w", name, err)
		case comment == nil || *comment != OwnerComment:
			return fmt.Errorf("database %q on the managed server was not created by dbio (its comment is not %q): dbio does not drop it; drop it yourself or use another --database", name, OwnerComment)
		}
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+quoteIdent(name)+" WITH IS_TEMPLATE false"); err != nil {
			return fmt.Errorf("make %q an ordinary database to drop it: %w", name, err)
		}
		return dropDatabase(ctx, conn, name, "the managed server")
	})
}

// readTemplateRecord reads the template database's name from a pristine
// copy's directory; os.ErrNotExist when the copy is of the server's files.
func readTemplateRecord(dir string) (string, error) {
	f, err := target.OpenFile(filepath.Join(dir, templateRecordFile), os.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b := make([]byte, 128)
	n, err := f.Read(b)
	if err != nil {
		return "", err
	}
	name := strings.TrimSpace(string(b[:n]))
	if err := engine.DatabaseNameProblem(name); err != nil || name == "" {
		return "", fmt.Errorf("%s does not name a database: keep a new copy", filepath.Join(dir, templateRecordFile))
	}
	return name, nil
}

// pristine is how the managed server's files are copied and started
// again; nil for a server of the user's, which has no files of dbio's.
func (in *Instance) pristine() *server.Pristine {
	m := in.managed
	if m == nil {
		return nil
	}
	return &server.Pristine{Layout: m.Layout, User: m.User, Launch: m.launch, Ready: m.setup, DropCache: m.MemoryCapped}
}
