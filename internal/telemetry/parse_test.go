package telemetry

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name, in string
		want     kernelStat
		err      string
	}{
		{
			name: "linux 2.6.33+ with guest fields",
			in:   "cpu  6954 1 3412 94808 1578 2 215 3 7 0\ncpu0 1 0 0 0 0 0 0 0 0 0\ncpu1 1 0 0 0 0 0 0 0 0 0\nintr 1 2 3\n",
			want: kernelStat{cpu: cpuTimes{user: 6954, nice: 1, system: 3412, idle: 94808, iowait: 1578, irq: 2, softirq: 215, steal: 3}, cpus: 2},
		},
		{
			name: "old kernel without steal",
			in:   "cpu  10 0 5 100 2 0 0\ncpu0 10 0 5 100 2 0 0\n",
			want: kernelStat{cpu: cpuTimes{user: 10, system: 5, idle: 100, iowait: 2}, cpus: 1},
		},
		{name: "no cpu line", in: "intr 1 2\nctxt 3\n", err: `no "cpu" line`},
		{name: "short cpu line", in: "cpu  1 2 3\n", err: "has 4 fields"},
		{name: "garbage", in: "cpu  1 2 x 4 5 6 7 8\n", err: "field 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat(strings.NewReader(tt.in))
			checkErr(t, err, tt.err)
			if tt.err == "" && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseDiskstats(t *testing.T) {
	in := "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0\n" + // 14 fields: Linux < 4.18
		" 254       0 vda 39008 6638 1720194 14201 24387 13387 1990408 9547 1 7304 24517 9684 8 967640 445 4714 322\n" +
		" 253       1 dm-1 5 0 8 4294967295 0 0 0 0 0 4294967290 12 0 0 0 0\n"
	got, err := parseDiskstats(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []diskStat{
		{devNumber: "7:0", name: "loop0"},
		{devNumber: "254:0", name: "vda", reads: 39008, readBytes: 1720194 * 512, readMs: 14201, writes: 24387, writeByte: 1990408 * 512, writeMs: 9547, ioMs: 7304, weighted: 24517},
		{devNumber: "253:1", name: "dm-1", reads: 5, readBytes: 8 * 512, readMs: 4294967295, ioMs: 4294967290, weighted: 12},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	for _, bad := range []struct{ in, err string }{
		{" 8 0 sda 1 2 3\n", "line 1 has 6 fields"},
		{" 8 0 sda 1 2 3 4 5 6 7 8 9 10 x\n", "line 1 (sda) field 14"},
	} {
		_, err := parseDiskstats(strings.NewReader(bad.in))
		checkErr(t, err, bad.err)
	}
}

func TestParsePressure(t *testing.T) {
	tests := []struct {
		name, in string
		want     pressure
		err      string
	}{
		{
			name: "io",
			in:   "some avg10=10.46 avg60=6.58 avg300=2.84 total=14904207\nfull avg10=6.36 avg60=4.91 avg300=2.22 total=11733477\n",
			want: pressure{some: 14904207, full: 11733477, hasFull: true},
		},
		{name: "cpu before 5.13", in: "some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n", want: pressure{some: 42}},
		{name: "no total", in: "some avg10=0.00 avg60=0.00 avg300=0.00\n", err: "no total="},
		{name: "empty", in: "", err: `no "some" line`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePressure(strings.NewReader(tt.in))
			checkErr(t, err, tt.err)
			if tt.err == "" && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseTaskStat(t *testing.T) {
	tests := []struct {
		name, in string
		want     taskStat
		err      string
	}{
		{
			name: "dd from the fixture",
			in:   "9175 (dd) D 9142 9098 6657 0 -1 4194304 127 0 0 0 1 38 0 0 20 0 1 0 53791 3039232 452 18446744073709551615 94243364904960 0\n",
			want: taskStat{ticks: 39, start: 53791, threads: 1},
		},
		{
			name: "command name with spaces and parentheses",
			in:   "42 (a) b (c)) S 1 42 42 0 -1 0 0 0 0 0 250 50 0 0 20 0 4 0 1000 0 0\n",
			want: taskStat{ticks: 300, start: 1000, threads: 4},
		},
		{
			// Linux 6.18, with the 52 fields of Linux 5.0+: field 42 is the
			// thread's block-I/O delay.
			name: "a thread that waited for block I/O",
			in:   "1 (process_api) S 0 0 0 0 -1 4194560 21891 3939641 0 680 80 177 9464 4770 10 -10 12 0 14 41836544 3007 18446744073709551615 1 1 0 0 0 0 0 4096 1256 0 0 0 17 1 0 0 137 0 0 0 0 0 0 0 0 0 0\n",
			want: taskStat{ticks: 257, start: 14, threads: 12, blkio: 137, hasBlkio: true},
		},
		{name: "bad delay", in: "1 (a) S 0 0 0 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 14 0 0 0 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 x 0 0\n", err: "field 42"},
		{name: "no parenthesis", in: "42 bash S 1", err: "no ')'"},
		{name: "truncated", in: "42 (bash) S 1 2 3", err: "fields after the command name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTaskStat(strings.NewReader(tt.in))
			checkErr(t, err, tt.err)
			if tt.err == "" && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseTaskStatm(t *testing.T) {
	got, err := parseTaskStatm(strings.NewReader("765 423 395 5 0 123 0\n"))
	if err != nil || got != (taskMem{resident: 423, shared: 395}) {
		t.Errorf("got %+v, %v", got, err)
	}
	_, err = parseTaskStatm(strings.NewReader("765 423\n"))
	checkErr(t, err, "2 fields")
	_, err = parseTaskStatm(strings.NewReader("765 x 1\n"))
	checkErr(t, err, "resident")
}

func TestParseHostFiles(t *testing.T) {
	up, err := parseUptime(strings.NewReader("538.96 948.08\n"))
	if err != nil || up != 538.96 {
		t.Errorf("uptime: %v, %v", up, err)
	}
	load, err := parseLoadavg(strings.NewReader("4.85 2.07 0.83 6/175 13798\n"))
	if err != nil || load != 4.85 {
		t.Errorf("load average: %v, %v", load, err)
	}
	for _, bad := range []string{"", "4.85 2.07\n", "-1 0 0 1/1 1\n", "NaN 0 0 1/1 1\n", "x 0 0 1/1 1\n"} {
		if v, err := parseLoadavg(strings.NewReader(bad)); err == nil {
			t.Errorf("load average %q read as %v, want an error", bad, v)
		}
	}
	pids, err := parsePIDs(strings.NewReader("9178 9180 "))
	if err != nil || !reflect.DeepEqual(pids, []int{9178, 9180}) {
		t.Errorf("children: %v, %v", pids, err)
	}
	if pids, err := parsePIDs(strings.NewReader("")); err != nil || pids != nil {
		t.Errorf("no children: %v, %v", pids, err)
	}
	mem, err := parseMemTotal(strings.NewReader("MemTotal:       24731712 kB\nMemFree:        24055284 kB\n"))
	if err != nil || mem != 24731712*1024 {
		t.Errorf("meminfo: %v, %v", mem, err)
	}
	_, err = parseMemTotal(strings.NewReader("MemFree: 1 kB\n"))
	checkErr(t, err, "no MemTotal")

	arm := "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n\nprocessor\t: 1\nBogoMIPS\t: 50.00\n"
	model, n, err := parseCPUInfo(strings.NewReader(arm))
	if err != nil || model != "" || n != 2 {
		t.Errorf("arm64 cpuinfo: %q %d %v", model, n, err)
	}

	for in, want := range map[string]string{
		"NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n": "Debian GNU/Linux 12 (bookworm)",
		"# comment\nNAME=Fedora\nVERSION='40 (Server)'\n":                             "Fedora 40 (Server)",
		"PRETTY_NAME=\"say \\\"hi\\\"\"\n":                                            `say "hi"`,
	} {
		got, err := parseOSRelease(strings.NewReader(in))
		if err != nil || got != want {
			t.Errorf("os-release %q: got %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestParseSnapshots runs every parser on the captured files, so a format
// the parsers do not follow shows up with the file that has it.
func TestParseSnapshots(t *testing.T) {
	for _, snap := range []string{"t0", "t1"} {
		proc := filepath.Join("testdata", "snap", snap, "proc")
		must := func(rel string, parse func(*os.File) error) {
			t.Helper()
			f, err := os.Open(filepath.Join(proc, rel))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := parse(f); err != nil {
				t.Errorf("%s/%s: %v", snap, rel, err)
			}
		}
		must("stat", func(f *os.File) error {
			ks, err := parseStat(f)
			if err == nil && (ks.cpus != 2 || ks.cpu.total() == 0) {
				t.Errorf("%s stat: %+v", snap, ks)
			}
			return err
		})
		must("diskstats", func(f *os.File) error {
			ds, err := parseDiskstats(f)
			if err == nil && len(ds) == 0 {
				t.Errorf("%s diskstats: no devices", snap)
			}
			return err
		})
		for _, res := range []string{"cpu", "io", "memory"} {
			must("pressure/"+res, func(f *os.File) error { _, err := parsePressure(f); return err })
		}
		must("self/stat", func(f *os.File) error { _, err := parseTaskStat(f); return err })
		// statm, in pages, must agree with what status says in kB.
		status := statusKB(t, filepath.Join(proc, "self", "status"))
		must("self/statm", func(f *os.File) error {
			m, err := parseTaskStatm(f)
			if err == nil && (m.resident*4 != status["VmRSS"] || m.shared*4 != status["RssFile"]+status["RssShmem"]) {
				t.Errorf("%s self/statm %+v (4 kB pages) disagrees with status %v", snap, m, status)
			}
			return err
		})
	}
}

// statusKB reads the kB lines of a /proc/<pid>/status file.
func statusKB(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		key, val, _ := strings.Cut(line, ":")
		f := strings.Fields(val)
		if len(f) == 2 && f[1] == "kB" {
			n, _ := strconv.ParseUint(f[0], 10, 64)
			m[key] = n
		}
	}
	return m
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q does not contain %q", err, want)
	}
}
