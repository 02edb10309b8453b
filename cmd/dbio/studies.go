package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"dbio/internal/report"
	"dbio/internal/results"
)

func init() { commandConstructors = append(commandConstructors, newStudiesCmd) }

func newStudiesCmd(app *App) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "studies SUITE_DIR... [-o studies.md]",
		Short: "One table of the findings several suites expect: study, the seed's figure, dbio's figure and the verdict",
		Long: `Read the directories that dbio suite wrote and check each suite's expected
findings ([[expect]] in its file) against its runs: reproduced, not
reproduced, within noise, or not measured. The table lists, per finding, the
study, the seed study's figure, dbio's figure and the verdict, in Markdown;
-o writes it to a file (make studies writes docs/studies.md this way).`,
		Example: `  dbio studies results/*-suite-*
  dbio studies results/*-suite-* -o docs/studies.md`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("name at least one suite directory (the one dbio suite printed as 'suite results'), e.g. dbio studies results/*-suite-*")
			}
			for _, a := range args {
				if !isSuiteDir(a) {
					return usagef("%s is not a suite directory (no %s): name the directories dbio suite wrote", a, results.SuiteFile)
				}
			}
			suites, err := report.LoadSuites(args)
			if err != nil {
				return err
			}
			if output == "" {
				return report.StudiesMarkdown(app.Stdout, suites)
			}
			if err := report.WriteStudies(output, suites); err != nil {
				return err
			}
			fmt.Fprintf(app.Stdout, "studies: %s\n", output)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Markdown file to write the table to (default: print it)")
	return cmd
}

// isSuiteDir says a directory is one dbio suite wrote (it has suite.json).
func isSuiteDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, results.SuiteFile))
	return err == nil
}
