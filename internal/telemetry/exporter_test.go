package telemetry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"dbio/internal/testenv"
)

func TestParsePromText(t *testing.T) {
	all := func(string) bool { return true }
	tests := []struct {
		name, in string
		want     []promSample
		err      string
	}{
		{
			name: "comments, labels and no labels",
			in: "# HELP node_load1 1m load average.\n# TYPE node_load1 gauge\nnode_load1 0.52\n" +
				`node_cpu_seconds_total{cpu="0",mode="idle"} 1.23456789e+06` + "\n\n",
			want: []promSample{{name: "node_load1", value: 0.52}, {name: "node_cpu_seconds_total", labels: map[string]string{"cpu": "0", "mode": "idle"}, value: 1234567.89}},
		},
		{
			name: "escapes, spaces, a trailing comma and a timestamp",
			in:   `m{ a = "x\"y\\z\nw" , b="}," , } 7 1700000000000` + "\n",
			want: []promSample{{name: "m", labels: map[string]string{"a": "x\"y\\z\nw", "b": "},"}, value: 7}},
		},
		{
			name: "special values",
			in:   "a NaN\nb +Inf\nc -Inf\n",
			want: []promSample{{name: "a", value: math.NaN()}, {name: "b", value: math.Inf(1)}, {name: "c", value: math.Inf(-1)}},
		},
		{name: "no value", in: "node_load1\n", err: "has no value"},
		{name: "bad value", in: "node_load1 abc\n", err: `value "abc" is not a number`},
		{name: "bad name", in: "1abc 3\n", err: "is not a metric name"},
		{name: "unclosed value", in: `m{a="x} 1` + "\n", err: "value not closed"},
		{name: "unquoted value", in: `m{a=x} 1` + "\n", err: "value not quoted"},
		{name: "missing comma", in: `m{a="x" b="y"} 1` + "\n", err: "want ',' or '}'"},
		{name: "too many fields", in: "m 1 2 3\n", err: "at most a timestamp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePromText(strings.NewReader(tt.in), all)
			checkErr(t, err, tt.err)
			if tt.err != "" {
				return
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				same := g.value == w.value || (math.IsNaN(g.value) && math.IsNaN(w.value))
				if g.name != w.name || !same || (len(g.labels) > 0 || len(w.labels) > 0) && !reflect.DeepEqual(g.labels, w.labels) {
					t.Errorf("sample %d: got %+v, want %+v", i, g, w)
				}
			}
		})
	}
	t.Run("only the names kept", func(t *testing.T) {
		got, err := parsePromText(strings.NewReader("a 1\nb{x=\"broken\n c 3\n"), func(n string) bool { return n != "b" })
		if err != nil || len(got) != 2 || got[1].name != "c" {
			t.Errorf("got %+v, %v", got, err)
		}
	})
}

// TestExporterPagesMatchGolden turns two real node exporter pages read one
// second apart (testdata/exporter, made by its capture.sh) into per-second
// points, watching every disk the page lists, and compares them with the
// golden file (go test ./internal/telemetry -run ExporterPages -update).
func TestExporterPagesMatchGolden(t *testing.T) {
	read := func(name string) (snapshot, []string) {
		f, err := os.Open(filepath.Join("testdata", "exporter", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s, disks, err := nodeSnapshot(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return s, disks
	}
	prev, _ := read("t0.prom")
	cur, disks := read("t1.prom")
	sort.Strings(disks)
	var devs []device
	for _, d := range disks {
		devs = append(devs, device{name: d, key: metricKey(d)})
	}
	if !cur.hasCPU || cur.cpus < 1 || cur.mem == nil || len(disks) == 0 {
		t.Fatalf("the page lacks CPU, memory or disks: %+v", cur)
	}
	pts := rates(prev, cur, 1, devs)
	var b strings.Builder
	fmt.Fprintf(&b, "cpus %d\n", cur.cpus)
	var share float64
	for _, p := range pts {
		fmt.Fprintf(&b, "%s %.6g\n", p.Name, p.Value)
		if strings.HasPrefix(p.Name, "cpu_") {
			share += p.Value
		}
	}
	if math.Abs(share-100) > 1e-9 {
		t.Errorf("the CPU shares add up to %v, want 100", share)
	}
	golden := filepath.Join("testdata", "exporter", "rates.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("points differ from %s:\n%s", golden, b.String())
	}
}

func TestPressureNames(t *testing.T) {
	for _, tt := range []struct{ in, res, kind string }{
		{"node_pressure_io_waiting_seconds_total", "io", "waiting"},
		{"node_pressure_memory_stalled_seconds_total", "memory", "stalled"},
		{"node_pressure_cpu_waiting_seconds_total", "cpu", "waiting"},
		{"node_pressure_irq_stalled_seconds_total", "", ""},
		{"node_pressure_io_waiting_seconds", "", ""},
	} {
		res, kind, ok := pressureOf(tt.in)
		if res != tt.res || kind != tt.kind || ok != (tt.res != "") {
			t.Errorf("%s: %q %q %v", tt.in, res, kind, ok)
		}
	}
}

// TestExporterReadsARealNodeExporter samples Debian's node exporter, run
// here on a free loopback port, as a fleet host's is: the CPU shares add
// up to 100, the disk behind the test's directory has its figures, memory
// is read, and an exporter that is not there is an error at Check and a
// warning while sampling.
func TestExporterReadsARealNodeExporter(t *testing.T) {
	addr, stop := startNodeExporter(t)
	ctx := t.Context()
	disk := diskOf(t, t.TempDir())
	e, err := NewExporter(ExporterOptions{URL: "http://" + addr + "/metrics", Devices: []string{disk, "nosuchdisk"}})
	if disk == "" {
		t.Logf("the test's directory is on no block device: no disk figures checked")
	}
	if err != nil {
		t.Fatal(err)
	}
	warnings, err := e.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "nosuchdisk") || (disk != "" && strings.Contains(warnings[0], "of "+disk)) {
		t.Errorf("warnings %q, want one naming nosuchdisk alone", warnings)
	}
	// The exporter's counters move in hundredths of a second: a fleet
	// point samples once a second, and so does this test.
	<-time.After(time.Second)
	_, pts := e.Sample(ctx)
	got := map[string]float64{}
	var share float64
	for _, p := range pts {
		got[p.Name] = p.Value
		if strings.HasPrefix(p.Name, "cpu_") && strings.HasSuffix(p.Name, "_pct") {
			share += p.Value
		}
	}
	if math.Abs(share-100) > 1e-6 {
		t.Errorf("CPU shares add up to %v: %v", share, got)
	}
	want := []string{"mem_used_mb", "mem_available_mb", "load_1m"}
	if disk != "" {
		key := "disk_" + metricKey(disk) + "_"
		want = append(want, key+"rps", key+"wps", key+"util_pct")
	}
	for _, name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("no %s in %v", name, got)
		}
	}
	if e.CPUs() < 1 {
		t.Errorf("%d CPUs", e.CPUs())
	}
	if w := e.Warnings(); len(w) != 0 {
		t.Errorf("warnings after good reads: %q", w)
	}

	stop()
	if _, pts := e.Sample(t.Context()); pts != nil {
		t.Errorf("a sample from a stopped exporter: %v", pts)
	}
	if w := e.Warnings(); len(w) != 1 || !strings.Contains(w[0], "read the node exporter failed once") {
		t.Errorf("warnings after a failed read: %q", w)
	}
	gone, _ := NewExporter(ExporterOptions{URL: "http://" + addr + "/metrics"})
	if _, err := gone.Check(t.Context()); err == nil {
		t.Error("Check of a stopped exporter passed")
	}
	if _, err := NewExporter(ExporterOptions{URL: "10.0.0.1:9100"}); err == nil {
		t.Error("a URL without a scheme was accepted")
	}
}

