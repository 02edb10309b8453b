package telemetry

import (
	"bytes"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The fuzz targets below feed the /proc parsers what a broken or hostile
// kernel interface, a container's fake /proc or a truncated read could
// return. Their seeds are the captured snapshots in testdata/snap, so `go
// test` runs them as ordinary tests. Each asserts what the sampler relies
// on: a parse either fails or gives counters that add up without wrapping,
// and the rates made from two readings are finite, not negative, and
// percentages stay within 0-100.

// snapSeed reads a captured /proc file of snapshot t0 or t1.
func snapSeed(f *testing.F, snap, rel string) []byte {
	f.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "snap", snap, rel))
	if err != nil {
		f.Fatal(err)
	}
	return b
}

func addSnapSeeds(f *testing.F, rel string, more ...string) {
	f.Helper()
	for _, s := range []string{"t0", "t1"} {
		f.Add(snapSeed(f, s, rel))
	}
	for _, m := range more {
		f.Add([]byte(m))
	}
}

func FuzzParseStat(f *testing.F) {
	addSnapSeeds(f, "proc/stat", "cpu  10 0 5 100 2 0 0\ncpu0 10 0 5 100 2 0 0\n", "intr 1\n",
		"cpu  18446744073709551615 1 0 0 0 0 0 0\n") // a total that would wrap
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := parseStat(bytes.NewReader(data))
		if err != nil {
			return
		}
		if ks.cpus < 1 {
			t.Errorf("%d CPUs", ks.cpus)
		}
		c := ks.cpu
		var sum uint64
		for _, v := range []uint64{c.user, c.nice, c.system, c.idle, c.iowait, c.irq, c.softirq, c.steal} {
			var carry uint64
			sum, carry = bits.Add64(sum, v, 0)
			if carry != 0 {
				t.Fatalf("accepted CPU times whose total wraps: %+v", c)
			}
		}
	})
}

func FuzzParseDiskstats(f *testing.F) {
	addSnapSeeds(f, "proc/diskstats", "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0\n",
		" 8 0 sda 1 0 36028797018963968 0 0 0 0 0 0 0 0\n") // 2^55 sectors: bytes would wrap
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseDiskstats(bytes.NewReader(data))
		if err != nil {
			return
		}
		// Each non-empty line is one device, its sectors counted in bytes
		// without wrapping.
		var lines [][]string
		for _, l := range strings.Split(string(data), "\n") {
			if f := strings.Fields(l); len(f) > 0 {
				lines = append(lines, f)
			}
		}
		if len(lines) != len(got) {
			t.Fatalf("%d devices from %d lines", len(got), len(lines))
		}
		for i, d := range got {
			f := lines[i]
			if d.name != f[2] || d.devNumber != f[0]+":"+f[1] {
				t.Errorf("line %d: device %q %q", i+1, d.name, d.devNumber)
			}
			for _, c := range []struct {
				field int
				bytes uint64
			}{{5, d.readBytes}, {9, d.writeByte}} {
				sectors, _ := strconv.ParseUint(f[c.field], 10, 64)
				if hi, lo := bits.Mul64(sectors, 512); hi != 0 || lo != c.bytes {
					t.Errorf("line %d: %d sectors read as %d bytes", i+1, sectors, c.bytes)
				}
			}
		}
	})
}

func FuzzParsePressure(f *testing.F) {
	for _, res := range []string{"cpu", "io", "memory"} {
		addSnapSeeds(f, "proc/pressure/"+res)
	}
	f.Add([]byte("some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parsePressure(bytes.NewReader(data))
		if err != nil {
			return
		}
		// What was read reads back the same from the kernel's own layout.
		text := "some avg10=0.00 avg60=0.00 avg300=0.00 total=" + strconv.FormatUint(p.some, 10) + "\n"
		if p.hasFull {
			text += "full avg10=0.00 avg60=0.00 avg300=0.00 total=" + strconv.FormatUint(p.full, 10) + "\n"
		}
		again, err := parsePressure(strings.NewReader(text))
		if err != nil || again != p {
			t.Errorf("read %+v, which reads back as %+v (%v)", p, again, err)
		}
	})
}

func FuzzParseTaskStat(f *testing.F) {
	addSnapSeeds(f, "proc/self/stat")
	f.Add(snapSeed(f, "t0", "proc/18157/stat"))
	f.Add([]byte("1 (a) b) c) S 0 1 1 0 -1 4194560 0 0 0 0 7 3 0 0 20 0 1 0 5 0 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := parseTaskStat(bytes.NewReader(data))
		if err != nil {
			return
		}
		after := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		utime, _ := strconv.ParseUint(after[11], 10, 64)
		stime, _ := strconv.ParseUint(after[12], 10, 64)
		if sum, carry := bits.Add64(utime, stime, 0); carry != 0 || sum != ts.ticks {
			t.Errorf("utime %d + stime %d read as %d ticks", utime, stime, ts.ticks)
		}
	})
}

func FuzzParseTaskStatm(f *testing.F) {
	addSnapSeeds(f, "proc/self/statm")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseTaskStatm(bytes.NewReader(data))
		if err != nil {
			return
		}
		if m.shared > m.resident {
			t.Errorf("shared %d > resident %d: the private part would wrap", m.shared, m.resident)
		}
	})
}

