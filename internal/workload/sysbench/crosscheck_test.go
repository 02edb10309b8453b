package sysbench

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"dbio/internal/engine"
	"dbio/internal/execx"
	"dbio/internal/metrics"
	"dbio/internal/stats"
	"dbio/internal/testenv"
	"dbio/internal/vusers"
	"dbio/internal/workload/sqlclient"
)

// report is the figures of one run, from either tool.
type report struct {
	tool                      string
	transactions, queries     int64
	tps, qps                  float64
	avgMS, p95MS              float64
	ignoredErrors, reconnects int64
	// clientCPUUS is the client's own CPU time (user + system) per
	// transaction, in µs: what the load generator costs the machine.
	clientCPUUS float64
	// systemCPUUS is the part of clientCPUUS spent in the kernel.
	systemCPUUS float64
	// switchesPerTx is the client's context switches (voluntary and
	// involuntary) per transaction: how often its threads slept or were
	// put off a CPU.
	switchesPerTx float64
	// syscallsPerTx is the client's system calls per transaction, counted
	// by perf when DBIO_CROSSCHECK_SYSCALLS=1 (0 otherwise).
	syscallsPerTx float64
	// calls are the system calls of countedCalls per transaction, in words.
	calls string
}

var (
	sbCount   = regexp.MustCompile(`^\s*(transactions|queries|ignored errors|reconnects):\s+(\d+)\s+\(([\d.]+) per sec\.\)`)
	sbLatency = regexp.MustCompile(`^\s*(min|avg|max|95th percentile):\s+([\d.]+)`)
)

// parseSysbench reads the report sysbench 1.0 prints at the end of a run.
func parseSysbench(r io.Reader) (report, error) {
	rep := report{tool: "sysbench"}
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if m := sbCount.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			rate, _ := strconv.ParseFloat(m[3], 64)
			switch m[1] {
			case "transactions":
				rep.transactions, rep.tps = n, rate
			case "queries":
				rep.queries, rep.qps = n, rate
			case "ignored errors":
				rep.ignoredErrors = n
			case "reconnects":
				rep.reconnects = n
			}
			seen[m[1]] = true
		} else if m := sbLatency.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			switch m[1] {
			case "avg":
				rep.avgMS = v
			case "95th percentile":
				rep.p95MS = v
			}
			seen[m[1]] = true
		}
	}
	for _, k := range []string{"transactions", "queries", "avg", "95th percentile"} {
		if !seen[k] {
			return rep, fmt.Errorf("sysbench report has no %q line", k)
		}
	}
	return rep, sc.Err()
}

// update rewrites the captured sysbench report and the golden parse of it
// from the next cross-check run: go test -run 'AgreesWithSysbench|ParseSysbench' -update.
var update = flag.Bool("update", false, "rewrite testdata from a real sysbench run")

const (
	capturedReport = "testdata/sysbench-1.0.20-oltp_read_write.txt"
	parsedGolden   = "testdata/sysbench-1.0.20-oltp_read_write.golden"
)

func (r report) String() string {
	return fmt.Sprintf("tool %s\ntransactions %d\nqueries %d\ntps %.2f\nqps %.2f\navg_ms %.2f\np95_ms %.2f\nignored_errors %d\nreconnects %d\n",
		r.tool, r.transactions, r.queries, r.tps, r.qps, r.avgMS, r.p95MS, r.ignoredErrors, r.reconnects)
}

