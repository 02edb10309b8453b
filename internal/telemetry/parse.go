package telemetry

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// userHZ is the unit of /proc/stat and /proc/<pid>/stat times. The kernel
// exports USER_HZ, which is 100 on every Linux architecture dbio runs on,
// whatever the internal tick rate.
const userHZ = 100

// cpuTimes are the machine-wide counters of the "cpu" line of /proc/stat,
// in USER_HZ ticks.
type cpuTimes struct {
	user, nice, system, idle, iowait, irq, softirq, steal uint64
}

// total is all accounted time. Guest time is left out: the kernel already
// counts it inside user and nice.
func (c cpuTimes) total() uint64 {
	return c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal
}

// kernelStat is what the sampler needs from /proc/stat.
type kernelStat struct {
	cpu cpuTimes
	// cpus counts the per-CPU lines: the CPUs online now.
	cpus int
}

// parseStat reads /proc/stat: the aggregate "cpu" line and the number of
// "cpuN" lines.
func parseStat(r io.Reader) (kernelStat, error) {
	var ks kernelStat
	found := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20) // the intr line is long on large machines
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("cpu")) {
			if found {
				break // the cpu lines come first; nothing else is needed
			}
			continue
		}
		if len(line) > 3 && line[3] != ' ' {
			ks.cpus++
			continue
		}
		f := strings.Fields(string(line))
		if len(f) < 5 {
			return ks, fmt.Errorf("cpu line has %d fields, want at least 5", len(f))
		}
		var v [8]uint64 // Linux 2.6.11+ has 8 or more; older kernels stop at iowait and leave the rest 0
		for i := 1; i < len(f) && i <= len(v); i++ {
			n, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return ks, fmt.Errorf("cpu line field %d: %w", i, err)
			}
			v[i-1] = n
		}
		var sum, carry uint64
		for _, n := range v {
			if sum, carry = bits.Add64(sum, n, carry); carry != 0 {
				return ks, errors.New("cpu line times add up past 2^64 ticks: not a kernel's figures")
			}
		}
		ks.cpu = cpuTimes{user: v[0], nice: v[1], system: v[2], idle: v[3], iowait: v[4], irq: v[5], softirq: v[6], steal: v[7]}
		found = true
	}
	if err := sc.Err(); err != nil {
		return ks, err
	}
	if !found {
		return ks, errors.New(`no "cpu" line`)
	}
	if ks.cpus == 0 {
		ks.cpus = 1
	}
	return ks, nil
}

// diskStat is one line of /proc/diskstats. Times are in milliseconds.
type diskStat struct {
	devNumber string // "major:minor"
	name      string
	reads     uint64
	readBytes uint64
	readMs    uint64
	writes    uint64
	writeByte uint64
	writeMs   uint64
	ioMs      uint64 // time with at least one I/O in flight
	weighted  uint64 // sum over I/Os of their time in flight
}

// parseDiskstats reads /proc/diskstats (14 fields since Linux 2.6, 18 with
// discards since 4.18, 20 with flushes since 5.5; only the first 14 are used).
func parseDiskstats(r io.Reader) ([]diskStat, error) {
	var out []diskStat
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 14 {
			return nil, fmt.Errorf("line %d has %d fields, want at least 14", line, len(f))
		}
		var v [11]uint64
		for i := range v {
			n, err := strconv.ParseUint(f[3+i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d (%s) field %d: %w", line, f[2], 4+i, err)
			}
			v[i] = n
		}
		if v[2] > math.MaxUint64/512 || v[6] > math.MaxUint64/512 {
			return nil, fmt.Errorf("line %d (%s): more sectors than 2^64 bytes: not a kernel's figures", line, f[2])
		}
		// Sectors here are always 512 bytes, whatever the device's sector size.
		out = append(out, diskStat{
			devNumber: f[0] + ":" + f[1], name: f[2],
			reads: v[0], readBytes: v[2] * 512, readMs: v[3],
			writes: v[4], writeByte: v[6] * 512, writeMs: v[7],
			ioMs: v[9], weighted: v[10],
		})
	}
	return out, sc.Err()
}

