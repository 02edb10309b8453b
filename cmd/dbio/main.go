// Command dbio tells a DBA or storage engineer what a storage will do for
// their database: synthetic I/O with fio, real OLTP workloads on real engines
// placed on that storage, telemetry, and reports that compare configurations.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"dbio/internal/engine"
	"dbio/internal/engine/engines"
	"dbio/internal/execx"
	"dbio/internal/results"
	"dbio/internal/secret"
	"dbio/internal/target"
	"dbio/internal/workload"
)

// Exit codes, chosen once, here.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// App is the process state every command receives: nothing below cmd/ reads
// os.Stdout, the environment or the clock directly.
type App struct {
	// Stdin is where a tenant of a run on several hosts reads its start
	// instant (--start-barrier); nil has none.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Now    func() time.Time
	Exec   execx.Runner
	// SysFS is the /proc and /sys every target is resolved through, and
	// the /proc servers' processes are listed from; main gives the host's,
	// tests may give fixtures.
	SysFS target.SysFS
	// Engines are the engines commands run, built by run from Exec and
	// SysFS when not given, so that the App's runner reaches each one.
	// MetricsAddr is where a run serves its live figures (--metrics-addr);
	// empty serves none.
	MetricsAddr string
	Engines     *engine.Registry
	// Args is the command line as typed, recorded in run.json; run redacts
	// its passwords before any command sees it.
	Args []string
	// RestoreSignals gives Ctrl-C, SIGTERM and SIGHUP back their default
	// effect, ending dbio at once, for a command that runs nothing (see
	// runsNothing); nil leaves them as they are (tests run commands in
	// their own process).
	RestoreSignals func()
}

// usageError marks bad input: one clear line and exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{msg: fmt.Sprintf(format, a...)} }

// errInterrupted is returned by a command whose run was stopped by the user;
// the results gathered so far are kept.
var errInterrupted = errors.New("interrupted")

// commandConstructors are added by each command's file at init, so adding a
// command never edits this one.
var commandConstructors []func(*App) *cobra.Command

