package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/execx"
)

// errPhysicalExternal is why an external server has no physical backup.
var errPhysicalExternal = errors.New("a physical backup and restore (pg_basebackup) needs the server's own files, which dbio has only for a server it runs itself: with --dsn use the logical backup (pg_dump and pg_restore), or drop --dsn to let dbio run the server")

// Tool names recorded in BackupResult.
const (
	physicalTool = "pg_basebackup -X stream --checkpoint=fast"
	logicalTool  = "pg_dump -Fc"
)

// toolConn is how the client programs reach the database dbio owns.
type toolConn struct {
	// conninfo is a libpq connection string for dbio's database, without a password.
	conninfo string
	// password goes to the programs in PGPASSWORD, out of sight of ps.
	password string
	// binDir is the managed server's bin directory, whose programs match its
	// version exactly; empty for an external server.
	binDir string
	// err says why an external DSN could not be given to the programs.
	err error
}

func externalTools(dsn, database, password string) toolConn {
	bare, err := withoutPassword(dsn)
	if err != nil {
		return toolConn{err: fmt.Errorf("pass --dsn to pg_dump: %w", err)}
	}
	return toolConn{conninfo: withDatabase(bare, database), password: password}
}

func (t toolConn) env() []string {
	if t.password == "" {
		return nil
	}
	return []string{"PGPASSWORD=" + t.password}
}