// pressure holds the cumulative stall times of one /proc/pressure file, in
// microseconds.
type pressure struct {
	some, full uint64
	hasFull    bool
}

// parsePressure reads a PSI file ("some avg10=… total=N" and, since Linux
// 5.13 for cpu, "full …").
func parsePressure(r io.Reader) (pressure, error) {
	var p pressure
	hasSome := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var total uint64
		ok := false
		for _, kv := range f[1:] {
			if v, found := strings.CutPrefix(kv, "total="); found {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return p, fmt.Errorf("%s total: %w", f[0], err)
				}
				total, ok = n, true
			}
		}
		if !ok {
			return p, fmt.Errorf("%s line has no total=", f[0])
		}
		switch f[0] {
		case "some":
			p.some, hasSome = total, true
		case "full":
			p.full, p.hasFull = total, true
		}
	}
	if err := sc.Err(); err != nil {
		return p, err
	}
	if !hasSome {
		return p, errors.New(`no "some" line`)
	}
	return p, nil
}

// taskStat is what the sampler needs from /proc/<pid>/stat (or a thread's
// /proc/<pid>/task/<tid>/stat).
type taskStat struct {
	ticks   uint64 // user + system CPU time of all the process's threads, USER_HZ
	start   uint64 // start time after boot, USER_HZ
	threads uint64
	// blkio is the time the task (this thread alone, even in the
	// process's stat) waited for block I/O since it started, USER_HZ:
	// field 42, delayacct_blkio_ticks, counted while the kernel's delay
	// accounting is on. hasBlkio says the line has it (Linux 2.6.18+).
	blkio    uint64
	hasBlkio bool
}

// parseTaskStat reads /proc/<pid>/stat. The command name in parentheses may
// hold spaces and parentheses itself, so fields are counted after the last
// ')'. It is read for every thread of a threaded server every second, so
// the fields are walked in place rather than split into a slice.
func parseTaskStat(r io.Reader) (taskStat, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return taskStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return taskStat{}, errors.New("no ')' after the command name")
	}
	// After ')': state(3) ppid(4) … utime(14) stime(15) … num_threads(20) …
	// starttime(22) … delayacct_blkio_ticks(42).
	wanted := [...]int{14, 15, 20, 22, 42}
	var v [len(wanted)]uint64
	rest, field, got := b[i+1:], 2, 0
	for got < len(wanted) {
		var f []byte
		if f, rest = nextField(rest); f == nil {
			break
		}
		field++
		if field != wanted[got] {
			continue
		}
		if v[got], err = strconv.ParseUint(string(f), 10, 64); err != nil {
			return taskStat{}, fmt.Errorf("field %d: %w", field, err)
		}
		got++
	}
	if field < 22 {
		return taskStat{}, fmt.Errorf("%d fields after the command name, want at least 20", field-2)
	}
	ticks, carry := bits.Add64(v[0], v[1], 0)
	if carry != 0 {
		return taskStat{}, errors.New("utime + stime past 2^64 ticks: not a kernel's figures")
	}
	return taskStat{ticks: ticks, threads: v[2], start: v[3], blkio: v[4], hasBlkio: got == len(wanted)}, nil
}