func TestParseSysbench(t *testing.T) {
	if *update {
		t.Skip("rewriting testdata: the cross-check writes it")
	}
	b, err := os.ReadFile(capturedReport)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseSysbench(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(parsedGolden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("parsed:\n%s\nwant:\n%s", got, want)
	}
	if _, err := parseSysbench(strings.NewReader("FATAL: unable to connect\n")); err == nil {
		t.Error("a report without figures parsed without error")
	}
}

// crossCheckSeconds is how long each run of the cross-check lasts; the
// figures in docs/workloads.md come from longer runs. DBIO_CROSSCHECK_SECONDS,
// _THREADS, _WORKLOAD and _TABLE_SIZE change the run for such measurements.
func crossCheckSeconds() int {
	if s, err := strconv.Atoi(os.Getenv("DBIO_CROSSCHECK_SECONDS")); err == nil && s > 0 {
		return s
	}
	return 5
}

// TestAgreesWithSysbench runs Debian's sysbench and dbio's oltp_read_write
// against the same tables on a managed MariaDB and a managed PostgreSQL,
// with the same threads and duration, in turn (sysbench, dbio, sysbench,
// dbio: DBIO_CROSSCHECK_REPEATS rounds, 2 by default, 6 or more for a
// verdict: see findCPU) so that the repeats show the run-to-run noise, and
// reports both, with each client's own CPU
// and context switches per transaction. DBIO_CROSSCHECK_SOCKETS=both adds
// dbio with its sessions' sockets in Go's network poller (dbio-poller) and
// with blocking system calls (dbio-blocking) to each round, to measure one
// against the other. It asserts that every run produced sane figures; how close they come
// is recorded in docs/performance.md, not asserted, since timing on a
// shared machine is noisy.
func TestAgreesWithSysbench(t *testing.T) {
	bin := testenv.RequireProgram(t, "sysbench", testenv.InstallSysbench)
	engines := []string{"mariadb", "postgres"}
	if e := os.Getenv("DBIO_CROSSCHECK_ENGINE"); e != "" {
		engines = []string{e}
	}
	for _, name := range engines {
		t.Run(name, func(t *testing.T) { crossCheck(t, bin, instance(t, name)) })
	}
}

// sysbenchConnection is the part of sysbench's command line that reaches
// inst's database as dbio does (same user, database and socket or port).
func sysbenchConnection(t *testing.T, inst engine.Instance) []string {
	t.Helper()
	if inst.Driver() == "pgx" {
		cfg, err := pgx.ParseConfig(inst.DSN())
		if err != nil {
			t.Fatal(err)
		}
		// A host that is a directory is libpq's socket directory, which
		// sysbench's pgsql driver hands to libpq as it is.
		return []string{"--db-driver=pgsql", "--pgsql-host=" + cfg.Host, fmt.Sprintf("--pgsql-port=%d", cfg.Port),
			"--pgsql-user=" + cfg.User, "--pgsql-password=" + cfg.Password, "--pgsql-db=" + cfg.Database}
	}
	dsn, err := mysqldrv.ParseDSN(inst.DSN())
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--db-driver=mysql", "--mysql-user=" + dsn.User, "--mysql-password=" + dsn.Passwd, "--mysql-db=" + dsn.DBName}
	if dsn.Net == "unix" {
		return append(args, "--mysql-socket="+dsn.Addr)
	}
	host, port, _ := strings.Cut(dsn.Addr, ":")
	return append(args, "--mysql-host="+host, "--mysql-port="+port)
}

func crossCheck(t *testing.T, bin string, inst engine.Instance) {
	cfg := DefaultConfig()
	cfg.Tables, cfg.TableSize, cfg.Workload, cfg.RandType = 2, 10000, ReadWrite, "uniform"
	if n, err := strconv.Atoi(os.Getenv("DBIO_CROSSCHECK_TABLE_SIZE")); err == nil && n > 0 {
		cfg.TableSize = n
	}
	threadCounts := []int{4}
	if list := os.Getenv("DBIO_CROSSCHECK_THREADS"); list != "" {
		threadCounts = nil
		for _, f := range strings.Split(list, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				t.Fatalf("DBIO_CROSSCHECK_THREADS=%q: want thread counts like 1,4", list)
			}
			threadCounts = append(threadCounts, n)
		}
	}
	if wl := os.Getenv("DBIO_CROSSCHECK_WORKLOAD"); wl != "" {
		cfg.Workload = wl
	}
	seconds := crossCheckSeconds()
	w := prepare(t, inst, cfg)

	for _, threads := range threadCounts {
		crossCheckThreads(t, bin, inst, w, cfg, threads, seconds)
	}
	checks, err := w.Check(context.Background(), inst)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.Passed {
			t.Errorf("after both tools ran: %s: %s", c.Name, c.Detail)
		}
	}
}

