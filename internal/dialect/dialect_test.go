package dialect

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"dbio/internal/fio"
)

// job is what a translation must become, in the terms fio's job file uses.
type job struct {
	rw           string
	readPct      int // 0 when not mixed
	bs           int64
	iodepth      int
	jobs         int
	runtime      time.Duration
	ramp         time.Duration
	size         int64
	buffered     bool
	writeThrough bool
	blockAlign   int64
}

func got(c fio.Config) job {
	j := job{rw: c.RW[0], bs: c.BlockSizes[0], iodepth: c.IODepths[0], jobs: c.Jobs, runtime: c.Runtime, size: c.Size,
		buffered: c.Buffered, writeThrough: c.WriteThrough, blockAlign: c.BlockAlign}
	if c.ReadPct != nil {
		j.readPct = *c.ReadPct
	}
	if c.Ramp != nil {
		j.ramp = *c.Ramp
	}
	return j
}

const s = time.Second

func TestDiskSpd(t *testing.T) {
	for _, tc := range []struct {
		line  string
		want  job
		notes []string // each in some note
	}{
		{"-b8K -o8 -t4 -r -w30 -d60 -W5 -Sh -L",
			job{rw: "randrw", readPct: 70, bs: 8192, iodepth: 8, jobs: 4, runtime: 60 * s, ramp: 5 * s, writeThrough: true}, []string{"no -c"}},
		{`diskspd.exe -c2G -b4K -F8 -r -o32 -W60 -d60 -Sh "C:\test files\testfile.dat"`,
			job{rw: "randread", bs: 4096, iodepth: 32, jobs: 8, runtime: 60 * s, ramp: 60 * s, size: 2 << 30, writeThrough: true},
			[]string{`DiskSpd's target C:\test files\testfile.dat: dbio measures each --target`}},
		{"-c1000b -b4K -o32 -w100 -Su",
			job{rw: "write", bs: 4096, iodepth: 32, jobs: 1, runtime: 10 * s, ramp: 5 * s, size: 4096000}, nil},
		{"", job{rw: "read", bs: 64 << 10, iodepth: 2, jobs: 1, runtime: 10 * s, ramp: 5 * s, buffered: true}, []string{"no -S: DiskSpd goes through the OS cache"}},
		{"-b8K -r4K -w0 -S", job{rw: "randread", bs: 8192, iodepth: 2, jobs: 1, runtime: 10 * s, ramp: 5 * s, blockAlign: 4096}, nil},
		{"-b8K -r8K -w", job{rw: "randread", bs: 8192, iodepth: 2, jobs: 1, runtime: 10 * s, ramp: 5 * s, buffered: true}, nil},
		{"-t4 -si -o2 -b64K -Sw -w50", job{rw: "rw", readPct: 50, bs: 64 << 10, iodepth: 8, jobs: 1, runtime: 10 * s, ramp: 5 * s, buffered: true, writeThrough: true},
			[]string{"share one sequential offset"}},
		{"-t2 -s -b1M -Sb -C5 -h0", job{}, nil}, // -h0 is refused below
		{"-t2 -s -b1M -Sb -C5 -W0", job{rw: "read", bs: 1 << 20, iodepth: 2, jobs: 2, runtime: 10 * s, buffered: true},
			[]string{"starts at the beginning of the file", "-C5: DiskSpd keeps the load going"}},
		{"-h -b4K -r -o1", job{rw: "randread", bs: 4096, iodepth: 1, jobs: 1, runtime: 10 * s, ramp: 5 * s, writeThrough: true}, nil},
		{"-b4K -r -s", job{rw: "randread", bs: 4096, iodepth: 2, jobs: 1, runtime: 10 * s, ramp: 5 * s, buffered: true}, []string{"-r overrides -s"}},
	} {
		t.Run(tc.line, func(t *testing.T) {
			tr, err := DiskSpd(tc.line)
			if tc.want.rw == "" {
				if err == nil {
					t.Fatalf("accepted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := got(tr.Config); g != tc.want {
				t.Errorf("job\n got %+v\nwant %+v", g, tc.want)
			}
			checkNotes(t, tr, tc.notes)
			checkPlans(t, tr)
		})
	}
}

func TestDiskSpdRefuses(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string // each names its switch
	}{
		{"-b8K -Z1G -r", []string{"DiskSpd switch -Z1G: not a DiskSpd switch dbio translates"}},
		{"-t4 -F8", []string{"DiskSpd switch -F8: -F and -t both set the threads"}},
		{"-b8K -b4K", []string{"DiskSpd switch -b4K: given twice (also -b8K)"}},
		{"-o0 -d0 -w101", []string{"switch -o0:", "switch -d0:", "switch -w101:"}},
		{"-Sr", []string{"switch -Sr: -Sr is for remote filesystems"}},
		{"-Sbu", []string{"switch -Sbu: b (the OS cache) and u or h"}},
		{"-b4K -s8b", []string{"switch -s8b: a stride other than the block size"}},
		{"-b1000", []string{"switch -b1000: block size 1000 is not a multiple of 512"}},
		{"-c10K", []string{"switch -c10K: test file size: at least 1 MiB"}},
		{"-T1b -ag -x", []string{"switch -T1b:", "switch -ag:", "switch -x:"}},
		{"-h -Sh", []string{"switch -Sh: -h is the old spelling of -Sh"}},
		{"-h0", []string{"switch -h0: not a DiskSpd switch"}},
	} {
		t.Run(tc.line, func(t *testing.T) {
			_, err := DiskSpd(tc.line)
			checkRefused(t, err, tc.want)
		})
	}
}

func TestSQLIO(t *testing.T) {
	files := map[string]string{
		"param.txt": "c:\\sqlio_test.dat 4 0x0 100\n",
		"two.txt":   "c:\\a.dat 2 0x0 100\nd:\\b.dat 2 0x0 100\n",
		"bad.txt":   "c:\\a.dat lots 0x0 100\n",
		"note.txt":  "# the log disk\nl:\\log.dat 1 0x0 2048 * 2 GB\n",
	}
	read := func(path string) ([]byte, error) {
		if b, ok := files[path]; ok {
			return []byte(b), nil
		}
		return nil, fmt.Errorf("open %s: %w", path, os.ErrNotExist)
	}
	for _, tc := range []struct {
		line  string
		want  job
		notes []string
	}{
		{"sqlio -kW -s60 -frandom -o8 -t4 -b8 -LS -BH",
			job{rw: "randwrite", bs: 8192, iodepth: 8, jobs: 4, runtime: 60 * s}, []string{"no file size"}},
		{"-kR -s30 -fsequential -o8 -b64 -LS -Fparam.txt",
			job{rw: "read", bs: 64 << 10, iodepth: 8, jobs: 4, runtime: 30 * s, size: 100 << 20, writeThrough: true},
			[]string{`SQLIO's target c:\sqlio_test.dat`}},
		{"-kR -frandom", job{rw: "randread", bs: 2048, iodepth: 1, jobs: 1, runtime: 30 * s, writeThrough: true}, nil},
		{"-kw -f1 -BY -b256 -t2 -Fnote.txt", job{rw: "write", bs: 256 << 10, iodepth: 1, jobs: 1, runtime: 30 * s, size: 2048 << 20, buffered: true},
			[]string{"-t2: the parameter file's 1 threads apply", "-BY: through the OS cache"}},
		{"-kW -frandom -BS -LP", job{rw: "randwrite", bs: 2048, iodepth: 1, jobs: 1, runtime: 30 * s, buffered: true, writeThrough: true}, nil},
	} {
		t.Run(tc.line, func(t *testing.T) {
			tr, err := SQLIO(tc.line, read)
			if err != nil {
				t.Fatal(err)
			}
			if g := got(tr.Config); g != tc.want {
				t.Errorf("job\n got %+v\nwant %+v", g, tc.want)
			}
			checkNotes(t, tr, tc.notes)
			checkPlans(t, tr)
		})
	}
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"-kR -s60", []string{"SQLIO switch -f: missing: SQLIO's default access (-f64"}},
		{"-kR -f64", []string{"SQLIO switch -f64: a stripe factor has no fio equivalent"}},
		{"-kR -frandom -a0xf -i64", []string{"switch -a0xf: not an SQLIO switch dbio translates", "switch -i64:"}},
		{"-kX -frandom -b0 -t300 -LX -BQ", []string{"switch -kX:", "switch -b0:", "switch -t300:", "switch -LX:", "switch -BQ:"}},
		{"-kR -frandom -Fmissing.txt", []string{"switch -Fmissing.txt: parameter file: open missing.txt"}},
		{"-kR -frandom -Ftwo.txt", []string{"switch -Ftwo.txt: parameter file two.txt lists 2 test files"}},
		{"-kR -frandom -Fbad.txt", []string{`switch -Fbad.txt: parameter file bad.txt: threads "lots"`}},
	} {
		t.Run(tc.line, func(t *testing.T) {
			_, err := SQLIO(tc.line, read)
			checkRefused(t, err, tc.want)
		})
	}
}

