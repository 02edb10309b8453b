// Package importrules holds the test that keeps dbio's packages to the design
// in docs/ARCHITECTURE.md: it reads the package table there and fails when a
// file imports a dbio package its row does not allow, when a package has no
// row, or when a row names a package or an import that does not exist. The
// table is the design; this test is what makes a wrong import fail CI instead
// of waiting for a reviewer to notice it. A second test keeps the running
// system's /proc, /sys and /etc (target.HostFS, telemetry.HostFS) to cmd, so
// that below it they are always parameters.
//
// The package has no code of its own: everything is in its test.
package importrules
