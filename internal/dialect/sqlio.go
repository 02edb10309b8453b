package dialect

import (
	"fmt"
	"strconv"
	"strings"

	"dbio/internal/fio"
	"dbio/internal/units"
)

// sqlioSwitches are the switches SQLIO reads that dbio translates.
const sqlioSwitches = "-k -s -f -o -t -b -L -B -F"

// SQLIO reads an SQLIO command line ("-kW -s60 -frandom -o8 -t4 -b8 -LS
// -BH -Fparam.txt") as one fio job. The switches, as SQLIO's readme
// documents them:
//
//	-kR, -kW      read or write (default read)
//	-s<s>         measured time in seconds (default 30); SQLIO has no warm-up
//	-frandom      random blocks; -fsequential (or -f1) the next block each time
//	-o<n>         I/Os in flight per thread (default: one at a time)
//	-t<n>         threads (default 1)
//	-b<KB>        block size in KiB (default 2)
//	-LS, -LP      latency statistics (fio always measures them)
//	-BN -BY -BH -BS  caching: none (O_DIRECT + O_DSYNC, the default), all (OS
//	              cache), hardware only (O_DIRECT), software only (OS cache + O_DSYNC)
//	-F<file>      parameter file: one line "path threads mask sizeMB"
//
// readFile reads -F's parameter file. SQLIO's default access (-f64, a
// stripe pattern with no fio equivalent) is refused: the line must say
// -frandom or -fsequential. Any other switch is refused by name.
func SQLIO(line string, readFile func(string) ([]byte, error)) (Translation, error) {
	t := Translation{Tool: "SQLIO", Line: line}
	cl := newCommandLine("SQLIO")
	bad, given := cl.bad, cl.given
	var (
		write            bool
		seconds          = 30
		random, seqGiven bool
		queue, threads   = 1, 1
		kib              = 2
		cache            = "N"
		latency          bool
		size             int64
		paramThreads     int
	)
	wholes := map[byte]wholeSwitch{
		's': {&seconds, 1, "duration: whole seconds, at least 1, e.g. -s60"},
		'o': {&queue, 1, "I/Os in flight per thread: a whole number of at least 1, e.g. -o8"},
	}
	for s := range cl.switches(line, "sqlio", &t.Notes, wholes) {
		arg, val := s.arg, s.val
		switch s.letter {
		case 'k':
			switch strings.ToUpper(val) {
			case "R":
				write = false
			case "W":
				write = true
			default:
				bad(arg, "use -kR (read) or -kW (write)")
			}
		case 'f':
			switch strings.ToLower(val) {
			case "random":
				random = true
			case "sequential", "1":
				seqGiven = true
			default:
				bad(arg, "a stripe factor has no fio equivalent: use -frandom or -fsequential (-f1)")
			}
		case 't':
			n, ok := count(val, 1)
			if !ok || n > 256 {
				bad(arg, "threads: a whole number from 1 to 256, e.g. -t4")
				continue
			}
			threads = n
		case 'b':
			n, ok := count(val, 1)
			if !ok || (n*1024)%512 != 0 {
				bad(arg, "block size in KiB: a whole number, e.g. -b8 for 8 KiB")
				continue
			}
			kib = n
		case 'L':
			switch strings.ToUpper(val) {
			case "S", "P", "SI", "PI":
				latency = true
			default:
				bad(arg, "latency timer: use -LS or -LP")
			}
		case 'B':
			switch v := strings.ToUpper(val); v {
			case "N", "Y", "H", "S":
				cache = v
			default:
				bad(arg, "caching: use -BN, -BY, -BH or -BS")
			}
		case 'F':
			n, sz, path, err := sqlioParams(val, readFile)
			if err != nil {
				bad(arg, "%v", err)
				continue
			}
			paramThreads, size = n, sz
			t.Notes = append(t.Notes, targetNote("SQLIO", path))
		default:
			bad(arg, "not an SQLIO switch dbio translates; it reads %s", sqlioSwitches)
		}
	}
	if !random && !seqGiven && given['f'] == "" {
		bad("-f", "missing: SQLIO's default access (-f64, a stripe pattern) has no fio equivalent; add -frandom or -fsequential")
	}
	if len(cl.errs) > 0 {
		return t, joinErrors(cl.errs)
	}

	rw := "read"
	if write {
		rw = "write"
	}
	if random {
		rw = "rand" + rw
	}
	t.record(givenOr(given['k'], "-kR"), map[bool]string{false: "reads", true: "writes"}[write], "rw="+rw)
	t.record(given['f'], map[bool]string{false: "sequential blocks", true: "random blocks"}[random], "rw="+rw)
	bs := int64(kib) << 10
	t.record(givenOr(given['b'], "-b2"), "block size "+units.FormatBytes(uint64(bs)), fmt.Sprintf("bs=%d", bs))
	t.record(givenOr(given['o'], "no -o"), fmt.Sprintf("%d I/O(s) in flight per thread", queue), fmt.Sprintf("iodepth=%d", queue))
	jobs := threads
	if paramThreads > 0 {
		if given['t'] != "" && threads != paramThreads {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: the parameter file's %d threads apply, as in SQLIO", given['t'], paramThreads))
		}
		jobs = paramThreads
		t.record(given['F'], fmt.Sprintf("%d thread(s) from the parameter file", jobs), fmt.Sprintf("numjobs=%d", jobs))
	} else {
		t.record(givenOr(given['t'], "-t1"), fmt.Sprintf("%d thread(s)", jobs), fmt.Sprintf("numjobs=%d", jobs))
	}
	t.record(givenOr(given['s'], "-s30"), fmt.Sprintf("measured for %d s", seconds), fmt.Sprintf("runtime=%d", seconds))
	t.record("(SQLIO)", "no warm-up: SQLIO measures from the first I/O", "ramp_time=0")
	buffered, writeThrough := false, false
	switch cache {
	case "N":
		writeThrough = true
		t.record(givenOr(given['B'], "-BN"), "no OS cache and no disk write cache (write-through)", "direct=1 sync=dsync")
	case "Y":
		buffered = true
		t.record(given['B'], "OS cache and disk cache", "direct=0")
		t.Notes = append(t.Notes, given['B']+": through the OS cache, so reads may come from memory")
	case "H":
		t.record(given['B'], "no OS cache, the disk's own cache allowed", "direct=1")
	case "S":
		buffered, writeThrough = true, true
		t.record(given['B'], "OS cache, writes through to stable storage", "direct=0 sync=dsync")
	}
	if latency {
		t.record(given['L'], "latency statistics", "(fio always records latency percentiles)")
	}
	if size > 0 {
		t.record(given['F'], "test file of "+units.FormatBytes(uint64(size)), fmt.Sprintf("size=%d", size))
	} else {
		t.Notes = append(t.Notes, "no file size (-F's parameter file gives one): dbio sizes its working file by its rule (twice the RAM, see 'dbio disk --help')")
	}
	ramp := durationS(0)
	t.Config = fio.Config{Profile: "job", Dialect: t.Tool, RW: []string{rw}, BlockSizes: []int64{bs}, IODepths: []int{queue}, Jobs: jobs,
		Runtime: durationS(seconds), Ramp: &ramp, Size: size, Buffered: buffered, WriteThrough: writeThrough}
	return t, nil
}

