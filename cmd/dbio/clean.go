package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"dbio/internal/runner"
	"dbio/internal/target"
	"dbio/internal/units"
)

func init() { commandConstructors = append(commandConstructors, newCleanCmd) }

func newCleanCmd(app *App) *cobra.Command {
	var dirs []string
	var yes bool
	cmd := &cobra.Command{
		Use:   "clean --target DIR [--target DIR...] [--yes]",
		Short: "Remove what dbio left on a target (fio work files, managed database instances, backups), after saying what and how much",
		Long: `List what dbio keeps in its own directory on each target (<target>/dbio):
fio's work files, managed PostgreSQL, MariaDB and SQLite instances kept for
--reuse, backups, each with the space it takes. With --yes, remove them.

Only subdirectories carrying dbio's marker are removed; anything else is
named and left alone, no link is followed, and a target another dbio is
using, or with a server still running from it, is refused.`,
		Example: `  dbio clean --target /mnt/nvme
  dbio clean --target /mnt/nvme --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(dirs) == 0 {
				return usagef("--target: name the target to clean, e.g. dbio clean --target /mnt/nvme")
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
	return cmd
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
