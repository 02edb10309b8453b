package blocktrace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// assemble reads a trace_pipe capture as a capture does.
func assemble(t *testing.T, path string, start, end time.Duration) (Trace, *Assembler) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a := NewAssembler(start)
	a.AddDevice(Device{Name: "loop0", Major: 7, Minor: 0})
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ev, err := ParseEvent(sc.Text())
		if errors.Is(err, ErrNotBlockEvent) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		a.Add(ev)
	}
	return a.Trace(end), a
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the code's output (go test -update rewrites it):\n%s", path, got)
	}
}

func TestTracePipeGolden(t *testing.T) {
	tr, a := assemble(t, "testdata/pipe.txt", 304500*time.Millisecond, 307*time.Second)
	// The WS 0 + 0 completion ends an fsync's flush, whose flush request
	// the trace has.
	if a.Unmatched != 0 || a.EmptyWrites != 1 {
		t.Errorf("unmatched completions = %d, empty writes %d; want 0 and 1", a.Unmatched, a.EmptyWrites)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, tr); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "pipe.trace", text)

	back, err := Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, tr) {
		t.Errorf("decoded trace differs from the encoded one:\n got %+v\nwant %+v", back, tr)
	}

	sig, err := json.MarshalIndent(Sign(tr), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "pipe.signature.json", append(sig, '\n'))
}

func TestParseEvent(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Event
	}{
		{"  fio-1 [001] ..... 1.000002: block_rq_issue: 8,16 WFS 4096 () 8 + 8 be,0,4 [fio]",
			Event{Time: 1000002 * time.Microsecond, Major: 8, Minor: 16, Op: Write, Flags: FUA | Sync, Sector: 8, Sectors: 8, Comm: "fio"}},
		{"  x-1 [001] ..... 2.5: block_rq_complete: 259,3 FF () 18446744073709551615 + 0 none,0,0 [0]",
			Event{Complete: true, Time: 2500 * time.Millisecond, Major: 259, Minor: 3, Op: Flush, Flags: Preflush, Sector: 1<<64 - 1}},
		{"  x-1 [001] ..... 3.000000: block_rq_issue: 8,0 FWSM 512 (12 ab) 16 + 1 [a b]",
			Event{Time: 3 * time.Second, Major: 8, Op: Write, Flags: Preflush | Sync | Meta, Sector: 16, Sectors: 1, Comm: "a b"}},
		{"  x-1 [001] ..... 4.000000: block_rq_issue: 8,0 RA 4096 () 0 + 8 be,0,4 [kworker/u4:1]",
			Event{Time: 4 * time.Second, Major: 8, Op: Read, Flags: Ahead, Sectors: 8, Comm: "kworker/u4:1"}},
	} {
		got, err := ParseEvent(tc.line)
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.line, got, tc.want)
		}
	}
}

