package main

import (
	"time"

	"github.com/spf13/cobra"
)

func init() { commandConstructors = append(commandConstructors, newQuickCmd) }

// quickDefaults keep dbio quick under three minutes on a 2-core machine: a
// one-warehouse TPC-C database on SQLite and three short user steps.
var quickDefaults = runFlags{
	engine: "sqlite",
	target: "dbio-data",
	users:  "1,2,4",
	rampup: 5 * time.Second,
	step:   20 * time.Second,
}

func newQuickCmd(app *App) *cobra.Command {
	var f tpccFlags
	cmd := &cobra.Command{
		Use:   "quick",
		Short: "The embedded default: TPC-C on SQLite in a local directory, in under three minutes",
		Long: `Build a one-warehouse TPC-C database on SQLite in the target directory
(default ./dbio-data), run a short user sequence, print a summary table and
write a results directory. Every flag of 'dbio tpcc' applies.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTPCC(cmd.Context(), app, f, "quick", nil)
		},
	}
	registerTPCCFlags(cmd, &f, quickDefaults)
	return cmd
}
