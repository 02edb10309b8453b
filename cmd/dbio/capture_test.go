package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dbio/internal/blocktrace"
	"dbio/internal/capture"
	"dbio/internal/replay"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// TestCaptureAndReplayRefuseBadInput: each refusal is one line naming the
// problem, exit code 2, and nothing written, neither results nor dbio's
// directory on the target.
func TestCaptureAndReplayRefuseBadInput(t *testing.T) {
	dir := t.TempDir()
	// A capture of a gigabyte's span, more than the small target holds.
	capDir := filepath.Join(dir, "cap")
	if err := os.Mkdir(capDir, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := blocktrace.Trace{
		Devices: []blocktrace.Device{{Name: "sdb", Major: 8, Minor: 16}}, Processes: []string{"db"}, Duration: time.Second,
		Requests: []blocktrace.Request{
			{Op: blocktrace.Read, Size: 8192, Latency: time.Millisecond, Depth: 1},
			{At: time.Millisecond, Op: blocktrace.Write, Offset: 1 << 30, Size: 8192, Latency: time.Millisecond, Depth: 1},
		},
	}
	if err := capture.WriteDir(capDir, capture.Record{Kind: capture.Kind, Version: 1}, tr); err != nil {
		t.Fatal(err)
	}
	// A capture of one request, and a target another run holds.
	oneDir := filepath.Join(dir, "one")
	if err := os.Mkdir(oneDir, 0o755); err != nil {
		t.Fatal(err)
	}
	one := tr
	one.Requests = tr.Requests[:1]
	if err := capture.WriteDir(oneDir, capture.Record{Kind: capture.Kind, Version: 1}, one); err != nil {
		t.Fatal(err)
	}
	held := t.TempDir()
	ht, err := target.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := ht.Lock(target.HostFS(), target.Holder{PID: os.Getpid(), Command: []string{"dbio", "tpcc"}})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	small := smallfs.Mount(t, 64<<20)
	regular := filepath.Join(dir, "file")
	if err := os.WriteFile(regular, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "results")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"capture", "--device", regular, "--duration", "1s"}, "is not a block device"},
		{[]string{"capture", "--target", "/proc", "--duration", "1s"}, "no block device to trace"},
		{[]string{"capture", "--target", dir, "--duration", "0s"}, "--duration must be positive"},
		{[]string{"capture", "--duration", "1s"}, "give the device to capture"},
		{[]string{"replay", capDir, "--target", "/dev/null"}, "is a device node"},
		{[]string{"replay", capDir, "--target", small}, "free but the replay's working file needs 1.0 GiB"},
		{[]string{"replay", dir, "--target", small}, "is not a capture"},
		{[]string{"replay", capDir, "--target", small, "--pace", "fast"}, `--pace "fast"`},
		{[]string{"replay", capDir, "--target", small, "--speed", "0"}, "--speed 0 must be above 0"},
		{[]string{"replay", oneDir, "--target", held}, "is in use by another dbio run"},
		{[]string{"replay", oneDir, "--target", small, "--limit", "wiops=10"}, "cannot be throttled"},
		{[]string{"replay", oneDir, "--target", small, "--limit", "fast"}, "--limit: limit \"fast\""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			code := run(context.Background(), testApp(&out), append(tc.args, "--results", res))
			if code != exitUsage || !strings.Contains(out.String(), tc.want) {
				t.Errorf("exit code %d, output %q; want %d and %q", code, out.String(), exitUsage, tc.want)
			}
		})
	}
	for _, p := range []string{res, filepath.Join(small, "dbio")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was written for bad input (%v)", p, err)
		}
	}
}