func TestParseEventRefuses(t *testing.T) {
	for _, line := range []string{
		"x-1 [001] ..... 1.0: block_rq_issue: 8-0 WS 4096 () 8 + 8 [fio]",
		"x-1 [001] ..... 1.0: block_rq_issue: 8,0 QS 4096 () 8 + 8 [fio]",
		"x-1 [001] ..... 1.0: block_rq_issue: 8,0 WX 4096 () 8 + 8 [fio]",
		"x-1 [001] ..... 1.0: block_rq_issue: 8,0 WS 4096 8 + 8 [fio]",
		"x-1 [001] ..... 1.0: block_rq_issue: 8,0 WS 4096 () 8 - 8 [fio]",
		"x-1 [001] ..... one: block_rq_issue: 8,0 WS 4096 () 8 + 8 [fio]",
	} {
		if _, err := ParseEvent(line); err == nil || errors.Is(err, ErrNotBlockEvent) {
			t.Errorf("%q: err = %v, want a parse error", line, err)
		}
	}
	if _, err := ParseEvent("x-1 [001] ..... 1.0: block_bio_queue: 8,0 W 8 + 8 [fio]"); !errors.Is(err, ErrNotBlockEvent) {
		t.Errorf("another event: err = %v, want ErrNotBlockEvent", err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	const head = "dbio block trace 1\nduration_us 1000\ndevice 0 8:0 sda\nprocess 0 p\n"
	for _, tc := range []struct{ name, text, want string }{
		{"no header", "hello\n", "no \"dbio block trace 1\" header"},
		{"bad duration", "dbio block trace 1\nduration_us x\n", "line 2"},
		{"undeclared device", head + "0 W 1 0 512 10 1 0\n", "device 1 is not declared"},
		{"undeclared process", head + "0 W 0 0 512 10 1 3\n", "process 3 is not declared"},
		{"bad op", head + "0 Q 0 0 512 10 1 0\n", "operation \"Q\""},
		{"repeated flag", head + "0 Wff 0 0 512 10 1 0\n", "repeated"},
		{"negative", head + "0 W 0 -5 512 10 1 0\n", "not a count"},
		{"short", head + "0 W 0 0 512\n", "want 8 fields"},
		{"offset past any device", head + "0 W 0 9223372036854775000 512 10 1 0\n", "beyond any device"},
		{"size past any request", head + "0 W 0 0 4294967296 10 1 0\n", "beyond any device"},
		{"device late", head + "0 W 0 0 512 10 1 0\ndevice 1 8:1 sdb\n", "device out of place"},
	} {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(tc.text))
		zw.Close()
		_, err := Decode(&buf)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := Decode(strings.NewReader("plain text")); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("uncompressed: err = %v", err)
	}
}

func TestSignFigures(t *testing.T) {
	ms := time.Millisecond
	tr := Trace{
		Devices: []Device{{Name: "d", Major: 8}}, Processes: []string{"db", "log"},
		Duration: 2 * time.Second,
		Requests: []Request{
			{At: 0, Latency: 1 * ms, Op: Read, Offset: 0, Size: 8192, Depth: 1},
			{At: 100 * ms, Latency: 3 * ms, Op: Read, Offset: 8192, Size: 8192, Depth: 2},
			{At: 200 * ms, Latency: 2 * ms, Op: Write, Flags: FUA, Offset: 1 << 20, Size: 4096, Depth: 1, Process: 1},
			{At: 1200 * ms, Latency: 5 * ms, Op: Flush, Depth: 1, Process: 1},
			{At: 1500 * ms, Latency: -1, Op: Write, Offset: 1<<20 + 4096, Size: 65536, Depth: 1, Process: 1},
		},
	}
	s := Sign(tr)
	if s.Reads.Requests != 2 || s.Writes.Requests != 2 || s.Flushes.Requests != 1 || s.FUAWrites != 1 || s.Incomplete != 1 {
		t.Errorf("counts: %+v", s)
	}
	if s.ReadFraction != 0.5 || s.SequentialFraction != 0.5 {
		t.Errorf("read fraction %v, sequential %v; want 0.5 and 0.5", s.ReadFraction, s.SequentialFraction)
	}
	if s.Reads.Latency.P50 != 1000 || s.Reads.Latency.Max != 3000 || s.Reads.PerSecond != 1 {
		t.Errorf("reads: %+v", s.Reads)
	}
	if len(s.Seconds) != 2 || s.Seconds[0].ReadIOPS != 2 || s.Seconds[1].Flushes != 1 || s.Seconds[1].WriteIOPS != 1 {
		t.Errorf("seconds: %+v", s.Seconds)
	}
	wantSizes := []SizeBin{{UpTo: 4096, Writes: 1}, {UpTo: 8192, Reads: 2}, {UpTo: 65536, Writes: 1}}
	if !reflect.DeepEqual(s.Sizes, wantSizes) {
		t.Errorf("sizes %+v, want %+v", s.Sizes, wantSizes)
	}
	if s.Processes[0] != (ProcessShare{Name: "log", Requests: 3}) {
		t.Errorf("processes %+v", s.Processes)
	}
}