// startNodeExporter runs Debian's node exporter on a free port of this
// machine with the collectors dbio reads, until stop or the test's end.
func startNodeExporter(t *testing.T) (addr string, stop func()) {
	t.Helper()
	program := testenv.RequireProgram(t, "prometheus-node-exporter", "apt-get install -y prometheus-node-exporter", "/usr/bin", "/usr/sbin")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, program, "--web.listen-address="+addr, "--collector.disable-defaults",
		"--collector.cpu", "--collector.stat", "--collector.loadavg", "--collector.meminfo", "--collector.diskstats", "--collector.pressure")
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	stop = func() { cancel(); cmd.Wait() }
	t.Cleanup(stop)
	waitDial(t, addr)
	return addr, stop
}

// waitDial waits until addr accepts connections.
func waitDial(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // connection refused until it listens
	}
}

// diskOf is the kernel name of the disk behind dir, as /sys/dev/block has
// it (the partition's disk for a partition); "" when dir is on a file
// system without a block device.
func diskOf(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("stat", "-c", "%d", dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	var dev uint64
	fmt.Sscan(strings.TrimSpace(string(out)), &dev)
	major, minor := (dev>>8)&0xfff|(dev>>32)&^0xfff, dev&0xff|(dev>>12)&^0xff
	link, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", major, minor))
	if err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(link, "partition")); err == nil {
		link = filepath.Dir(link)
	}
	return filepath.Base(link)
}

// The sampler and the exporter count their failed reads alike: per
// source, how often, the last error, in name order; a nil error is none,
// and reset starts the count again.
func TestProblems(t *testing.T) {
	var p problems
	if w := p.warnings(); len(w) != 0 {
		t.Errorf("no failure: %q", w)
	}
	p.note("read uptime", nil)
	p.note("read uptime", errors.New("EIO"))
	p.note("read CPU times", errors.New("EACCES"))
	p.note("read uptime", errors.New("ENOENT"))
	want := []string{"read CPU times failed once, last: EACCES", "read uptime failed 2 times, last: ENOENT"}
	if got := p.warnings(); !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	p.reset()
	p.note("read uptime", errors.New("EIO"))
	if got := p.warnings(); !slices.Equal(got, []string{"read uptime failed once, last: EIO"}) {
		t.Errorf("after reset: %q", got)
	}
}

// A page past the size no node exporter's reaches is refused, not read
// cut short: what came after the limit would be lost without a word.
func TestExporterRefusesAnOversizedPage(t *testing.T) {
	real, err := os.ReadFile(filepath.Join("testdata", "exporter", "t1.prom"))
	if err != nil {
		t.Fatal(err)
	}
	padding := []byte("# " + strings.Repeat("x", 1021) + "\n")
	for _, c := range []struct {
		name     string
		pad      int // kB of comments after the real page
		oversize bool
	}{{"a node exporter's page", 0, false}, {"past the limit", maxPage>>10 + 1, true}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write(real)
			for range c.pad {
				w.Write(padding)
			}
		}))
		exp, err := NewExporter(ExporterOptions{URL: srv.URL + "/metrics"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = exp.Check(t.Context())
		srv.Close()
		if got := err != nil && strings.Contains(err.Error(), "larger than 16 MiB"); got != c.oversize {
			t.Errorf("%s: Check = %v, want refused as oversized: %v", c.name, err, c.oversize)
		}
		if !c.oversize && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
