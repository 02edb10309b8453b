package telemetry

import (
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSample measures one Sample on the running system's /proc, and
// reports its CPU time as a share of one core at the 1 Hz the runner uses
// ("pct_core_at_1Hz"), which must stay under 1 %. The "server" cases add a
// process tree the size of PostgreSQL with 64 and 256 connections: the cost
// grows with the number of server processes. The "threads" case is a
// server of one process with 256 threads (MariaDB's shape: a thread per
// connection), whose threads' delays are read one by one. Delay
// accounting is switched on for the benchmark where it can be (as root),
// as a run switches it on, and set back afterwards.
func BenchmarkSample(b *testing.B) {
	if *benchDelays {
		delaysOn(b)
	}
	var disks []string
	if err := readWith(HostFS().proc("diskstats"), func(r io.Reader) error {
		all, err := parseDiskstats(r)
		for _, d := range all {
			if !strings.HasPrefix(d.name, "loop") && !strings.HasPrefix(d.name, "ram") {
				disks = append(disks, d.name)
			}
		}
		return err
	}); err != nil {
		b.Fatalf("read /proc/diskstats: %v", err)
	}

	b.Run("host", func(b *testing.B) {
		benchSample(b, Options{FS: HostFS(), Devices: disks, SelfChildren: true})
	})
	for _, n := range []int{64, 256} {
		b.Run("server"+strconv.Itoa(n), func(b *testing.B) {
			server := startTree(b, n)
			benchSample(b, Options{
				FS: HostFS(), Devices: disks, SelfChildren: true,
				ServerPIDs: func() []int { return []int{server} }, ServerChildren: true,
			})
		})
	}
	b.Run("threads256", func(b *testing.B) {
		server := startThreads(b, 256)
		benchSample(b, Options{
			FS: HostFS(), Devices: disks, SelfChildren: true,
			ServerPIDs: func() []int { return []int{server} }, ServerChildren: true,
		})
	})
}

// benchDelays lets BenchmarkSample run as a run without delay accounting
// does, to measure what reading the threads' delays adds.
var benchDelays = flag.Bool("delayacct", true, "BenchmarkSample: switch the kernel's delay accounting on where it can")

// delaysOn switches the kernel's delay accounting on until b ends, if it
// is off and may be switched; it says which way the benchmark ran.
func delaysOn(b *testing.B) {
	const sw = "/proc/sys/kernel/task_delayacct"
	was, err := os.ReadFile(sw)
	switch {
	case err != nil:
		b.Logf("delay accounting: %v; threads' delays not read", err)
	case strings.TrimSpace(string(was)) == "1":
		b.Log("delay accounting: on")
	case os.WriteFile(sw, []byte("1\n"), 0o644) != nil:
		b.Log("delay accounting: off and cannot be switched on; threads' delays not read")
	default:
		b.Log("delay accounting: switched on for the benchmark")
		b.Cleanup(func() {
			if err := os.WriteFile(sw, was, 0o644); err != nil {
				b.Errorf("set %s back to %s: %v", sw, strings.TrimSpace(string(was)), err)
			}
		})
	}
}

// startThreads starts a process of n+1 threads, standing in for a server
// with a thread per connection: this test binary, asked to hold them
// (TestMain), stopped when b ends.
func startThreads(b *testing.B, n int) int {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdThreadsEnv+"="+strconv.Itoa(n))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start a threaded process: %v", err)
	}
	b.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// It says when its threads exist.
	if _, err := io.ReadFull(out, make([]byte, 1)); err != nil {
		b.Fatalf("the threaded process did not start its threads: %v", err)
	}
	return cmd.Process.Pid
}

func benchSample(b *testing.B, o Options) {
	s, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	s.Sample(now)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(time.Second)
		if len(s.Sample(now)) == 0 {
			b.Fatal("no points")
		}
	}
	b.StopTimer()
	c := s.Cost()
	perSample := float64(c.CPU.Nanoseconds()) / float64(c.Samples)
	share := perSample / 1e9 * 100 // CPU time per second of wall time, in % of one core
	b.ReportMetric(perSample, "cpu-ns/op")
	b.ReportMetric(share, "pct_core_at_1Hz")
	if share >= 1 {
		b.Errorf("the sampler costs %.2f %% of a core at 1 Hz, over the 1 %% budget (%.0f µs of CPU a sample, %.0f µs of wall time)",
			share, perSample/1e3, float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3)
	}
}

// startTree starts a shell with n sleeping children, standing in for a
// database server's process tree, and stops the whole group when b ends.
func startTree(b *testing.B, n int) int {
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt "+strconv.Itoa(n)+" ]; do sleep 300 & i=$((i+1)); done; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start a process tree: %v", err)
	}
	pgid := cmd.Process.Pid
	b.Cleanup(func() {
		syscall.Kill(-pgid, syscall.SIGKILL) // the group this benchmark created, and nothing else
		cmd.Wait()
	})
	// Wait until the children exist, so every iteration sees the full tree.
	fs := HostFS()
	var files heldFiles
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		found := children(fs, &files, strconv.Itoa(pgid), tasks(fs, strconv.Itoa(pgid), 0))
		files.sweep()
		if len(found) == n {
			return pgid
		}
	}
	b.Fatalf("the process tree did not reach %d children", n)
	return 0
}

// BenchmarkExporterPage measures what a fleet run spends per host and per
// second on a node exporter's page once it has arrived: parsing the
// captured page (testdata/exporter/t1.prom, the collectors testfleet
// runs) and computing the second's points, as "pct_core_at_1Hz" per host.
func BenchmarkExporterPage(b *testing.B) {
	page, err := os.ReadFile("testdata/exporter/t1.prom")
	if err != nil {
		b.Fatal(err)
	}
	prev, _, err := nodeSnapshot(bytes.NewReader(page))
	if err != nil {
		b.Fatal(err)
	}
	devs := []device{{name: "vda", key: "vda"}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cur, _, err := nodeSnapshot(bytes.NewReader(page))
		if err != nil {
			b.Fatal(err)
		}
		rates(prev, cur, 1, devs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e7, "pct_core_at_1Hz")
}