// crossCheckThreads runs both tools in turn at one thread count, twice each.
func crossCheckThreads(t *testing.T, bin string, inst engine.Instance, w *Workload, cfg Config, threads, seconds int) {
	args := append([]string{cfg.Workload}, sysbenchConnection(t, inst)...)
	args = append(args, fmt.Sprintf("--tables=%d", cfg.Tables), fmt.Sprintf("--table-size=%d", cfg.TableSize),
		fmt.Sprintf("--threads=%d", threads), fmt.Sprintf("--time=%d", seconds), "--rand-type="+cfg.RandType,
		"--report-interval=0", "--percentile=95")
	password := ""
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "-password="); ok && strings.HasPrefix(k, "--") {
			password = v
		}
	}
	runSysbench := func() report {
		var before, after syscall.Rusage
		cmd := execx.Cmd{Name: bin, Args: append(slices.Clone(args), "run")}
		counts := ""
		if countSyscalls(t) {
			counts = filepath.Join(t.TempDir(), "perf")
			cmd = execx.Cmd{Name: "perf", Args: append(append(perfStat(counts), "--", bin), cmd.Args...)}
		}
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
		res, err := execx.Real{}.Run(context.Background(), cmd)
		if err != nil {
			t.Fatalf("sysbench: %v\n%s", err, res.Stdout)
		}
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
		rep, err := parseSysbench(strings.NewReader(string(res.Stdout)))
		if err != nil {
			t.Fatalf("%v:\n%s", err, res.Stdout)
		}
		rep.clientCPUUS, rep.systemCPUUS, rep.switchesPerTx = usagePerTx(before, after, rep.transactions)
		if counts != "" {
			rep.syscallsPerTx, rep.calls = perfCount(t, counts, rep.transactions)
		}
		if *update && cfg.Workload == ReadWrite && inst.Driver() != "pgx" {
			// The password is this test server's, and gone with it; keep it out anyway.
			out := string(res.Stdout)
			if password != "" {
				out = strings.ReplaceAll(out, password, "PASSWORD")
			}
			if err := os.WriteFile(capturedReport, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(parsedGolden, []byte(rep.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return rep
	}
	runDBIO := func() report { return runSessions(t, w, inst, threads, time.Duration(seconds)*time.Second) }
	// dbio-poller and dbio-blocking are dbio with every session's socket
	// read and written through Go's network poller, or with blocking
	// system calls, whichever the engine's sessions use by default.
	withSockets := func(name string, sockets sqlclient.Sockets) func() report {
		return func() report {
			w.sockets = sockets
			defer func() { w.sockets = sqlclient.SocketsByEngine }()
			r := runSessions(t, w, inst, threads, time.Duration(seconds)*time.Second)
			r.tool = "dbio-" + name
			return r
		}
	}
	runs := []func() report{runSysbench, runDBIO}
	if os.Getenv("DBIO_CROSSCHECK_SOCKETS") == "both" {
		runs = append(runs, withSockets("poller", sqlclient.SocketsPoller), withSockets("blocking", sqlclient.SocketsBlocking))
	}
	repeats := 2
	if n, err := strconv.Atoi(os.Getenv("DBIO_CROSSCHECK_REPEATS")); err == nil && n > 0 {
		repeats = n
	}

	// A warm-up lets the checkpoint after the load finish and fills the
	// buffer pool, so that neither tool's first run pays for them.
	runSessions(t, w, inst, threads, 2*time.Second)
	var reps []report
	for range repeats {
		for _, run := range runs {
			reps = append(reps, run())
		}
	}
	t.Logf("%s, %d tables x %d rows, %d threads, %d s per run, %s %s:", cfg.Workload, cfg.Tables, cfg.TableSize, threads, seconds, inst.Info().Engine, inst.Info().Version)
	t.Logf("%-11s %8s %9s %8s %8s %7s %14s %11s %12s %12s", "tool", "TPS", "QPS", "avg ms", "p95 ms", "errors", "client CPU/tx", "of it sys", "switches/tx", "syscalls/tx")
	for _, r := range reps {
		t.Logf("%-11s %8.1f %9.1f %8.2f %8.2f %7d %11.0f µs %8.0f µs %12.1f %12.1f", r.tool, r.tps, r.qps, r.avgMS, r.p95MS, r.ignoredErrors, r.clientCPUUS, r.systemCPUUS, r.switchesPerTx, r.syscallsPerTx)
	}
	for _, r := range reps {
		if r.calls != "" {
			t.Logf("%s system calls per transaction: %s", r.tool, r.calls)
		}
	}
	byTool := map[string][]report{}
	var tools []string
	for _, r := range reps {
		if byTool[r.tool] == nil {
			tools = append(tools, r.tool)
		}
		byTool[r.tool] = append(byTool[r.tool], r)
	}
	values := func(tool string, f func(report) float64) []float64 {
		var xs []float64
		for _, r := range byTool[tool] {
			xs = append(xs, f(r))
		}
		return xs
	}
	// figure summarises one figure of one tool's runs; the zero Summary
	// for a tool that did not run.
	figure := func(tool string, f func(report) float64) stats.Summary {
		sum, err := stats.Summarize(values(tool, f))
		if err != nil && !errors.Is(err, stats.ErrEmpty) {
			t.Fatalf("%s: %v", tool, err)
		}
		return sum
	}
	tps := func(r report) float64 { return r.tps }
	cpu := func(r report) float64 { return r.clientCPUUS }
	p95 := func(r report) float64 { return r.p95MS }
	for _, tool := range tools {
		c, sw := figure(tool, cpu), figure(tool, func(r report) float64 { return r.switchesPerTx })
		sc := figure(tool, func(r report) float64 { return r.syscallsPerTx })
		t.Logf("%s over %d runs: client CPU/tx median %.0f µs (%.0f to %.0f), TPS median %.1f, switches/tx median %.1f, syscalls/tx median %.1f",
			tool, c.N, c.Median, c.Min, c.Max, figure(tool, tps).Median, sw.Median, sc.Median)
	}
	sbTPS, dbTPS := figure("sysbench", tps).Median, figure("dbio", tps).Median
	sbCPU, dbCPU := figure("sysbench", cpu).Median, figure("dbio", cpu).Median
	// TPS and p95 as dbio's reports compare two configurations' repeats:
	// the U test, and a difference beyond each side's own range.
	tpsVerdict := ""
	for _, fig := range []struct {
		name string
		f    func(report) float64
	}{{"TPS", tps}, {"p95", p95}} {
		c, err := stats.Compare(values("sysbench", fig.f), values("dbio", fig.f), stats.Options{})
		if err != nil {
			t.Fatalf("%s: %v", fig.name, err)
		}
		t.Logf("dbio vs sysbench %s (medians of the runs): %+.1f %%, %s", fig.name, pct(c.B.Median, c.A.Median), c.Verdict)
		if fig.name == "TPS" {
			tpsVerdict = strings.ReplaceAll(c.Verdict.String(), " ", "-")
			if c.Verdict == stats.Different {
				tpsVerdict += "-dbio-" + c.Direction.String()
			}
		}
	}
	// Each run's ratio to the sysbench run before it, measured in the same minute.
	var ratios []float64
	for i, r := range reps {
		if r.tool == "dbio" && i > 0 && reps[i-1].tool == "sysbench" {
			ratios = append(ratios, r.clientCPUUS/reps[i-1].clientCPUUS)
		}
	}
	finding, err := findCPU(ratios)
	if err != nil {
		t.Fatalf("dbio / sysbench client CPU/tx ratios %v: %v", ratios, err)
	}
	t.Logf("dbio / sysbench client CPU/tx, round by round: %s", finding)
	extra := ""
	if pc, bc := figure("dbio-poller", cpu), figure("dbio-blocking", cpu); pc.N > 0 && bc.N > 0 {
		extra = fmt.Sprintf(" dbio_poller_cpu_us=%.0f dbio_blocking_cpu_us=%.0f", pc.Median, bc.Median)
		t.Logf("dbio's sockets: through the network poller %.2fx sysbench's client CPU/tx, blocking %.2fx; blocking %.2fx the poller's",
			pc.Median/sbCPU, bc.Median/sbCPU, bc.Median/pc.Median)
	}
	// One line for scripts/bench.sh, with the load average at its end.
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("BENCH engine=%s threads=%d sysbench_tps=%.1f dbio_tps=%.1f sysbench_cpu_us=%.0f dbio_cpu_us=%.0f cpu_ratio=%.2f%s %s tps_verdict=%s load=%s",
		inst.Info().Engine, threads, sbTPS, dbTPS, sbCPU, dbCPU, finding.ratios.Median, extra, finding.fields(), tpsVerdict, strings.Fields(string(load) + " -")[0])

	for _, r := range reps {
		if r.transactions <= 0 || r.tps <= 0 || r.avgMS <= 0 || r.p95MS < r.avgMS/10 {
			t.Errorf("%s produced no sane figures: %+v", r.tool, r)
		}
		// Both tools count every statement, BEGIN and COMMIT included (20 for oltp_read_write).
		reads, writes, other := w.QueriesPerTransaction()
		want := float64(reads + writes + other)
		if per := float64(r.queries) / float64(r.transactions); per < want-0.5 || per > want+0.5 {
			t.Errorf("%s: %.2f queries per transaction, want %.0f", r.tool, per, want)
		}
	}
}

// cpuFinding is what the rounds say of dbio's client CPU per transaction
// against sysbench's. Each round's ratio is dbio's over the sysbench run just
// before it, in the same minute, so that the machine's drift from round to
// round (sysbench's own TPS moves by a third on these machines) cancels
// out; the ratios are summarised by their median and its distribution-free
// confidence interval (stats.Summarize), and the verdict says where that
// interval lies against 1.
type cpuFinding struct {
	ratios  stats.Summary
	verdict cpuVerdict
}

// cpuVerdict places dbio's client CPU per transaction against sysbench's.
type cpuVerdict string

const (
	// cpuBelow: the interval of the median ratio lies under 1.
	cpuBelow cpuVerdict = "below"
	// cpuWithinNoise: the interval holds 1; the rounds cannot tell the
	// two clients apart.
	cpuWithinNoise cpuVerdict = "within-noise"
	// cpuAbove: the interval lies over 1, dbio costs more beyond the noise.
	cpuAbove cpuVerdict = "above"
	// cpuTooFewRounds: too few rounds for an interval (6 at 95 %).
	cpuTooFewRounds cpuVerdict = "too-few-rounds"
)

// findCPU judges the rounds' ratios of dbio's client CPU per transaction
// to sysbench's.
func findCPU(ratios []float64) (cpuFinding, error) {
	s, err := stats.Summarize(ratios)
	if err != nil {
		return cpuFinding{}, err
	}
	f := cpuFinding{ratios: s}
	// Judged on the bounds as printed, to the hundredth, so that a bound
	// shown as 1.00 never reads as below or above 1.
	hundredths := func(x float64) float64 { return math.Round(x*100) / 100 }
	switch iv := s.Interval; {
	case !iv.Available:
		f.verdict = cpuTooFewRounds
	case hundredths(iv.Hi) < 1:
		f.verdict = cpuBelow
	case hundredths(iv.Lo) > 1:
		f.verdict = cpuAbove
	default:
		f.verdict = cpuWithinNoise
	}
	return f, nil
}

func (f cpuFinding) String() string {
	s := f.ratios
	text := fmt.Sprintf("median %.2fx over %d rounds (%.2f to %.2f)", s.Median, s.N, s.Min, s.Max)
	if f.verdict == cpuTooFewRounds {
		return fmt.Sprintf("%s; %d rounds are too few to place the median (DBIO_CROSSCHECK_REPEATS=%d or more)", text, s.N, s.Interval.NeedN)
	}
	place := map[cpuVerdict]string{
		cpuBelow:       "below sysbench's beyond the noise",
		cpuWithinNoise: "within the noise of sysbench's",
		cpuAbove:       "above sysbench's beyond the noise",
	}[f.verdict]
	return fmt.Sprintf("%s; the median lies in %.2f to %.2f at %.1f %% confidence: %s",
		text, s.Interval.Lo, s.Interval.Hi, s.Interval.Confidence*100, place)
}

// fields is the finding as scripts/bench.sh reads it, in name=value words.
func (f cpuFinding) fields() string {
	s := f.ratios
	if f.verdict == cpuTooFewRounds {
		return fmt.Sprintf("cpu_rounds=%d cpu_finding=%s", s.N, f.verdict)
	}
	return fmt.Sprintf("cpu_rounds=%d cpu_ratio_lo=%.2f cpu_ratio_hi=%.2f cpu_finding=%s", s.N, s.Interval.Lo, s.Interval.Hi, f.verdict)
}

func TestFindCPU(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ratios []float64
		want   cpuVerdict
	}{
		{"five rounds give no interval", []float64{0.5, 0.6, 0.7, 0.8, 0.9}, cpuTooFewRounds},
		{"every round under 1", []float64{0.90, 0.95, 0.97, 0.93, 0.99, 0.92}, cpuBelow},
		{"every round over 1", []float64{1.05, 1.10, 1.02, 1.20, 1.01, 1.07}, cpuAbove},
		{"rounds on both sides of 1", []float64{0.96, 1.04, 1.10, 0.99, 1.02, 1.08}, cpuWithinNoise},
		{"one round at exactly 1 keeps it open", []float64{1.00, 1.04, 1.10, 1.03, 1.02, 1.08}, cpuWithinNoise},
		{"a bound printed as 1.00 keeps it open", []float64{0.72, 0.80, 0.83, 0.84, 0.90, 0.998}, cpuWithinNoise},
		// With 9 rounds the interval drops the extreme round on each side.
		{"one round alone under 1 of nine", []float64{0.80, 1.02, 1.03, 1.04, 1.05, 1.06, 1.07, 1.08, 1.09}, cpuAbove},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := findCPU(tc.ratios)
			if err != nil {
				t.Fatal(err)
			}
			if f.verdict != tc.want {
				t.Errorf("verdict %s, want %s (%s)", f.verdict, tc.want, f)
			}
			if !strings.Contains(f.fields(), "cpu_finding="+string(tc.want)) {
				t.Errorf("bench fields %q do not carry the verdict", f.fields())
			}
		})
	}
	if _, err := findCPU(nil); err == nil {
		t.Error("no rounds were judged without an error")
	}
}