func newRoot(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "dbio",
		Short: "What will this storage do for my database?",
		Long: `dbio characterizes storage with fio, runs OLTP workloads (TPC-C and more) on
real database engines placed on that storage, samples the OS while it runs,
and writes a results directory and a report that compare storage configurations.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetVersionTemplate(versionTemplate())
	// Old flag names print their notice and count as the new names before
	// any command reads its flags.
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if runsNothing[cmd.Name()] && cmd.Parent() == cmd.Root() {
			if app.RestoreSignals != nil {
				app.RestoreSignals()
			}
			// What these commands print comes from results directories
			// and their names, which anyone may have written.
			app.Stdout, app.Stderr = &terminalText{w: app.Stdout}, &terminalText{w: app.Stderr}
		}
		return resolveAliases(cmd.Flags(), app.Stderr)
	}
	root.PersistentFlags().StringVar(&app.MetricsAddr, "metrics-addr", "", "serve the run's live per-second figures for Prometheus at http://ADDR/metrics (host:port, e.g. 127.0.0.1:9464)")
	root.SetOut(app.Stdout)
	root.SetErr(app.Stderr)
	// Flag errors are usage errors: one line in plain words and exit code 2.
	root.SetFlagErrorFunc(flagError)
	for _, ctor := range commandConstructors {
		root.AddCommand(ctor(app))
	}
	for _, def := range workloads().All() {
		root.AddCommand(newWorkloadCmd(app, def))
	}
	addSynonyms(root)
	return root
}

func run(ctx context.Context, app *App, args []string) int {
	// What dbio records or prints of its command line never holds a
	// password; the commands still run with args as given.
	redacted := *app
	redacted.Args = secret.RedactArgs(app.Args)
	if redacted.Engines == nil {
		redacted.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
	}
	app = &redacted
	root := newRoot(app)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil {
		// A driver's message may quote a DSN from the command line.
		err = secret.ScrubError(err, secret.ArgValues(args))
	}
	code := exitCode(app, err)
	for _, w := range []io.Writer{app.Stdout, app.Stderr} {
		if t, ok := w.(*terminalText); ok {
			t.Flush()
		}
	}
	return code
}

// terminalText passes text on to w with every control character but tabs
// and newlines shown as an escape (see results.Printable): the one point
// through which a command that runs nothing prints, so that nothing it read
// can clear the screen, fake a line or write the clipboard.
type terminalText struct {
	w io.Writer
	// pending is the start of a UTF-8 sequence the last write ended in.
	pending []byte
}

func (t *terminalText) Write(p []byte) (int, error) {
	b := append(t.pending, p...)
	cut := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	t.pending = append([]byte(nil), b[cut:]...)
	if _, err := io.WriteString(t.w, results.Printable(string(b[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what an incomplete UTF-8 sequence at the end left pending.
func (t *terminalText) Flush() error {
	b := t.pending
	t.pending = nil
	_, err := io.WriteString(t.w, results.Printable(string(b)))
	return err
}

// exitCode says what went wrong, if anything, and returns the exit code it means.
func exitCode(app *App, err error) int {
	var ue *usageError
	var refused *workload.ReuseRefused
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue), errors.Is(err, results.ErrUntrusted), errors.Is(err, results.ErrNotResults), errors.Is(err, results.ErrNotOwned), errors.As(err, &refused):
		// A directory that is not dbio's results, or not as dbio wrote
		// them, an output path that holds something else, or --reuse of
		// data that is not what the run asks for, is bad input too.
		fmt.Fprintf(app.Stderr, "dbio: %v\n", err)
		return exitUsage
	case errors.Is(err, errThresholdsBroken):
		fmt.Fprintf(app.Stderr, "dbio: %v\n", err)
		return exitThresholds
	case errors.Is(err, errInterrupted) || errors.Is(err, context.Canceled):
		fmt.Fprintf(app.Stderr, "dbio: %v\n", err)
		return exitInterrupted
	default:
		// cobra reports unknown commands and arguments as plain errors.
		if isCobraUsage(err) {
			fmt.Fprintf(app.Stderr, "dbio: %v (see 'dbio --help')\n", err)
			return exitUsage
		}
		fmt.Fprintf(app.Stderr, "dbio: %v\n", err)
		return exitFailure
	}
}

// stopSignals are the signals that stop a run the way Ctrl-C does: its
// servers are stopped, its results kept and recorded as interrupted. SIGHUP
// comes with a closed terminal or a dropped SSH session, SIGTERM from kill,
// systemd or a container being stopped. A signal dbio was started with
// ignored stays ignored: nohup ignores SIGHUP, and a shell without job
// control ignores SIGINT for background jobs, so that the run survives them.
func stopSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM}
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}

// runsNothing are the commands that only read (results directories, suite
// directories) and write a report: stopped, they have no server to stop
// and nothing to record, so Ctrl-C and SIGTERM end them at once, the
// default effect, instead of cancelling a context their reading does not
// watch. A command added later that runs nothing belongs here.
var runsNothing = map[string]bool{"report": true, "compare": true, "runs": true, "studies": true, "history": true, "check": true}

func main() { os.Exit(runProcess(os.Args)) }

// runProcess is dbio as a process, args its command line: the signals that
// stop a run are caught (see stopSignals) until a command that runs nothing
// gives them back.
func runProcess(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	defer stop()
	// When the reader of dbio's output goes (`dbio ... | tee log` in a
	// terminal that closed), a write must fail with EPIPE rather than kill
	// dbio with SIGPIPE before it has stopped its servers and finished its
	// results.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	host := target.HostFS()
	app := &App{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
		Now:    time.Now,
		Exec:   execx.Real{Proc: host.Proc},
		SysFS:  host,
		Args:   args,
		// NotifyContext's stop unregisters its signals: with no other
		// handler, each has its default effect again.
		RestoreSignals: stop,
	}
	return run(ctx, app, args[1:])
}
