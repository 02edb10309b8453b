package mysql

import (
	"context"
	"errors"
	"fmt"

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
)

var _ engine.Resetter = (*Instance)(nil)

// KeepPristine implements engine.Resetter for a managed server: a copy of
// the stopped server's data directory, and of its redo log when it is
// apart (see server.Instance.KeepPristine). InnoDB's clean shutdown leaves
// files a copy can start on without recovery. The redo log is shrunk
// first (pristineRedo), so that neither the copy nor every restore of it
// copies the whole of it.
func (in *Instance) KeepPristine(ctx context.Context, dir string) (engine.PristineCopy, error) {
	restore, err := in.shrinkRedo(ctx)
	if err != nil {
		return engine.PristineCopy{}, fmt.Errorf("keep a pristine copy: %w", err)
	}
	kept, err := in.Instance.KeepPristine(ctx, dir, in.pristine())
	if err != nil && restore != nil {
		err = errors.Join(err, restore(context.WithoutCancel(ctx)))
	}
	return kept, err
}

// pristineRedo is the redo log's size in a pristine copy. After a clean
// shutdown the log holds nothing InnoDB needs but its checkpoint, yet it
// is as large as innodb_log_file_size (1 GiB as dbio sets it): most of
// what a copy of a small database weighs. MariaDB will not start without
// the file, but from 10.11 it resizes the log while running, and at a
// start on a log of another size than its setting it makes a new one of
// that size: so the server shrinks its log before the copy, and every
// start on the copy (the one after the keep, and each restore's) gives it
// back its configured size.
const pristineRedo = 16 << 20

// shrinkRedo shrinks a MariaDB server's redo log to pristineRedo when it
// is larger and the server can resize it while running (MariaDB 10.11 and
// later), and returns what sets it back if the server does not restart;
// nil when nothing was changed.
func (in *Instance) shrinkRedo(ctx context.Context) (restore func(context.Context) error, err error) {
	if in.managed == nil || in.managed.bins.flavour != mariadb {
		return nil, nil
	}
	var size int64
	if err := in.DB().QueryRowContext(ctx, "SELECT @@innodb_log_file_size").Scan(&size); err != nil {
		return nil, fmt.Errorf("read the redo log's size: %w", err)
	}
	if size <= pristineRedo {
		return nil, nil
	}
	if _, err := in.DB().ExecContext(ctx, fmt.Sprintf("SET GLOBAL innodb_log_file_size = %d", pristineRedo)); err != nil {
		var me *mysqldrv.MySQLError
		if errors.As(err, &me) && me.Number == errReadOnlyVariable {
			return nil, nil // before 10.11: the copy takes the log as it is
		}
		return nil, fmt.Errorf("shrink the redo log for the copy: %w", err)
	}
	return func(ctx context.Context) error {
		if _, err := in.DB().ExecContext(ctx, fmt.Sprintf("SET GLOBAL innodb_log_file_size = %d", size)); err != nil {
			return fmt.Errorf("give the redo log back its %d bytes: %w", size, err)
		}
		return nil
	}, nil
}

// errReadOnlyVariable is ER_INCORRECT_GLOBAL_LOCAL_VAR, which a server
// answers to setting a variable it reads only at start.
const errReadOnlyVariable = 1238

// RestorePristine implements engine.Resetter: the copy's files replace the
// server's and the server starts on them.
func (in *Instance) RestorePristine(ctx context.Context, dir string) (engine.PristineCopy, error) {
	return in.Instance.RestorePristine(ctx, dir, in.pristine())
}

// pristine is how the managed server's files are copied and started
// again; nil for a server of the user's, which has no files of dbio's.
func (in *Instance) pristine() *server.Pristine {
	m := in.managed
	if m == nil {
		return nil
	}
	return &server.Pristine{Layout: m.Layout, User: m.User, Launch: m.launch, DropCache: m.MemoryCapped}
}
