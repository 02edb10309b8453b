package dialect

import (
	"fmt"
	"strconv"
	"strings"

	"dbio/internal/fio"
	"dbio/internal/units"
)

// DiskSpd's defaults, from its usage text: 64 KiB blocks, 2 I/Os in
// flight per thread, one thread per target, sequential reads, 10 s
// measured after a 5 s warm-up, through the OS cache.
const (
	diskspdBS      = 64 << 10
	diskspdQueue   = 2
	diskspdSeconds = 10
	diskspdWarmup  = 5
)

// diskspdSwitches are the switches DiskSpd reads that dbio translates,
// for the message that refuses any other.
const diskspdSwitches = "-b -c -C -d -F -h -L -o -r -s -S -t -w -W"

// DiskSpd reads a DiskSpd command line ("-b8K -o8 -t4 -r -w30 -d60 -W5
// -Sh -L", with or without the program's name and a test file) as one fio
// job. The switches, as DiskSpd documents them:
//
//	-b<size>      block size, bytes or with K, M, G (default 64K)
//	-o<n>         I/Os in flight per thread and target (default 2)
//	-t<n>         threads per target (default 1); -F<n> total threads (not with -t)
//	-r[<align>]   random I/O, offsets aligned to align (default: the block size)
//	-s[i][<size>] sequential I/O (the default), i: threads share one offset
//	-w<pct>       share of writes in percent (default 0: reads only)
//	-d<s> -W<s>   measured time (10) and warm-up (5) in seconds; -C<s> cool-down
//	-S[bhuw]      caching: u no OS cache (O_DIRECT), w write-through (O_DSYNC),
//	              h both, b the OS cache; -S alone is -Su; -h is an old -Sh
//	-L            latency statistics (fio always measures them)
//	-c<size>      create the test file with this size (K, M, G, or b blocks)
//
// Any other switch is refused with a *SwitchError naming it; every problem
// of the line comes back at once.
func DiskSpd(line string) (Translation, error) {
	t := Translation{Tool: "DiskSpd", Line: line}
	cl := newCommandLine("DiskSpd")
	bad, given := cl.bad, cl.given
	var (
		bs                     int64 = diskspdBS
		bsGiven                string
		queue                  = diskspdQueue
		threads, total         int
		random, sequential     bool
		align, stride, create  string // sizes that may count blocks, read once the block size is known
		alignSw, strideSw, cSw string
		interlocked            bool
		writePct               int
		seconds                = diskspdSeconds
		warmup                 = diskspdWarmup
		cooldown               int
		cache                  string // "", "u", "w", "h", "b" as the -S letters combine
		latency                bool
	)
	wholes := map[byte]wholeSwitch{
		'o': {&queue, 1, "I/Os in flight per thread: a whole number of at least 1, e.g. -o8"},
		't': {&threads, 1, "threads per target: a whole number of at least 1, e.g. -t4"},
		'F': {&total, 1, "total threads: a whole number of at least 1, e.g. -F8"},
		'd': {&seconds, 1, "duration: whole seconds, at least 1, e.g. -d60"},
		'W': {&warmup, 0, "warm-up: whole seconds, e.g. -W5"},
		'C': {&cooldown, 0, "cool-down: whole seconds, e.g. -C5"},
	}
	for s := range cl.switches(line, "diskspd", &t.Notes, wholes) {
		arg, val := s.arg, s.val
		switch s.letter {
		case 'b':
			n, err := diskspdSize(val, 0)
			if err != nil || n <= 0 {
				bad(arg, "block size: use bytes or K, M, G, e.g. -b8K")
				continue
			}
			if n%512 != 0 {
				bad(arg, "block size %d is not a multiple of 512 bytes, which unbuffered I/O needs", n)
				continue
			}
			bs, bsGiven = n, arg
		case 'r':
			random, align, alignSw = true, val, arg
		case 's':
			sequential = true
			if strings.HasPrefix(val, "i") {
				interlocked, val = true, val[1:]
			}
			stride, strideSw = val, arg
		case 'w':
			if val == "" {
				writePct = 0
				continue
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 100 {
				bad(arg, "share of writes: a percentage from 0 to 100, e.g. -w30")
				continue
			}
			writePct = n
		case 'S':
			if _, both := given['h']; both {
				bad(arg, "-h is the old spelling of -Sh, and -S is given too: keep one")
				continue
			}
			c, err := diskspdCache(val)
			if err != nil {
				bad(arg, "%v", err)
				continue
			}
			cache = c
		case 'h':
			if val != "" {
				bad(arg, "not a DiskSpd switch dbio translates; it reads %s", diskspdSwitches)
				continue
			}
			if _, both := given['S']; both {
				bad(arg, "-h is the old spelling of -Sh, and -S is given too: keep one")
				continue
			}
			cache = "h"
		case 'L':
			if val != "" {
				bad(arg, "not a DiskSpd switch dbio translates; it reads %s", diskspdSwitches)
				continue
			}
			latency = true
		case 'c':
			create, cSw = val, arg
		default:
			bad(arg, "not a DiskSpd switch dbio translates; it reads %s", diskspdSwitches)
		}
	}
	if threads > 0 && total > 0 {
		bad(given['F'], "-F and -t both set the threads (DiskSpd refuses them together): keep one")
	}
	// Sizes counted in blocks need the block size.
	var blockAlign, size int64
	if align != "" {
		n, err := diskspdSize(align, bs)
		switch {
		case err != nil || n <= 0:
			bad(alignSw, "random alignment: bytes or K, M, G or b (blocks), e.g. -r4K")
		case n%512 != 0:
			bad(alignSw, "alignment %d is not a multiple of 512 bytes", n)
		case n != bs:
			blockAlign = n
		}
	}
	if stride != "" {
		if n, err := diskspdSize(stride, bs); err != nil || n != bs {
			bad(strideSw, "a stride other than the block size (gaps between sequential I/Os) is not translated: use -s or -si")
		}
	}
	if create != "" {
		n, err := diskspdSize(create, bs)
		if err != nil || n < 1<<20 {
			bad(cSw, "test file size: at least 1 MiB, in bytes or K, M, G or b (blocks), e.g. -c64G")
		}
		size = n
	}
	if len(cl.errs) > 0 {
		return t, joinErrors(cl.errs)
	}

	t.record(givenOr(bsGiven, "-b64K"), "block size "+units.FormatBytes(uint64(bs)), fmt.Sprintf("bs=%d", bs))

	jobs := max(threads, 1)
	threadSw, threadMeans := givenOr(given['t'], "-t1"), fmt.Sprintf("%d thread(s) on the target", jobs)
	if total > 0 {
		jobs, threadSw, threadMeans = total, given['F'], fmt.Sprintf("%d thread(s) in all, each on every target", total)
	}
	depth := queue
	queueSw := givenOr(given['o'], "-o2")
	if interlocked && jobs > 1 {
		// Threads that share one offset are one sequential stream with all
		// their I/Os in flight.
		t.Notes = append(t.Notes, fmt.Sprintf("%s: DiskSpd's %d threads share one sequential offset; fio has no shared offset, so this is one job with their %d I/Os in flight, the same stream", strideSw, jobs, jobs*queue))
		depth, jobs = jobs*queue, 1
	}
	t.record(queueSw, fmt.Sprintf("%d I/O(s) in flight per thread", queue), fmt.Sprintf("iodepth=%d", depth))
	t.record(threadSw, threadMeans, fmt.Sprintf("numjobs=%d", jobs))

	rw := "read"
	if random {
		rw = "randread"
	}
	var readPct *int
	switch {
	case writePct == 100:
		rw = strings.Replace(rw, "read", "write", 1)
	case writePct > 0:
		rw = map[string]string{"randread": "randrw", "read": "rw"}[rw]
		pct := 100 - writePct
		readPct = &pct
	}
	switch {
	case random && blockAlign > 0:
		t.record(alignSw, "random offsets aligned to "+units.FormatBytes(uint64(blockAlign)), fmt.Sprintf("rw=%s blockalign=%d", rw, blockAlign))
	case random:
		t.record(alignSw, "random offsets, aligned to the block size", "rw="+rw)
	case sequential:
		t.record(strideSw, "sequential offsets", "rw="+rw)
	default:
		t.record(toolDefault("-s"), "sequential offsets", "rw="+rw)
	}
	if random && sequential {
		t.Notes = append(t.Notes, strideSw+": -r overrides -s in DiskSpd, so the I/O is random")
	}
	if !random && jobs > 1 {
		t.Notes = append(t.Notes, fmt.Sprintf("each of the %d sequential threads starts at the beginning of the file, as DiskSpd's do without -T", jobs))
	}
	mix := "rw=" + rw
	if readPct != nil {
		mix = fmt.Sprintf("rwmixread=%d", *readPct)
	}
	t.record(givenOr(given['w'], "-w0"), fmt.Sprintf("%d %% writes, %d %% reads", writePct, 100-writePct), mix)
	t.record(givenOr(given['d'], "-d10"), fmt.Sprintf("measured for %d s", seconds), fmt.Sprintf("runtime=%d", seconds))
	t.record(givenOr(given['W'], "-W5"), fmt.Sprintf("warm-up of %d s, left out of the figures", warmup), fmt.Sprintf("ramp_time=%d", warmup))
	if cooldown > 0 {
		t.record(given['C'], fmt.Sprintf("cool-down of %d s after the measurement", cooldown), "—")
		t.Notes = append(t.Notes, given['C']+": DiskSpd keeps the load going after its measurement, which changes none of its figures; fio stops when the measurement ends")
	}

	buffered, writeThrough := false, false
	switch cache {
	case "", "b":
		buffered = true
		s := given['S']
		if s == "" {
			s = toolDefault("no -S")
			t.Notes = append(t.Notes, "no -S: DiskSpd goes through the OS cache, and so does this job (direct=0), so reads may come from memory; "+
				"SQL Server opens its files unbuffered and write-through: add -Sh to measure what it gets")
		}
		t.record(s, "through the OS cache", "direct=0")
	case "u":
		t.record(given['S'], "no OS cache (FILE_FLAG_NO_BUFFERING)", "direct=1")
	case "w":
		buffered, writeThrough = true, true
		t.record(given['S'], "through the OS cache, writes through to stable storage (FILE_FLAG_WRITE_THROUGH)", "direct=0 sync=dsync")
	case "h":
		writeThrough = true
		s := given['S']
		if s == "" {
			s = given['h']
		}
		t.record(s, "no OS cache and writes through to stable storage, as SQL Server opens its files", "direct=1 sync=dsync")
	}
	if latency {
		t.record(given['L'], "latency statistics", "(fio always records latency percentiles)")
	}
	if size > 0 {
		t.record(cSw, "test file of "+units.FormatBytes(uint64(size)), fmt.Sprintf("size=%d", size))
	} else {
		t.Notes = append(t.Notes, "no -c: DiskSpd uses the test file's own size; dbio sizes its working file by its rule (twice the RAM, see 'dbio disk --help'); add -c<size> to choose it")
	}

	ramp := durationS(warmup)
	t.Config = fio.Config{Profile: "job", Dialect: t.Tool, RW: []string{rw}, ReadPct: readPct, BlockSizes: []int64{bs}, IODepths: []int{depth}, Jobs: jobs,
		Runtime: durationS(seconds), Ramp: &ramp, Size: size, Buffered: buffered, WriteThrough: writeThrough, BlockAlign: blockAlign}
	return t, nil
}

// diskspdSize reads a DiskSpd size: bytes, or with K, M, G (binary) or,
// where block is not 0, b for blocks.
func diskspdSize(v string, block int64) (int64, error) {
	if v == "" {
		return 0, fmt.Errorf("empty size")
	}
	mult := int64(1)
	switch v[len(v)-1] {
	case 'K', 'k':
		mult = 1 << 10
	case 'M', 'm':
		mult = 1 << 20
	case 'G', 'g':
		mult = 1 << 30
	case 'T', 't':
		mult = 1 << 40
	case 'b', 'B':
		if block == 0 {
			return 0, fmt.Errorf("no block count here")
		}
		mult = block
	}
	digits := v
	if mult != 1 || v[len(v)-1] == 'b' || v[len(v)-1] == 'B' {
		digits = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("not a size")
	}
	return n * mult, nil
}

// diskspdCache reads -S's letters into one of "", "b", "u", "w", "h".
func diskspdCache(letters string) (string, error) {
	if letters == "" {
		return "u", nil
	}
	var u, w, b bool
	for _, r := range letters {
		switch r {
		case 'u':
			u = true
		case 'w':
			w = true
		case 'h':
			u, w = true, true
		case 'b':
			b = true
		case 'r':
			return "", fmt.Errorf("-Sr is for remote filesystems (SMB) only: dbio measures local storage; use -Su or -Sh")
		default:
			return "", fmt.Errorf("caching letters are b, h, u and w (e.g. -Sh); %q is not one", r)
		}
	}
	switch {
	case b && u:
		return "", fmt.Errorf("b (the OS cache) and u or h (no OS cache) contradict each other")
	case u && w:
		return "h", nil
	case u:
		return "u", nil
	case w:
		return "w", nil
	}
	return "b", nil
}
