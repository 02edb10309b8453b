package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/analysis"
	"dbio/internal/execx"
	"dbio/internal/report"
	"dbio/internal/results"
	"dbio/internal/secret"
	"dbio/internal/stats"
	"dbio/internal/units"
)

func init() { commandConstructors = append(commandConstructors, newABCmd) }

type abFlags struct {
	a, b               string
	aSetup, bSetup     string
	aTeardown, bTearDn string
	labelA, labelB     string
	// repeat is how many runs each side gets (--repeat, once --runs).
	repeat  int
	results string
	name    string
	// untilDecided adds runs until a sequential test decides, --repeat
	// being the most; margin is the difference (a fraction) under which the
	// sides count as not different.
	untilDecided bool
	margin       string
}

func newABCmd(app *App) *cobra.Command {
	var f abFlags
	cmd := &cobra.Command{
		Use:   "ab [flags] -- COMMAND [ARGS...]",
		Short: "A/B study: the same run twice (or N times each, interleaved) with one thing changed",
		Long: `Run a dbio command on side A and side B, --repeat N times each, interleaved A B A B to
cancel drift, with one thing changed: flags added to one side (--a, --b), or a
command run before and after each side (--a-setup, --b-setup, e.g. enabling a
caching layer). The report is an A/B table: per step, each side's median over
its runs, the differential and the change in % for throughput and response
time, and whether the difference is significant: a Mann-Whitney U test at the
5 % level, and larger than the spread of each side's own runs. With fewer than
4 runs a side no difference can be called; with 6 or more each median gets a
95 % confidence interval. The same is done over each run's average of the
steps, then the largest load each side kept. Cache accounting says where each
side's reads were served: the engine's cache, the OS, the device. compare.html
in the A/B directory compares every figure of the sides' runs the same way.
With --until-decided, --repeat is the most runs a side: the study stops after
the pair of runs that decides a sequential test on each run's headline figure,
whose 5 % false-difference rate holds however many times it looks.`,
		Example: `  dbio ab --a "--buffer-pool 64MB" --b "--buffer-pool 1GB" --repeat 5 -- \
      as3ap --engine postgres --target /mnt/data --rows 200000 --ceiling 100ms`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return usagef("put the command to compare after --, e.g. dbio ab --a \"--buffer-pool 64MB\" --b \"--buffer-pool 1GB\" -- tpcc --target DIR")
			}
			if f.repeat < 1 {
				return usagef("--repeat %d: run each side at least once (--repeat 5 runs each side five times)", f.repeat)
			}
			if f.a == "" && f.b == "" && f.aSetup == "" && f.bSetup == "" {
				return usagef("--a, --b, --a-setup or --b-setup: say what differs between the sides")
			}
			if _, err := f.sequential(); err != nil {
				return err
			}
			return runAB(cmd, app, f, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.a, "a", "", "flags added to the command on side A")
	fs.StringVar(&f.b, "b", "", "flags added to the command on side B")
	fs.StringVar(&f.aSetup, "a-setup", "", "shell command run before each A run")
	fs.StringVar(&f.bSetup, "b-setup", "", "shell command run before each B run")
	fs.StringVar(&f.aTeardown, "a-teardown", "", "shell command run after each A run")
	fs.StringVar(&f.bTearDn, "b-teardown", "", "shell command run after each B run")
	fs.StringVar(&f.labelA, "label-a", "", "name of side A in the report (default: its flags)")
	fs.StringVar(&f.labelB, "label-b", "", "name of side B in the report (default: its flags)")
	fs.IntVar(&f.repeat, "repeat", 1, "runs of each side, interleaved A B A B: every figure is then each side's median over its runs, and a difference is tested (4 or more a side let one be called significant, 6 or more give each median an interval)")
	// --runs was this flag's name before every command counted repeats as --repeat.
	alias(fs, "runs", "repeat")
	fs.BoolVar(&f.untilDecided, "until-decided", false, "add runs, a pair at a time, until a sequential test (whose 5 % false-difference rate holds over every look) decides on each run's headline figure, --repeat being the most runs a side (5 or more)")
	fs.StringVar(&f.margin, "margin", "5%", "with --until-decided, the difference either way under which the sides count as not different, once the ratio's interval is within it (0% never stops early for no difference)")
	fs.StringVar(&f.results, "results", "results", "directory that receives the A/B directory")
	fs.StringVar(&f.name, "name", "ab", "name of the A/B directory")
	groupOwnFlags(cmd, "Sides A and B", "a", "b", "label-a", "label-b", "a-setup", "a-teardown", "b-setup", "b-teardown")
	groupOwnFlags(cmd, "Until decided", "until-decided", "margin")
	groupFlagsInHelp(cmd, "")
	return cmd
}