func TestTokens(t *testing.T) {
	got := tokens(`  diskspd -b8K  "C:\my dir\f.dat"	-r `)
	want := []string{"diskspd", "-b8K", `C:\my dir\f.dat`, "-r"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
}

func checkNotes(t *testing.T, tr Translation, want []string) {
	t.Helper()
	all := strings.Join(tr.Notes, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("notes lack %q:\n%s", w, all)
		}
	}
	if len(tr.Switches) == 0 || tr.Summary() == "" {
		t.Errorf("no switches or summary: %+v", tr)
	}
}

// checkPlans has fio's own planning accept the translation on a target:
// one point with the job's settings.
func checkPlans(t *testing.T, tr Translation) {
	t.Helper()
	c := tr.Config
	c.Targets, c.CPUs, c.MemoryBytes = []string{"/mnt/x"}, 2, 8<<30
	p, err := fio.NewPlan(c, fio.BuiltinProfiles())
	if err != nil {
		t.Fatalf("fio refuses the translation: %v", err)
	}
	pt := p.Points[0]
	if len(p.Points) != 1 || pt.BS != c.BlockSizes[0] || pt.IODepth != c.IODepths[0] || pt.Jobs != c.Jobs || pt.Split ||
		pt.Buffered != c.Buffered || pt.WriteThrough != c.WriteThrough {
		t.Errorf("fio planned %+v for %+v", p.Points, c)
	}
}

func checkRefused(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatal("accepted")
	}
	var se *SwitchError
	if !errors.As(err, &se) {
		t.Errorf("error %v is not a SwitchError", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
}