func FuzzParseMeminfo(f *testing.F) {
	addSnapSeeds(f, "proc/meminfo", "MemTotal: 12 kB\n", "MemTotal: 12\n", "MemTotal: 18014398509481985 kB\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseMemTotal(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, l := range strings.Split(string(data), "\n") {
			v, ok := strings.CutPrefix(strings.TrimSuffix(l, "\r"), "MemTotal:")
			if !ok {
				continue
			}
			fields := strings.Fields(v)
			n, _ := strconv.ParseUint(fields[0], 10, 64)
			scale := uint64(1)
			if len(fields) > 1 && fields[1] == "kB" {
				scale = 1024
			}
			if hi, lo := bits.Mul64(n, scale); hi != 0 || lo != got {
				t.Errorf("MemTotal %q read as %d bytes", v, got)
			}
			return
		}
		t.Errorf("read %d bytes without a MemTotal line", got)
	})
}

func FuzzParseUptime(f *testing.F) {
	addSnapSeeds(f, "proc/uptime", "NaN 1\n", "+Inf\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		up, err := parseUptime(bytes.NewReader(data))
		if err != nil {
			return
		}
		if math.IsNaN(up) || math.IsInf(up, 0) || up < 0 {
			t.Errorf("uptime %v accepted: it decides which processes are new", up)
		}
	})
}

func FuzzParseLoadavg(f *testing.F) {
	addSnapSeeds(f, "proc/loadavg", "NaN 0 0 1/1 1\n", "1e400 0 0 1/1 1\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		load, err := parseLoadavg(bytes.NewReader(data))
		if err != nil {
			return
		}
		if math.IsNaN(load) || math.IsInf(load, 0) || load < 0 {
			t.Errorf("load average %v accepted: it is a count of tasks", load)
		}
	})
}

func FuzzParsePIDs(f *testing.F) {
	f.Add(snapSeed(f, "t0", "proc/self/task/18158/children"))
	f.Add(snapSeed(f, "t0", "proc/18157/task/18157/children"))
	f.Add([]byte("12 13 "))
	f.Fuzz(func(t *testing.T, data []byte) {
		pids, err := parsePIDs(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, p := range pids {
			if p <= 0 {
				t.Errorf("pid %d accepted", p)
			}
		}
	})
}

func FuzzParseCPUInfo(f *testing.F) {
	addSnapSeeds(f, "proc/cpuinfo", "processor\t: 0\nCPU implementer\t: 0x41\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		model, cpus, err := parseCPUInfo(bytes.NewReader(data))
		if err != nil {
			return
		}
		if cpus < 0 || cpus > bytes.Count(data, []byte("processor")) {
			t.Errorf("%d CPUs from %d processor lines", cpus, bytes.Count(data, []byte("processor")))
		}
		if model != strings.TrimSpace(model) {
			t.Errorf("model %q has surrounding space", model)
		}
	})
}

func FuzzParseOSRelease(f *testing.F) {
	addSnapSeeds(f, "etc/os-release", "NAME='Debian'\nVERSION=\"12 \\\"x\\\"\"\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		name, err := parseOSRelease(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(name) > len(data) {
			t.Errorf("a %d-byte name from a %d-byte file", len(name), len(data))
		}
	})
}

// FuzzRates reads two snapshots of /proc/stat, /proc/diskstats and a PSI
// file and turns them into per-second points, as the sampler does.
func FuzzRates(f *testing.F) {
	seed := func(rel string) ([]byte, []byte) { return snapSeed(f, "t0", rel), snapSeed(f, "t1", rel) }
	s0, s1 := seed("proc/stat")
	d0, d1 := seed("proc/diskstats")
	p0, p1 := seed("proc/pressure/io")
	f.Add(s0, s1, d0, d1, p0, p1, uint16(1000))
	f.Add(s1, s0, d1, d0, p1, p0, uint16(1))
	f.Fuzz(func(t *testing.T, stat0, stat1, disk0, disk1, psi0, psi1 []byte, dtMS uint16) {
		dt := float64(int(dtMS)+1) / 1000
		read := func(stat, disk, psi []byte) snapshot {
			s := snapshot{disks: map[string]diskStat{}, psi: map[string]pressure{}}
			ks, err := parseStat(bytes.NewReader(stat))
			s.cpu, s.cpus, s.hasCPU = ks.cpu, ks.cpus, err == nil
			if all, err := parseDiskstats(bytes.NewReader(disk)); err == nil {
				for _, d := range all {
					s.disks[d.name] = d
				}
			}
			if p, err := parsePressure(bytes.NewReader(psi)); err == nil {
				s.psi["io"], s.psi["cpu"] = p, p
			}
			return s
		}
		prev, cur := read(stat0, disk0, psi0), read(stat1, disk1, psi1)
		var devices []device
		for name := range cur.disks {
			if _, ok := prev.disks[name]; ok && len(devices) < 4 {
				devices = append(devices, device{name: name, key: metricKey(name)})
			}
		}
		pts := rates(prev, cur, dt, devices)
		cpuSum, cpuShares := 0.0, 0
		for _, p := range pts {
			if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) || p.Value < 0 {
				t.Errorf("%s = %v", p.Name, p.Value)
			}
			if strings.HasSuffix(p.Name, "_pct") && p.Value > 100+1e-9 {
				t.Errorf("%s = %v%%", p.Name, p.Value)
			}
			if strings.HasPrefix(p.Name, "cpu_") {
				cpuSum += p.Value
				cpuShares++
			}
		}
		if cpuShares > 0 && math.Abs(cpuSum-100) > 1e-6 {
			t.Errorf("CPU shares add up to %v%%", cpuSum)
		}
	})
}