// TestCaptureRefusesWhatItCannotTrace: dbio capture (and --capture) by a
// user other than root, and a capture whose tracing cannot be set up,
// end with exit code 2 and one line saying why, writing nothing.
func TestCaptureRefusesWhatItCannotTrace(t *testing.T) {
	testenv.Require(t, os.Geteuid() == 0, "root", testenv.HowRoot)
	disk := smallfs.MountDisk(t, 64<<20)
	// The results would go where anyone may write, so that only dbio's
	// refusal keeps them from being written.
	open := t.TempDir()
	for _, d := range []string{filepath.Dir(open), open} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	res := filepath.Join(open, "results")
	t.Run("not root", func(t *testing.T) {
		nobody, err := user.Lookup("nobody")
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(nobody.Uid)
		gid, _ := strconv.Atoi(nobody.Gid)
		// This test binary, copied where nobody may run it, runs as
		// dbio (TestMain).
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(open, "dbio.test")
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"capture", "--target", disk, "--duration", "1s"},
			{"tpcc", "--engine", "sqlite", "--target", open, "--warehouses", "1", "--users", "1", "--runtime", "1s", "--capture"},
		} {
			cmd := exec.Command(bin, append(args, "--results", res)...)
			cmd.Env = append(os.Environ(), asDBIOEnv+"=1")
			cmd.Dir = open
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(out), "needs root") {
				t.Errorf("%v as nobody: exit code %d, output %q; want %d and a refusal naming root", args, code, out, exitUsage)
			}
		}
	})
	t.Run("no tracing", func(t *testing.T) {
		// A tracing file system that is a regular file cannot be mounted.
		notDir := filepath.Join(t.TempDir(), "tracing")
		if err := os.WriteFile(notDir, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		code := run(context.Background(), testApp(&out), []string{"capture", "--target", disk, "--duration", "1s", "--tracefs", notDir, "--results", res})
		if code != exitUsage || !strings.Contains(out.String(), "cannot be mounted there") {
			t.Errorf("exit code %d, output %q; want %d and the tracing file system named", code, out.String(), exitUsage)
		}
	})
	for _, p := range []string{res, filepath.Join(disk, "dbio"), filepath.Join(open, "dbio")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was written for a refused capture (%v)", p, err)
		}
	}
}

// captureSuite is SQLite's TPC-C on a loop device's ext4 with its steps'
// block I/O captured (the capture key, as tpcc --capture).
const captureSuite = `name = "capture"
[targets.disk]
path = "%DISK%"
[engines.e]
engine = "sqlite"
[workloads.w]
kind = "tpcc"
warehouses = 1
users = [2]
ramp_time = "0s"
runtime = "3s"
[[runs]]
name = "captured"
workload = "w"
engine = "e"
data = "disk"
capture = true
`

// TestSuiteCaptureReplays: a suite's run with capture = true on SQLite on
// a loop device's ext4 records its steps' block I/O into the run's results
// directory; dbio replay of that directory plays it, and dbio compare and
// dbio replays set the run (as its capture) beside the replay. --capture
// refuses a server of the user's with exit 2, writing nothing.
func TestSuiteCaptureReplays(t *testing.T) {
	t.Parallel()
	testenv.Require(t, os.Geteuid() == 0, "root", "run the test as root")
	testenv.RequireProgram(t, "fio", "apt-get install fio")
	disk := smallfs.MountDisk(t, 384<<20)
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	file := filepath.Join(dir, "capture.toml")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(captureSuite, "%DISK%", disk)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"suite", file, "--results", res}); code != exitOK {
		t.Fatalf("exit code %d: %s", code, out.String())
	}
	runs, _ := filepath.Glob(filepath.Join(res, "*-suite-capture", "*-captured"))
	if len(runs) != 1 {
		t.Fatalf("results %v\n%s", runs, out.String())
	}
	rec, tr, err := capture.Load(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if rec.Signature.Writes.Requests == 0 || len(tr.Requests) != rec.Requests {
		t.Fatalf("the capture of the steps holds %d requests, %d writes", len(tr.Requests), rec.Signature.Writes.Requests)
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"replay", runs[0], "--target", t.TempDir(), "--results", res, "--name", "replayed"}); code != exitOK {
		t.Fatalf("replay: exit code %d: %s", code, out.String())
	}
	replays, _ := filepath.Glob(filepath.Join(res, "*-replayed"))
	if len(replays) != 1 {
		t.Fatalf("replays %v", replays)
	}
	out.Reset()
	if code := run(context.Background(), testApp(&out), []string{"replays", runs[0], replays[0], "--markdown"}); code != exitOK ||
		!strings.Contains(out.String(), "| source |") || !strings.Contains(out.String(), "captured") {
		t.Errorf("dbio replays of the run and its replay: exit code %d, want the run as the source:\n%s", code, out.String())
	}
	out.Reset()
	page := filepath.Join(dir, "compare.html")
	if code := run(context.Background(), testApp(&out), []string{"compare", runs[0], replays[0], "-o", page}); code != exitOK {
		t.Fatalf("dbio compare of the run and its replay: exit code %d:\n%s", code, out.String())
	}
	if md, err := os.ReadFile(filepath.Join(dir, "compare.md")); err != nil || !strings.Contains(string(md), "| source |") {
		t.Errorf("the comparison's summary does not set the run as the source beside its replay (%v):\n%s", err, md)
	}
	out.Reset()
	other := filepath.Join(t.TempDir(), "results")
	code := run(context.Background(), testApp(&out), []string{"tpcc", "--dsn", "postgres://u@localhost/db", "--capture", "--results", other})
	if code != exitUsage || !strings.Contains(out.String(), "--capture traces the devices under the server dbio starts") {
		t.Errorf("--capture with --dsn: exit code %d, %q", code, out.String())
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("--capture with --dsn wrote %s (%v)", other, err)
	}
}