// program finds a PostgreSQL client program: beside the managed server, or
// for an external server the newest installed version (pg_dump reads servers
// of its own version and older), then PATH.
func (in *Instance) program(name string) (string, error) {
	dirs := in.BinDirs
	if in.tools.binDir != "" {
		dirs = []string{in.tools.binDir}
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	if in.Runner != nil {
		if p, err := in.Runner.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s or PATH: install it with `apt-get install -y postgresql-client`", name, strings.Join(dirs, ", "))
}

var _ engine.Backuper = (*Instance)(nil)

// Backup implements engine.Backuper: pg_basebackup writes a copy of the
// whole running instance into dst (a new or empty directory), with the WAL
// streamed alongside so that the copy is consistent on its own. It connects
// over the instance's socket and runs as the server's user, so that the
// copy's files belong to that user. The server keeps running; the checkpoint
// the backup starts with is a fast one, so the time measured is the copy's,
// not checkpoint pacing.
func (in *Instance) Backup(ctx context.Context, dst string) (engine.BackupResult, error) {
	m := in.managed
	if m == nil {
		return engine.BackupResult{}, errPhysicalExternal
	}
	tool, err := in.program("pg_basebackup")
	if err != nil {
		return engine.BackupResult{}, err
	}
	return in.RunBackup(ctx, physicalTool, dst, m.User, []server.BackupStep{{What: "pg_basebackup",
		Cmd: execx.Cmd{Name: tool, Args: []string{"-D", dst, "-X", "stream", "--checkpoint=fast",
			"-h", m.SocketDir, "-p", strconv.Itoa(m.port), "-U", superuser, "-w"}}}})
}

// Restore implements engine.Backuper: it replaces the managed instance's
// files with the base backup in src and starts the server on them, which
// replays the backup's WAL before it accepts connections. The server is
// stopped meanwhile (connections in use fail; stop the workload first). The
// replaced files are set aside inside dbio's own directory and removed once
// the restored server is up; if the restore fails they are put back and the
// server restarted on them. The copy is made by dbio itself, outside the
// storage-class cgroup (Options.Wrap) the server and the backup programs run in.
func (in *Instance) Restore(ctx context.Context, src string) error {
	m := in.managed
	if m == nil {
		return errPhysicalExternal
	}
	if err := checkBaseBackup(src, m.bins.major); err != nil {
		return err
	}
	l := m.Layout
	return in.RunRestore(ctx, &server.Restore{
		Src: src,
		Replace: func(ctx context.Context, r *server.Restore) error {
			if err := r.SetAside(l.Data, l.Base); err != nil {
				return err
			}
			if l.Log != "" {
				if err := r.SetAside(l.Log, filepath.Dir(l.Log)); err != nil {
					return err
				}
			}
			return placeBaseBackup(ctx, src, l, m.User)
		},
		Launch: m.launch,
		Ready:  m.setup,
	})
}

// checkBaseBackup verifies that src holds a base backup this server can start on.
func checkBaseBackup(src, major string) error {
	v, err := dataVersion(src)
	if err != nil {
		return fmt.Errorf("restore: %s is not a PostgreSQL base backup (%v): give the directory a backup wrote", src, err)
	}
	if _, err := os.Stat(filepath.Join(src, "backup_label")); err != nil {
		return fmt.Errorf("restore: %s has no backup_label, so it is not a base backup in plain format: give the directory a backup wrote", src)
	}
	if v != major {
		return fmt.Errorf("restore: the backup in %s is of PostgreSQL %s, the server is %s: restore it with PostgreSQL %s", src, v, major, v)
	}
	return nil
}

// placeBaseBackup copies the base backup into the instance's (empty) places:
// the data directory, and the WAL on the log target when the instance keeps
// it there, linked from the data directory as initdb --waldir does.
func placeBaseBackup(ctx context.Context, src string, l server.Layout, u server.User) error {
	skip := func(rel string) bool { return l.Log != "" && rel == "pg_wal" }
	if _, err := server.CopyTree(ctx, src, l.Data, u, skip); err != nil {
		return err
	}
	// PostgreSQL refuses a data directory others may read.
	if err := os.Chmod(l.Data, 0o700); err != nil {
		return err
	}
	if l.Log == "" {
		return nil
	}
	if _, err := server.CopyTree(ctx, filepath.Join(src, "pg_wal"), l.Log, u, nil); err != nil {
		return err
	}
	link := filepath.Join(l.Data, "pg_wal")
	if err := os.Symlink(l.Log, link); err != nil {
		return err
	}
	return u.Own(link)
}

var _ engine.LogicalBackuper = (*Instance)(nil)

// BackupLogical implements engine.LogicalBackuper: pg_dump writes the
// database dbio owns, in its compressed custom format, to
// dst/<database>.dump, from one snapshot while the workload goes on. It works
// on external servers too.
func (in *Instance) BackupLogical(ctx context.Context, dst string) (engine.BackupResult, error) {
	if in.tools.err != nil {
		return engine.BackupResult{}, in.tools.err
	}
	tool, err := in.program("pg_dump")
	if err != nil {
		return engine.BackupResult{}, err
	}
	// pg_dump runs as dbio itself, which reaches a managed server's socket.
	created, err := server.PrepareDestination(dst, server.User{Self: true})
	if err != nil {
		return engine.BackupResult{}, err
	}
	file := filepath.Join(dst, in.Facts.Database+".dump")
	cmd := execx.Cmd{Name: tool, Args: []string{"-Fc", "-f", file, "-d", in.tools.conninfo}, Env: in.tools.env()}
	if _, err := in.Runner.Run(ctx, in.Tool(cmd)); err != nil {
		if created {
			os.RemoveAll(dst)
		} else {
			os.Remove(file)
		}
		return engine.BackupResult{}, server.ToolError("pg_dump to "+file, server.User{Self: true}, dst, err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		return engine.BackupResult{}, err
	}
	return engine.BackupResult{Tool: logicalTool, Path: file, Bytes: fi.Size()}, nil
}

// RestoreLogical implements engine.LogicalBackuper: the database dbio owns
// is dropped and created again (only if dbio created it), then pg_restore
// loads the dump in src (a file BackupLogical wrote, or its directory). The
// database's sessions end; stop the workload first.
func (in *Instance) RestoreLogical(ctx context.Context, src string) error {
	if in.tools.err != nil {
		return in.tools.err
	}
	file, err := server.DumpFile(src, in.Facts.Database+".dump")
	if err != nil {
		return err
	}
	tool, err := in.program("pg_restore")
	if err != nil {
		return err
	}
	return in.Exclusive(func() error {
		where := "the managed server"
		if in.managed == nil {
			where = fmt.Sprintf("server %s:%d", in.admin.Host, in.admin.Port)
		}
		conn, err := pgx.ConnectConfig(ctx, in.admin)
		if err != nil {
			return fmt.Errorf("restore: connect to %s: %w", where, err)
		}
		err = ensureDatabase(ctx, conn, in.Facts.Database, true, where)
		conn.Close(context.WithoutCancel(ctx))
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		cmd := execx.Cmd{Name: tool, Args: []string{"--exit-on-error", "--no-owner", "-d", in.tools.conninfo, file}, Env: in.tools.env()}
		if _, err := in.Runner.Run(ctx, in.Tool(cmd)); err != nil {
			return fmt.Errorf("restore %s into database %q: %w", file, in.Facts.Database, err)
		}
		return nil
	})
}