func runAB(cmd *cobra.Command, app *App, f abFlags, base []string) error {
	ctx := cmd.Context()
	sideArgs := map[string][]string{}
	for side, s := range map[string]string{"a": f.a, "b": f.b} {
		words, err := splitWords(s)
		if err != nil {
			return usagef("--%s: %v", side, err)
		}
		sideArgs[side] = words
	}
	for _, a := range append(append([]string{}, sideArgs["a"]...), sideArgs["b"]...) {
		if a == "--results" || a == "--name" {
			return usagef("--a/--b: %s is set by dbio ab for each run", a)
		}
	}
	for _, a := range append(append(append([]string{}, base...), sideArgs["a"]...), sideArgs["b"]...) {
		if a == "--repeat" || strings.HasPrefix(a, "--repeat=") {
			// Each side's runs are ab's repeats, interleaved; a repeat set
			// inside a side would be read as one run.
			return usagef("--repeat: dbio ab repeats each side itself; give --repeat N before the --, not in the command or a side's flags")
		}
	}
	if err := os.MkdirAll(f.results, 0o755); err != nil {
		return err
	}
	dir := filepath.Join(f.results, app.Now().Format("20060102-150405")+"-"+f.name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("A/B directory: %w", err)
	}
	label := func(l, args string, fallback string) string {
		switch {
		case l != "":
			return l
		case args != "":
			return args
		}
		return fallback
	}
	// The labels go into ab.md, ab.json and the report: a DSN in --a or --b loses its password there.
	labelA, labelB := secret.RedactText(label(f.labelA, f.a, "A: "+f.aSetup)), secret.RedactText(label(f.labelB, f.b, "B: "+f.bSetup))
	setup := map[string][2]string{"a": {f.aSetup, f.aTeardown}, "b": {f.bSetup, f.bTearDn}}
	dirs := map[string][]string{}
	var failure error
	if need := analysis.RepeatsToTell(); f.repeat < need {
		// Said before the wait, not after it.
		fmt.Fprintf(app.Stdout, "note: with %s a side no difference can be called, however large: that takes %d a side (--repeat %d); the sides' figures are still measured and shown\n",
			plural(f.repeat, "run"), need, need)
	}
	design, err := f.sequential()
	if err != nil {
		return err
	}
	var seq *results.ABSequential
	if design != nil {
		seq = &results.ABSequential{Alpha: design.Alpha, MaxPerSide: design.MaxPerSide, MarginPct: 100 * f.marginFraction()}
	}
	started, finished := app.Now(), 0
loop:
	for i := 1; i <= f.repeat; i++ {
		for _, side := range []string{"a", "b"} {
			if ctx.Err() != nil {
				break loop
			}
			name := fmt.Sprintf("%s-%d", side, i)
			fmt.Fprintf(app.Stdout, "\n=== A/B run %d of %d, side %s ===\n", i, f.repeat, strings.ToUpper(side))
			if err := shell(ctx, app, setup[side][0], dir, name+"-setup"); err != nil {
				failure = fmt.Errorf("side %s setup: %w", strings.ToUpper(side), err)
				break loop
			}
			sideDir := filepath.Join(dir, name)
			args := append(append(append([]string{}, base...), sideArgs[side]...), "--results", sideDir, "--name", name)
			code := run(ctx, app, args)
			if terr := shell(ctx, app, setup[side][1], dir, name+"-teardown"); terr != nil && failure == nil {
				failure = fmt.Errorf("side %s teardown: %w", strings.ToUpper(side), terr)
			}
			found, _ := filepath.Glob(filepath.Join(sideDir, "*-"+name))
			dirs[side] = append(dirs[side], found...)
			if code == exitInterrupted {
				break loop
			}
			if code != exitOK {
				failure = fmt.Errorf("side %s run %d failed (exit %d): see its output above", strings.ToUpper(side), i, code)
				break loop
			}
			finished++
			fmt.Fprintf(app.Stdout, "\n%s %d/%d: %s%s\n", strings.ToUpper(side), i, f.repeat, runHeadline(found), abETA(app.Now().Sub(started), finished, 2*f.repeat))
		}
		if seq != nil && lookSequential(app, *design, f.marginFraction(), seq, dirs) {
			break
		}
	}
	if seq != nil && len(seq.Looks) > 0 {
		if err := writeSequential(dir, seq); err != nil && failure == nil {
			failure = err
		}
	}
	if len(dirs["a"]) > 0 && len(dirs["b"]) > 0 {
		if err := writeAB(app, dir, dirs, labelA, labelB); err != nil && failure == nil {
			failure = err
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: A/B results so far kept in %s", errInterrupted, dir)
	}
	return failure
}

// sequential is the design --until-decided asks for, nil without it.
func (f abFlags) sequential() (*stats.Sequential, error) {
	if !f.untilDecided {
		if f.margin != "5%" {
			return nil, usagef("--margin: applies only with --until-decided: add --until-decided or drop --margin")
		}
		return nil, nil
	}
	if m := f.marginFraction(); math.IsNaN(m) {
		return nil, usagef("--margin %q: give a percentage from 0%% to 50%%, e.g. 5%%", f.margin)
	}
	if f.repeat < 5 {
		return nil, usagef("--repeat %d: with --until-decided --repeat is the most runs a side, and the sequential test needs 5 or more to call a difference: give --repeat 10 (say)", f.repeat)
	}
	d, err := stats.NewSequential(stats.DefaultAlpha, f.repeat)
	if err != nil {
		return nil, usagef("--repeat %d: %v", f.repeat, err)
	}
	return &d, nil
}

// marginFraction is --margin as a fraction; NaN when it is not a
// percentage from 0 to 50.
func (f abFlags) marginFraction() float64 {
	s, ok := strings.CutSuffix(strings.TrimSpace(f.margin), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if !ok || err != nil || !(v >= 0 && v <= 50) {
		return math.NaN()
	}
	return v / 100
}

// lookSequential compares the sides' headline figures after a pair of
// runs, records the look in seq and says it, and whether the study is
// decided. A run without a headline figure ends the looks undecided.
func lookSequential(app *App, d stats.Sequential, margin float64, seq *results.ABSequential, dirs map[string][]string) bool {
	var vals [2][]float64
	for i, side := range []string{"a", "b"} {
		for _, dir := range dirs[side] {
			v, what, ok := runHeadlineValue(dir)
			if !ok {
				fmt.Fprintf(app.Stdout, "sequential: %s has no headline figure to judge; the study runs on to --repeat\n", dir)
				return false
			}
			if seq.Figure == "" {
				seq.Figure = what
			}
			vals[i] = append(vals[i], v)
		}
	}
	if len(vals[0]) == 0 || len(vals[1]) == 0 {
		return false
	}
	decided, err := analysis.LookSequential(d, margin, seq, vals[0], vals[1])
	if err != nil {
		fmt.Fprintf(app.Stdout, "sequential: %v\n", err)
		return false
	}
	last := seq.Looks[len(seq.Looks)-1]
	bound := "no difference can be called yet"
	if last.Bound != nil {
		bound = fmt.Sprintf("|Z| %.2f calls a difference", *last.Bound)
	}
	fmt.Fprintf(app.Stdout, "sequential: %s after %s a side: Z %.2f (%s): %s\n", seq.Figure, plural(last.N, "run"), last.Z, bound, seq.Verdict)
	return decided
}

// runHeadlineValue is a run's headline figure at its best step and what
// it is ("TPM at its best step").
func runHeadlineValue(dir string) (float64, string, bool) {
	l, err := results.Load(dir)
	if err != nil {
		return 0, "", false
	}
	return analysis.RunHeadline(l)
}

// writeSequential records what the sequential study decided in the A/B
// directory, beside ab.json.
func writeSequential(dir string, seq *results.ABSequential) error {
	b, err := json.MarshalIndent(seq, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, results.ABSequentialFile), append(b, '\n'), 0o644)
}

// writeAB compares the sides and writes ab.json, ab.md and the report
// (compare.html: the comparison of the sides' repeats, or of the two runs
// when each side ran once) into the A/B directory.
func writeAB(app *App, dir string, dirs map[string][]string, labelA, labelB string) error {
	res, err := report.WriteAB(filepath.Join(dir, "ab"), dirs["a"], dirs["b"], labelA, labelB)
	if err != nil {
		return err
	}
	fmt.Fprintf(app.Stdout, "\n== A/B: A %s vs B %s ==\n", labelA, labelB)
	if err := report.ABText(app.Stdout, res); err != nil {
		return err
	}
	html := filepath.Join(dir, "compare.html")
	var sets []report.Set
	for _, side := range []struct{ label, key string }{{labelA, "a"}, {labelB, "b"}} {
		runs, lerr := results.LoadAll(dirs[side.key])
		if lerr != nil {
			err = lerr
			break
		}
		sets = append(sets, report.Set{Label: side.label, Runs: runs})
	}
	if err == nil {
		err = writeABReport(app, report.OutputAt(html), sets)
	}
	if err != nil {
		fmt.Fprintf(app.Stdout, "warning: comparison report not written: %v\n", err)
	} else {
		fmt.Fprintf(app.Stdout, "report: %s\n", html)
	}
	fmt.Fprintf(app.Stdout, "table:  %s\n", filepath.Join(dir, "ab.md"))
	return nil
}

// writeABReport renders an A/B study's two sides to out: every figure of
// their repeats with its verdict, or the two runs side by side when each
// side ran once (Force: an A/B study compares its sides whatever they
// differ in). dbio ab writes it; dbio report re-renders it.
func writeABReport(app *App, out report.Output, sets []report.Set) error {
	opts := report.Options{Now: app.Now, Version: version(), Force: true, Titles: workloads().Title, SettingFlag: workloads().Flag}
	if report.AnyRepeated(sets) {
		_, err := report.WriteRepeatedComparison(out, sets, opts)
		return err
	}
	_, err := report.WriteComparison(out, []*results.Loaded{sets[0].Runs[0], sets[1].Runs[0]}, opts)
	return err
}

// runHeadline is a finished run's headline throughput at its best step,
// as the A/B line after each run says it ("37,614 TPM at 8 users").
func runHeadline(dirs []string) string {
	if len(dirs) == 0 {
		return "no results directory"
	}
	l, err := results.Load(dirs[0])
	if err != nil {
		return "results not readable: " + err.Error()
	}
	for _, h := range analysis.Headlines(analysis.NewRecorded(l)) {
		if len(h.Values) == 0 || h.Kind == "fio" {
			continue
		}
		return fmt.Sprintf("%s %s at %s", headlineNumber(h.Values[0]), h.Figures[0].Title, plural(h.Users, "user"))
	}
	return "no finished step"
}

// headlineNumber is a figure with its thousands grouped, or two decimals
// when it is small.
func headlineNumber(v float64) string {
	if math.Abs(v) >= 100 {
		return units.GroupThousands(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// abETA says how long the runs left take, at the pace of those done.
func abETA(elapsed time.Duration, done, total int) string {
	if done >= total || done == 0 {
		return ""
	}
	left := elapsed / time.Duration(done) * time.Duration(total-done)
	return fmt.Sprintf(" (%s left: about %s)", plural(total-done, "run"), left.Round(time.Second))
}

// plural is n with its noun, an s added for any n but one.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// shell runs a user's setup or teardown command and keeps its output beside the runs.
func shell(ctx context.Context, app *App, command, dir, name string) error {
	if strings.TrimSpace(command) == "" {
		return nil
	}
	res, err := app.Exec.Run(ctx, execx.Cmd{Name: "/bin/sh", Args: []string{"-c", command}})
	_ = os.WriteFile(filepath.Join(dir, name+".log"), append(res.Stdout, res.Stderr...), 0o644)
	if err != nil {
		return fmt.Errorf("%q: %w", command, err)
	}
	return nil
}

// splitWords splits flags the way a shell would for simple quoting: words
// separated by spaces, with '...' and "..." keeping spaces inside.
func splitWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote in %q", quote, s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}