// TestCaptureFidelity is the capture's and the replay's fidelity on one
// capture of a managed PostgreSQL's TPC-C (1 warehouse, 4 users, 8 s) on
// a loop device's ext4: the capture's requests and bytes per direction
// agree with the device's /proc/diskstats within 2 %; its replay at the
// recorded pace on the same device gives per-second write IOPS within
// 10 % of the capture's (the median over the whole seconds from the first
// request of each second's difference) and a write p99 within 10x;
// capped at a quarter of the write IOPS the device counted, the replay
// falls behind and says so; on tmpfs it keeps up with lower latency, and
// as fast as possible it takes less than the capture's time.
func TestCaptureFidelity(t *testing.T) {
	testenv.Require(t, os.Geteuid() == 0, "root", testenv.HowRoot)
	testenv.RequireProgram(t, "fio", testenv.InstallFio)
	testenv.RequireEngine(t, "postgres")
	// The replays are judged by their timing.
	testenv.QuietMachine(t)
	// Room for the database and the replay's working file on the same
	// device. The file spans the blocks the capture wrote, from the
	// database's near the start to ext4's journal in the middle: on 1 GiB
	// that span (558 MiB once on CI) can outgrow what the database leaves
	// free, while on 2 GiB the free space grows twice as fast as the span.
	disk := smallfs.MountDisk(t, 2<<30)
	res := filepath.Join(t.TempDir(), "results")
	var out bytes.Buffer
	if code := run(context.Background(), testApp(&out), []string{"tpcc", "--engine", "postgres", "--target", disk, "--warehouses", "1",
		"--users", "4", "--ramp-time", "0s", "--runtime", "8s", "--skip-checks", "--capture", "--results", res, "--name", "captured"}); code != exitOK {
		t.Fatalf("exit code %d: %s", code, out.String())
	}
	runs, _ := filepath.Glob(filepath.Join(res, "*-captured"))
	if len(runs) != 1 {
		t.Fatalf("results %v", runs)
	}
	capDir := runs[0]
	rec, tr, err := capture.Load(capDir)
	if err != nil {
		t.Fatal(err)
	}
	s, ds := rec.Signature, rec.Devices[0].Stats
	t.Logf("capture: %.2f s, %d reads %d B, %d writes %d B, %d flushes, %d empty writes; diskstats: %d reads %d B, %d writes %d B, %d flushes",
		rec.DurationSeconds, s.Reads.Requests, s.Reads.Bytes, s.Writes.Requests, s.Writes.Bytes, s.Flushes.Requests, rec.EmptyWrites,
		ds.Reads, ds.ReadSectors*512, ds.Writes, ds.WriteSectors*512, ds.Flushes)
	if rec.LostEvents != 0 || s.Writes.Requests < 1000 || s.Flushes.Requests < 100 {
		t.Fatalf("the capture lost %d events or saw too little of TPC-C to judge: %d writes, %d flushes", rec.LostEvents, s.Writes.Requests, s.Flushes.Requests)
	}
	for _, c := range []struct {
		what        string
		trace, disk int64
	}{
		// The database is in PostgreSQL's buffers and the page cache
		// after its load: reads are few or none, and then the same.
		{"read requests", s.Reads.Requests, ds.Reads},
		{"read bytes", s.Reads.Bytes, ds.ReadSectors * 512},
		{"write requests", s.Writes.Requests + int64(rec.EmptyWrites), ds.Writes},
		{"write bytes", s.Writes.Bytes, ds.WriteSectors * 512},
	} {
		if math.Abs(float64(c.trace-c.disk)) > 0.02*float64(c.disk) {
			t.Errorf("%s: capture %d, /proc/diskstats %d: more than 2 %% apart", c.what, c.trace, c.disk)
		}
	}

	replayed := func(t *testing.T, target, name string, args ...string) replay.Record {
		t.Helper()
		var out bytes.Buffer
		if code := run(context.Background(), testApp(&out), append([]string{"replay", capDir, "--target", target, "--results", res, "--name", name}, args...)); code != exitOK {
			t.Fatalf("replay %s: exit code %d: %s", name, code, out.String())
		}
		dirs, _ := filepath.Glob(filepath.Join(res, "*-"+name))
		if len(dirs) != 1 {
			t.Fatalf("replay %s: results %v", name, dirs)
		}
		r, err := replay.Load(dirs[0])
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.2f s for the source's %.2f s, %.1f writes/s, write p50 %.0f µs p99 %.0f µs, sync p99 %.0f µs, %d lanes, kept up %v; %s",
			name, r.RuntimeSeconds, r.ExpectedSeconds, r.Writes.PerSecond, r.Writes.Latency.P50, r.Writes.Latency.P99, r.Syncs.Latency.P99,
			r.Log.Lanes, r.KeptUp, strings.TrimSpace(strings.Split(lastLines(out.String(), 2), "\n")[0]))
		return r
	}
	// The fidelity check runs alone: the replays after it share the machine.
	same := replayed(t, disk, "same")
	// Both sets of seconds begin at the first request's issue and count
	// the writes that completed in each, as the replay's are read.
	var capSeconds, sameSeconds, apart []float64
	for _, r := range tr.Requests {
		if r.Op != blocktrace.Write || r.Size == 0 {
			continue
		}
		end := r.At - tr.Requests[0].At
		if r.Completed() {
			end += r.Latency
		}
		i := int(end / time.Second)
		for len(capSeconds) <= i {
			capSeconds = append(capSeconds, 0)
		}
		capSeconds[i]++
	}
	for _, x := range same.Seconds {
		sameSeconds = append(sameSeconds, x.WriteIOPS)
	}
	// The last second is partial; the rest are compared one by one. On a
	// busy machine a lane may stall for a fraction of a second and catch
	// up in the next (each request waits for its instant, not for the one
	// before it): two seconds apart by as much either way, the others
	// matched. Eight seconds keep the median on the matched ones.
	for i := 0; i < len(capSeconds)-1 && i < len(sameSeconds)-1; i++ {
		apart = append(apart, math.Abs(sameSeconds[i]-capSeconds[i])/capSeconds[i])
	}
	slices.Sort(apart)
	t.Logf("per-second write IOPS from the first request: capture %v, replay on the same device %v; capture write p50 %.0f µs p99 %.0f µs, flush p99 %.0f µs",
		capSeconds, sameSeconds, s.Writes.Latency.P50, s.Writes.Latency.P99, s.Flushes.Latency.P99)
	if len(apart) < 6 {
		t.Fatalf("%d whole seconds to compare: too few", len(apart))
	}
	t.Logf("the seconds' differences, smallest first: %.3f; median %.1f %%", apart, 100*apart[len(apart)/2])
	if m := apart[len(apart)/2]; m > 0.1 {
		t.Errorf("replay on the same device: its seconds' write IOPS are a median %.0f %% from the capture's (%v), more than 10 %%", 100*m, apart)
	}
	if p, c := same.Writes.Latency.P99, s.Writes.Latency.P99; p > 10*c || p < c/10 {
		t.Errorf("replay on the same device: write p99 %.0f µs, the capture's %.0f µs: not of the same order", p, c)
	}
	if same.Writes.Requests != s.Writes.Requests {
		t.Errorf("replay on the same device: %d writes, the capture's %d", same.Writes.Requests, s.Writes.Requests)
	}

	t.Run("candidates", func(t *testing.T) {
		t.Run("capped", func(t *testing.T) {
			t.Parallel()
			// blkio counts the replay's fdatasyncs among its writes, as
			// /proc/diskstats counts the flushes' empty writes.
			wiops := int64(float64(ds.Writes) / rec.DurationSeconds / 4)
			r := replayed(t, disk, "capped", "--limit", fmt.Sprintf("wiops=%d", wiops))
			if r.KeptUp || r.BehindSeconds < r.ExpectedSeconds {
				t.Errorf("capped at %d write IOPS, a quarter of the capture's: kept up %v, %.2f s behind the source's %.2f s", wiops, r.KeptUp, r.BehindSeconds, r.ExpectedSeconds)
			}
		})
		t.Run("tmpfs", func(t *testing.T) {
			t.Parallel()
			fast := smallfs.Mount(t, 2*replay.Need(tr)+(64<<20))
			r := replayed(t, fast, "tmpfs")
			if !r.KeptUp || r.Writes.Latency.P50 >= s.Writes.Latency.P50 || r.Writes.Latency.Mean >= s.Writes.Latency.Mean {
				t.Errorf("on tmpfs: kept up %v (%.2f s behind), write p50 %.0f µs and mean %.0f µs against the capture's %.0f µs and %.0f µs",
					r.KeptUp, r.BehindSeconds, r.Writes.Latency.P50, r.Writes.Latency.Mean, s.Writes.Latency.P50, s.Writes.Latency.Mean)
			}
			m := replayed(t, fast, "tmpfs-max", "--pace", "max")
			if m.RuntimeSeconds >= rec.DurationSeconds {
				t.Errorf("as fast as possible on tmpfs: %.2f s, the capture took %.2f s", m.RuntimeSeconds, rec.DurationSeconds)
			}
		})
	})
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