func pct(x, base float64) float64 {
	if base == 0 {
		return 0
	}
	return (x/base - 1) * 100
}

// runSessions runs users sessions back to back for d, as the runner's step
// does, and reports the figures as sysbench would.
func runSessions(t *testing.T, w *Workload, inst engine.Instance, users int, d time.Duration) report {
	t.Helper()
	col := metrics.NewCollector(w.TxTypes())
	// A context that can be cancelled, as the runner's is: drivers watch it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var perf *exec.Cmd
	counts := ""
	if countSyscalls(t) {
		// perf counts every thread of this process, the sessions' and the
		// runtime's, until it is interrupted.
		counts = filepath.Join(t.TempDir(), "perf")
		perf = exec.Command("perf", append(perfStat(counts), "-p", strconv.Itoa(os.Getpid()))...)
		if err := perf.Start(); err != nil {
			t.Fatal(err)
		}
	}
	// The CPU is counted from before the sessions connect, as sysbench's
	// is (its whole process: connecting, preparing, running), and the
	// transactions from the moment they may start, as sysbench's --time.
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	// The sessions run as a step's do, through vusers, which gives each
	// its own P while it waits on its socket.
	group, err := vusers.Start(ctx, vusers.Users{N: users, Open: func(ctx context.Context, u int) (vusers.Session, error) {
		return w.NewSession(ctx, inst, u, col.NewRecorder())
	}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	time.Sleep(d)
	col.Tick()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	elapsed := time.Since(start)
	if perf != nil {
		perf.Process.Signal(os.Interrupt)
		perf.Wait()
	}
	c := col.StepTotals()[0]
	group.Stop()
	select {
	case err := <-group.Lost():
		t.Error(err)
	default:
	}
	reads, writes, other := w.QueriesPerTransaction()
	per := int64(reads + writes + other)
	lat := metrics.Summarize(c.Latency)
	rep := report{
		tool: "dbio", transactions: c.Committed, queries: c.Committed * per,
		tps: float64(c.Committed) / elapsed.Seconds(), qps: float64(c.Committed*per) / elapsed.Seconds(),
		avgMS: lat.MeanUS / 1000, p95MS: float64(lat.P95US) / 1000, ignoredErrors: c.Retries + c.Failed, reconnects: c.Reconnects,
	}
	rep.clientCPUUS, rep.systemCPUUS, rep.switchesPerTx = usagePerTx(before, after, c.Committed)
	if counts != "" {
		rep.syscallsPerTx, rep.calls = perfCount(t, counts, c.Committed)
	}
	return rep
}

// countSyscalls says whether the cross-check counts each client's system
// calls (DBIO_CROSSCHECK_SYSCALLS=1), with perf's raw_syscalls tracepoint:
// its own cost is small but not nothing, so such runs measure the calls,
// and runs without it the CPU.
func countSyscalls(t *testing.T) bool {
	if os.Getenv("DBIO_CROSSCHECK_SYSCALLS") != "1" {
		return false
	}
	testenv.RequireProgram(t, "perf", "apt-get install -y linux-perf")
	return true
}

// countedCalls are the system calls a client's round trip is made of,
// counted one by one beside the total: sending and receiving (read,
// write, sendto, recvfrom), waiting for the socket (poll, ppoll,
// epoll_wait, epoll_pwait) and threads waking each other (futex),
// sleeping (nanosleep) or yielding.
var countedCalls = []string{"read", "write", "sendto", "recvfrom", "poll", "ppoll", "epoll_wait", "epoll_pwait",
	"futex", "nanosleep", "clock_nanosleep", "sched_yield"}

// perfStat is perf stat's command line counting system calls into out.
func perfStat(out string) []string {
	events := "raw_syscalls:sys_enter"
	for _, c := range countedCalls {
		events += ",syscalls:sys_enter_" + c
	}
	return []string{"stat", "-x,", "-e", events, "-o", out}
}

// perfCount reads the counts perf stat -x, wrote to out: the total, and
// the calls of countedCalls that were made, per transaction.
func perfCount(t *testing.T, out string, txs int64) (total float64, calls string) {
	t.Helper()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 {
			continue
		}
		if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			counts[strings.TrimPrefix(f[2], "syscalls:sys_enter_")] = n
		}
	}
	n, ok := counts["raw_syscalls:sys_enter"]
	if !ok || txs == 0 {
		t.Fatalf("perf stat counted no system calls:\n%s", b)
	}
	for _, c := range countedCalls {
		if counts[c] > 0 {
			calls += fmt.Sprintf(" %s %.1f", c, float64(counts[c])/float64(txs))
		}
	}
	return float64(n) / float64(txs), strings.TrimSpace(calls)
}

// usagePerTx is the user and system CPU time between two samples per
// transaction, in µs, and the context switches per transaction.
func usagePerTx(before, after syscall.Rusage, txs int64) (cpuUS, systemUS, switches float64) {
	if txs == 0 {
		return 0, 0, 0
	}
	us := func(t syscall.Timeval) int64 { return t.Sec*1e6 + t.Usec }
	user, system := us(after.Utime)-us(before.Utime), us(after.Stime)-us(before.Stime)
	sw := func(r syscall.Rusage) int64 { return r.Nvcsw + r.Nivcsw }
	n := float64(txs)
	return float64(user+system) / n, float64(system) / n, float64(sw(after)-sw(before)) / n
}