// nextField is the first field of b, separated by white space as
// bytes.Fields separates them, and what follows it; nil when b has none.
func nextField(b []byte) (field, rest []byte) {
	start := -1
	for i := 0; i < len(b); {
		c, size := rune(b[i]), 1
		if c >= utf8.RuneSelf {
			c, size = utf8.DecodeRune(b[i:])
		}
		if unicode.IsSpace(c) {
			if start >= 0 {
				return b[start:i], b[i:]
			}
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start < 0 {
		return nil, nil
	}
	return b[start:], nil
}

// taskMem is a process's resident memory from /proc/<pid>/statm, in pages.
type taskMem struct {
	resident uint64
	// shared is the file-backed and shared-memory part of resident (Linux
	// 4.5+); resident - shared is the process's private anonymous memory.
	shared uint64
}

// parseTaskStatm reads /proc/<pid>/statm ("size resident shared text lib
// data dt", in pages). It is read rather than status, which the kernel takes
// several times longer to produce, because it is read for every server
// process every second.
func parseTaskStatm(r io.Reader) (taskMem, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return taskMem{}, err
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return taskMem{}, fmt.Errorf("%d fields, want at least 3", len(f))
	}
	var m taskMem
	if m.resident, err = strconv.ParseUint(f[1], 10, 64); err != nil {
		return m, fmt.Errorf("resident: %w", err)
	}
	if m.shared, err = strconv.ParseUint(f[2], 10, 64); err != nil {
		return m, fmt.Errorf("shared: %w", err)
	}
	m.shared = min(m.shared, m.resident)
	return m, nil
}

// parseKB reads "   1234 kB" into bytes.
func parseKB(s string) (uint64, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, errors.New("empty value")
	}
	n, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0, err
	}
	if len(f) > 1 && f[1] == "kB" {
		if n > math.MaxUint64/1024 {
			return 0, fmt.Errorf("%s kB is more bytes than 2^64", f[0])
		}
		n *= 1024
	}
	return n, nil
}

// parseUptime reads /proc/uptime: seconds since boot, then idle seconds.
func parseUptime(r io.Reader) (float64, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, errors.New("empty")
	}
	// It decides which processes started after the last sample: a
	// negative or non-finite uptime would count none, silently.
	up, err := strconv.ParseFloat(f[0], 64)
	if err == nil && !(up >= 0 && up <= math.MaxFloat64) {
		err = fmt.Errorf("uptime %q is not a number of seconds", f[0])
	}
	return up, err
}

// parseLoadavg reads the 1-minute load average from /proc/loadavg
// ("0.52 0.58 0.59 2/345 12345"): the number of tasks running or waiting
// for a CPU or in uninterruptible sleep (mostly disk I/O), averaged with
// a one-minute exponential decay.
func parseLoadavg(r io.Reader) (float64, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return 0, fmt.Errorf("load average %q: want three averages", strings.TrimSpace(string(b)))
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err == nil && !(load >= 0 && load <= math.MaxFloat64) {
		err = fmt.Errorf("load average %q is not a count of tasks", f[0])
	}
	return load, err
}

// parsePIDs reads a space-separated list of pids (/proc/<pid>/task/<tid>/children).
func parsePIDs(r io.Reader) ([]int, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, s := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("pid %q: %w", s, err)
		}
		if n <= 0 {
			return nil, fmt.Errorf("pid %d: pids are positive", n)
		}
		pids = append(pids, n)
	}
	return pids, nil
}

// parseMemTotal reads MemTotal from /proc/meminfo, in bytes.
func parseMemTotal(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			return parseKB(v)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no MemTotal line")
}

// parseCPUInfo reads the CPU model and the number of processors from
// /proc/cpuinfo. x86 names the model in "model name"; arm64 has no such line
// and names only implementer and part numbers, so the model may stay empty.
func parseCPUInfo(r io.Reader) (model string, cpus int, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			cpus++
		case "model name", "cpu model", "Model":
			if model == "" {
				model = val
			}
		}
	}
	return model, cpus, sc.Err()
}

// parseOSRelease reads PRETTY_NAME from os-release(5), falling back to NAME
// and VERSION.
func parseOSRelease(r io.Reader) (string, error) {
	vars := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		vars[k] = unquoteShell(v)
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if p := vars["PRETTY_NAME"]; p != "" {
		return p, nil
	}
	return strings.TrimSpace(vars["NAME"] + " " + vars["VERSION"]), nil
}

// unquoteShell undoes the shell-style quoting os-release allows: "…" with
// backslash escapes, or '…'.
func unquoteShell(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return v[1 : len(v)-1]
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			if v[i] == '\\' && i+1 < len(v) {
				i++
			}
			b.WriteByte(v[i])
		}
		return b.String()
	}
	return v
}
