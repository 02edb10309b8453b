package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"dbio/internal/engine"
	"dbio/internal/runner"
	"dbio/internal/secret"
	"dbio/internal/target"
	"dbio/internal/units"
)

func init() { commandConstructors = append(commandConstructors, newCleanCmd) }

func newCleanCmd(app *App) *cobra.Command {
	var dirs []string
	var yes bool
	server := runFlags{engines: app.Engines}
	cmd := &cobra.Command{
		Use:   "clean {--target DIR [--target DIR...] | --dsn DSN} [--yes]",
		Short: "Remove what dbio left on a target (fio work files, managed database instances, backups), after saying what and how much",
		Long: `List what dbio keeps in its own directory on each target (<target>/dbio):
fio's work files, managed PostgreSQL, MariaDB and SQLite instances kept for
--reuse, backups, each with the space it takes. With --yes, remove them.

Only subdirectories carrying dbio's marker are removed; anything else is
named and left alone, no link is followed, and a target another dbio is
using, or with a server still running from it, is refused.

With --dsn, list the databases dbio created on your own server (those that
carry dbio's marker: a comment on PostgreSQL, a dbio_owner table on MariaDB
and MySQL), each with its size; with --yes, drop them. Other databases are
never touched.`,
		Example: `  dbio clean --target /mnt/nvme
  dbio clean --target /mnt/nvme --yes
  dbio clean --dsn postgres://bench@db1:5432/postgres --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if server.dsn != "" || server.dsnFile != "" {
				if len(dirs) > 0 {
					return usagef("--target and --dsn: clean one kind of place at a time: a target's directory, or your server's databases")
				}
				return cleanServer(cmd.Context(), app, server, yes)
			}
			if len(dirs) == 0 {
				return usagef("--target: name the target to clean, e.g. dbio clean --target /mnt/nvme (or --dsn DSN for the databases dbio created on your server)")
			}
			// No other dbio may be running on the targets while they are cleaned.
			release, err := runner.LockTargets(app.SysFS, dirs, false, runner.Holder(app.Args, app.Now()))
			if err != nil {
				return err
			}
			defer release()
			for _, d := range dirs {
				if err := clean(app, d, yes); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&dirs, "target", "t", nil, "a target to clean (repeatable)")
	cmd.Flags().BoolVar(&yes, "yes", false, "remove what is listed (without it, dbio only says what it would remove)")
	cmd.Flags().StringVar(&server.dsn, "dsn", "", "your server, whose databases dbio created are listed (dropped with --yes)")
	cmd.Flags().StringVar(&server.dsnFile, "dsn-file", "", "read the --dsn from this file")
	cmd.Flags().StringVarP(&server.engine, "engine", "e", "", "the server's engine, when the DSN does not say: "+strings.Join(app.Engines.Names(), ", "))
	server.flags = cmd.Flags()
	return cmd
}

// cleanServer lists the databases dbio created on the server f.dsn
// reaches, with their sizes, and drops them with yes: only those that
// carry dbio's marker, which the engine checks again as it drops each.
func cleanServer(ctx context.Context, app *App, f runFlags, yes bool) error {
	if err := f.readDSNFile(); err != nil {
		return &usageError{msg: err.Error()}
	}
	e, err := f.chooseEngine()
	if err != nil {
		return &usageError{msg: err.Error()}
	}
	owned, ok := e.(engine.OwnedDatabases)
	if !ok {
		return usagef("--dsn: %s has no server of yours to clean: drop --dsn and pass --target DIR", e.Name())
	}
	o := engine.Options{DSN: f.dsn, Getenv: app.Getenv}
	scrub := secret.Scrubber(f.dsn)
	where := secret.RedactDSN(f.dsn)
	dbs, err := owned.OwnedDatabases(ctx, o)
	if err != nil {
		return &usageError{msg: fmt.Sprintf("--dsn %s: %s", where, scrub(err.Error()))}
	}
	if len(dbs) == 0 {
		fmt.Fprintf(app.Stdout, "%s: no database of dbio's to drop\n", where)
		return nil
	}
	var total int64
	for _, d := range dbs {
		fmt.Fprintf(app.Stdout, "%s: database %s: %s\n", where, d.Name, units.FormatBytes(uint64(max(d.Bytes, 0))))
		total += d.Bytes
	}
	if !yes {
		fmt.Fprintf(app.Stdout, "%s: %s (%s) would be dropped; run again with --yes to drop them\n", where, databases(len(dbs)), units.FormatBytes(uint64(max(total, 0))))
		return nil
	}
	// One database the user may not drop does not keep the others.
	var errs []error
	var dropped int
	var freed int64
	for _, d := range dbs {
		if err := owned.DropOwned(ctx, o, d.Name); err != nil {
			errs = append(errs, errors.New(scrub(err.Error())))
			continue
		}
		dropped++
		freed += d.Bytes
	}
	fmt.Fprintf(app.Stdout, "%s: dropped %s (%s)\n", where, databases(dropped), units.FormatBytes(uint64(max(freed, 0))))
	return errors.Join(errs...)
}

func clean(app *App, path string, yes bool) error {
	dir, entries, err := target.Contents(path)
	if err != nil {
		return err
	}
	var total int64
	var removable []target.Entry
	for _, e := range entries {
		switch {
		case !e.Owned:
			fmt.Fprintf(app.Stdout, "%s/%s: not created by dbio, left alone\n", dir, e.Name)
		case e.LivePID != 0:
			return fmt.Errorf("%s/%s: process %d still runs from it (a server dbio started?): stop it, then clean again", dir, e.Name, e.LivePID)
		default:
			fmt.Fprintf(app.Stdout, "%s/%s: %s\n", dir, e.Name, units.FormatBytes(uint64(e.Bytes)))
			removable = append(removable, e)
			total += e.Bytes
		}
	}
	if len(removable) == 0 {
		fmt.Fprintf(app.Stdout, "%s: nothing of dbio's to remove\n", path)
		return nil
	}
	if !yes {
		fmt.Fprintf(app.Stdout, "%s: %s in %d directories would be removed; run again with --yes to remove them\n", path, units.FormatBytes(uint64(total)), len(removable))
		return nil
	}
	t, err := target.Open(path)
	if err != nil {
		return err
	}
	for _, e := range removable {
		if err := t.RemoveSub(e.Name); err != nil {
			return err
		}
	}
	fmt.Fprintf(app.Stdout, "%s: removed %s in %d directories\n", path, units.FormatBytes(uint64(total)), len(removable))
	return nil
}

func databases(n int) string {
	if n == 1 {
		return "1 database"
	}
	return fmt.Sprintf("%d databases", n)
}