// sqlioParams reads an SQLIO parameter file of one test file: "path threads
// mask sizeMB", a '*' starting a comment. It returns the threads, the size
// in bytes (0 when the line gives none) and the path.
func sqlioParams(path string, readFile func(string) ([]byte, error)) (threads int, size int64, file string, err error) {
	if path == "" {
		return 0, 0, "", fmt.Errorf("name the parameter file, e.g. -Fparam.txt")
	}
	if readFile == nil {
		return 0, 0, "", fmt.Errorf("parameter file %s: cannot be read here", path)
	}
	b, err := readFile(path)
	if err != nil {
		return 0, 0, "", fmt.Errorf("parameter file: %v: copy it beside you, or give the threads with -t", err)
	}
	var lines [][]string
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(l, '*'); i >= 0 {
			l = l[:i]
		}
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			lines = append(lines, f)
		}
	}
	switch {
	case len(lines) == 0:
		return 0, 0, "", fmt.Errorf("parameter file %s lists no test file", path)
	case len(lines) > 1:
		return 0, 0, "", fmt.Errorf("parameter file %s lists %d test files: dbio translates one; keep one line and give the storage with --target", path, len(lines))
	}
	f := lines[0]
	if len(f) < 2 {
		return 0, 0, "", fmt.Errorf("parameter file %s: the line needs at least a path and a thread count", path)
	}
	threads, ok := count(f[1], 1)
	if !ok || threads > 256 {
		return 0, 0, "", fmt.Errorf("parameter file %s: threads %q: a whole number from 1 to 256", path, f[1])
	}
	if len(f) >= 4 {
		mb, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil || mb < 1 {
			return 0, 0, "", fmt.Errorf("parameter file %s: size %q: whole MB, e.g. 100", path, f[3])
		}
		size = mb << 20
	}
	return threads, size, f[0], nil
}
