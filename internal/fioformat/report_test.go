package fioformat

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/results"
	"dbio/internal/testenv"
)

var (
	update  = flag.Bool("update", false, "rewrite golden files from the current code")
	capture = flag.Bool("capture", false, "re-run testdata/capture/*.fio with the real fio and replace the captured outputs")
)

// captures are the real fio runs the parser is tested on; each comes from
// testdata/capture/<name>.fio.
var captures = []string{"randread", "mix", "steady", "group", "terminated", "hist", "status"}

// reportsStatus are the captures run with --status-interval=1.
var reportsStatus = map[string]bool{"status": true}

// withLogs are the captures whose per-second logs are kept.
var withLogs = map[string]bool{"randread": true, "mix": true, "hist": true}

func TestCapture(t *testing.T) {
	if !*capture {
		t.Skip("run with -capture to re-run fio and replace testdata")
	}
	requireFio(t)
	disk := t.TempDir()
	shm := shmDir(t)
	for _, name := range captures {
		work := t.TempDir()
		job := filepath.Join(work, "job.fio")
		src, err := os.ReadFile(filepath.Join("testdata", "capture", name+".fio"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(job, src, 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"--output-format=json+", "--output=out.json", "job.fio"}
		if reportsStatus[name] {
			args = append([]string{"--status-interval=1"}, args...)
		}
		cmd := execx.Cmd{Name: "fio", Args: args, Dir: work,
			Env: []string{"DBIO_FIO_DIR=" + disk, "DBIO_FIO_SHM=" + shm}}
		if name == "terminated" {
			p, err := execx.Real{Proc: "/proc"}.Start(context.Background(), cmd)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second)
			_ = p.Signal(syscall.SIGTERM)
			_ = p.Wait()
		} else if _, err := (execx.Real{Proc: "/proc"}).Run(context.Background(), cmd); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := os.ReadFile(filepath.Join(work, "out.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", name+".json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
		if withLogs[name] {
			dst := filepath.Join("testdata", name+"-logs")
			os.RemoveAll(dst)
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			logs, _ := filepath.Glob(filepath.Join(work, "*_*.log"))
			for _, l := range logs {
				if _, _, ok := LogName(filepath.Base(l)); !ok && !histName.MatchString(filepath.Base(l)) {
					continue // slat and total-latency logs are not read by dbio
				}
				b, err := os.ReadFile(l)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dst, filepath.Base(l)), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		t.Logf("captured %s", name)
	}
}

// TestParseFacts pins what the captures must say, independently of the goldens.
func TestParseFacts(t *testing.T) {
	load := func(name string) *Output {
		t.Helper()
		f, err := os.Open(filepath.Join("testdata", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out, err := Parse(f)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	rr := load("randread").Groups[0]
	if rr.Read == nil || rr.Write != nil || rr.Total == nil {
		t.Fatalf("randread: read=%v write=%v total=%v, want read and total only", rr.Read != nil, rr.Write != nil, rr.Total != nil)
	}
	if rr.Read.IOPS != rr.Total.IOPS {
		t.Errorf("randread: fio's mixed IOPS %v differs from read IOPS %v", rr.Total.IOPS, rr.Read.IOPS)
	}
	for dir, d := range map[string]*results.FioDirection{"read": rr.Read} {
		var n int64
		for _, c := range d.Bins {
			n += c
		}
		// The histogram holds every completion latency fio sampled, which
		// includes the I/Os in flight when the ramp ended (so it can exceed
		// total_ios by up to the queue); it must match fio's clat count.
		if n != d.Completion.N {
			t.Errorf("randread %s: json+ bins count %d completions, fio's clat N is %d", dir, n, d.Completion.N)
		}
		if n < d.IOs || n > d.IOs+int64(2*16) {
			t.Errorf("randread %s: %d completions for %d I/Os: more than the 32 I/Os in flight at the ramp's end apart", dir, n, d.IOs)
		}
	}
	mx := load("mix").Groups[0]
	if mx.Read == nil || mx.Write == nil || mx.Total == nil {
		t.Fatal("mix: want read, write and total")
	}
	if got := mx.Read.IOs + mx.Write.IOs; got != mx.Total.IOs {
		t.Errorf("mix: reads %d + writes %d != fio's mixed %d", mx.Read.IOs, mx.Write.IOs, mx.Total.IOs)
	}
	if share := float64(mx.Read.IOs) / float64(mx.Total.IOs); math.Abs(share-0.7) > 0.02 {
		t.Errorf("mix: read share %.3f, want about 0.70", share)
	}
	ss := load("steady").Groups[0].SteadyState
	if ss == nil || ss.WindowS != 2 || !strings.HasPrefix(ss.Criterion, "iops_slope:5") {
		t.Errorf("steady: %+v", ss)
	}
	if g := load("group"); len(g.Groups) != 1 || g.Groups[0].Total.IOPS < 3000 || g.Groups[0].Total.IOPS > 4400 {
		t.Errorf("group: two sections limited to 2000 IOPS each should report one group near 4000 IOPS, got %+v", g.Groups)
	}
	term := load("terminated")
	if len(term.Notes) == 0 || !strings.Contains(term.Notes[0], "terminating on signal") {
		t.Errorf("terminated: notes %q, want fio's signal note", term.Notes)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     error
		contains string
	}{
		{"empty", "", ErrNoOutput, ""},
		{"only notes", "fio: engine nosuch not loadable\nfio: failed to load engine\n", ErrNoOutput, ""},
		{"torn", "{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : [\n", nil, "not a complete JSON report"},
		{"bad percentile", `{"jobs":[{"jobname":"x","read":{"total_ios":1,"clat_ns":{"percentile":{"p99":1}}}}]}`, nil, "percentile key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if tc.contains != "" && !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %q does not say %q", err, tc.contains)
			}
		})
	}
}

func TestSecondsGolden(t *testing.T) {
	for name := range withLogs {
		t.Run(name, func(t *testing.T) {
			logs, err := ReadLogs(filepath.Join("testdata", name+"-logs"))
			if err != nil {
				t.Fatal(err)
			}
			secs, dropped := MergeSeconds(logs)
			var b bytes.Buffer
			fmt.Fprintf(&b, "jobs %d, seconds %d, dropped %d\n", len(logs), len(secs), dropped)
			for i, s := range secs {
				fmt.Fprintf(&b, "+%ds read_iops=%.0f write_iops=%.0f mb_s=%.3f lat_us=%.3f read_lat_us=%.3f write_lat_us=%.3f",
					int(s.Time.Sub(secs[0].Time).Seconds()), s.ReadIOPS, s.WriteIOPS, s.MBPerSec, s.LatMeanUS, s.ReadLatMeanUS, s.WriteLatMeanUS)
				if !math.IsNaN(s.LatP99US) || !math.IsNaN(s.ReadLatP99US) || !math.IsNaN(s.WriteLatP99US) {
					fmt.Fprintf(&b, " p99_us=%.3f read_p99_us=%.3f write_p99_us=%.3f", s.LatP99US, s.ReadLatP99US, s.WriteLatP99US)
				}
				b.WriteString("\n")
				_ = i
			}
			golden(t, filepath.Join("testdata", name+"-seconds.golden"), b.Bytes())
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update if the change is intended):\n%s", path, firstDiff(string(want), string(got)))
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n want %q\n got  %q", i+1, a, b)
		}
	}
	return "(equal lines, different bytes)"
}

func requireFio(t testing.TB) {
	t.Helper()
	testenv.RequireProgram(t, "fio", "apt-get install -y fio")
}

// shmDir is a fresh directory on tmpfs, removed after the test.
func shmDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "dbio-fio-test-")
	if err != nil {
		t.Fatalf("tmpfs at /dev/shm is needed by this test: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// A report of fio's client holds every server's groups and fio's own sum
// of them: each server's part is its groups alone, and its own report
// holds them as fio wrote them; an unreadable report is kept whole.
func TestHostReport(t *testing.T) {
	job := func(host, name string, ios int) string {
		return fmt.Sprintf(`{"jobname":%q,"hostname":%q,"groupid":0,"error":0,"elapsed":2,"read":{"total_ios":%d,"io_bytes":%d,"iops":%d,"runtime":1000}}`,
			name, host, ios, ios*4096, ios)
	}
	report := []byte("fio: a note of the client's\n{\"fio version\":\"fio-3.33\",\"client_stats\":[" +
		job("10.0.0.1", "disk", 100) + "," + job("10.0.0.2", "disk", 200) + "," + job("10.0.0.2", "All clients", 300) + "]}\n")
	out, err := Parse(bytes.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Groups) != 2 || len(out.HostGroups("10.0.0.2")) != 1 || len(out.HostGroups("10.0.0.3")) != 0 {
		t.Fatalf("groups %+v: want one per server, fio's sum left out", out.Groups)
	}
	for _, c := range []struct {
		host string
		ios  int64
	}{{"10.0.0.1", 100}, {"10.0.0.2", 200}} {
		part, err := HostReport(report, c.host)
		if err != nil {
			t.Fatal(err)
		}
		own, err := Parse(bytes.NewReader(part))
		if err != nil {
			t.Fatalf("%s's report: %v\n%s", c.host, err, part)
		}
		if len(own.Groups) != 1 || own.Groups[0].Host != c.host || own.Groups[0].Read.IOs != c.ios || own.FioVersion != "fio-3.33" {
			t.Errorf("%s's report: %+v", c.host, own)
		}
	}
	torn := []byte("{\"client_stats\":[")
	if part, err := HostReport(torn, "10.0.0.1"); err != nil || !bytes.Equal(part, torn) {
		t.Errorf("a torn report: %q, %v; want it whole", part, err)
	}
}
