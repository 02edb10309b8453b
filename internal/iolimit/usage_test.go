package iolimit

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"dbio/internal/cgroup"
	"dbio/internal/execx"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

func TestParseV1Stat(t *testing.T) {
	for _, tt := range []struct {
		name, file, in string
		want           map[string]readWrite
		err            string
	}{
		{name: "I/Os served (captured)", file: "testdata/v1/blkio.throttle.io_serviced",
			want: map[string]readWrite{"254:0": {read: 1}, "7:1": {read: 25, write: 100}}},
		{name: "bytes served (captured)", file: "testdata/v1/blkio.throttle.io_service_bytes",
			want: map[string]readWrite{"254:0": {read: 16384}, "7:1": {read: 87040, write: 409600}}},
		{name: "a group without I/O", in: "Total 0\n", want: map[string]readWrite{}},
		{name: "not a count", in: "8:0 Read many\n", err: "line 1 (8:0 Read)"},
		{name: "not a device", in: "sda Read 1\n", err: `"sda" is not a major:minor`},
		{name: "not a statistics file", in: "8:0 100\n", err: `line 1: "8:0 100" is not`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if tt.file != "" {
				b, err := os.ReadFile(tt.file)
				if err != nil {
					t.Fatal(err)
				}
				in = string(b)
			}
			got, err := parseV1Stat(strings.NewReader(in))
			checkErr(t, err, tt.err)
			if tt.err == "" && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseIOStat(t *testing.T) {
	for _, tt := range []struct {
		name, file, in string
		want           map[string]Served
		err            string
	}{
		{name: "the kernel's example", file: "testdata/v2/io.stat", want: map[string]Served{
			"8:16": {ReadIOs: 192, WriteIOs: 353, ReadBytes: 1459200, WriteBytes: 314773504},
			"8:0":  {ReadIOs: 8950, WriteIOs: 1252, ReadBytes: 90430464, WriteBytes: 299008000},
		}},
		{name: "io.cost's and io.latency's keys are left alone", file: "testdata/v2-iocost/io.stat", want: map[string]Served{
			"8:0": {ReadIOs: 8950, WriteIOs: 1252, ReadBytes: 90430464, WriteBytes: 299008000},
		}},
		{name: "no I/O yet", in: "", want: map[string]Served{}},
		{name: "not a count", in: "8:0 rbytes=1 wios=x\n", err: "line 1 (8:0) wios"},
		{name: "not key=value", in: "8:0 rbytes\n", err: `"rbytes" is not key=value`},
		{name: "not a device", in: "total rbytes=1\n", err: `"total" is not a major:minor`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if tt.file != "" {
				b, err := os.ReadFile(tt.file)
				if err != nil {
					t.Fatal(err)
				}
				in = string(b)
			}
			got, err := parseIOStat(strings.NewReader(in))
			checkErr(t, err, tt.err)
			if tt.err == "" && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// A group's usage is its capped devices' counters, from v1's two throttle
// files or v2's io.stat, with v2's own I/O pressure; a device it does not
// cap is left out, and a group whose files are gone is an error.
func TestGroupUsage(t *testing.T) {
	for _, tt := range []struct {
		name string
		g    Group
		want Usage
	}{
		{"v1", Group{Path: "testdata/v1", Version: "v1-blkio", Devices: []string{"7:1"}},
			Usage{Devices: map[string]Served{"7:1": {ReadIOs: 25, WriteIOs: 100, ReadBytes: 87040, WriteBytes: 409600}}}},
		{"v1, a capped device without I/O", Group{Path: "testdata/v1", Version: "v1-blkio", Devices: []string{"8:0"}},
			Usage{Devices: map[string]Served{}}},
		{"v2", Group{Path: "testdata/v2", Version: "v2-io", Devices: []string{"8:0", "8:16"}},
			Usage{Devices: map[string]Served{
				"8:16": {ReadIOs: 192, WriteIOs: 353, ReadBytes: 1459200, WriteBytes: 314773504},
				"8:0":  {ReadIOs: 8950, WriteIOs: 1252, ReadBytes: 90430464, WriteBytes: 299008000},
			}, Pressure: cgroup.Pressure{Some: 3390317, Full: 3111455}, HasPressure: true}},
		{"v2 without pressure", Group{Path: "testdata/v2-iocost", Version: "v2-io", Devices: []string{"8:0"}},
			Usage{Devices: map[string]Served{"8:0": {ReadIOs: 8950, WriteIOs: 1252, ReadBytes: 90430464, WriteBytes: 299008000}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.g.Usage()
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	gone := Group{Path: filepath.Join(t.TempDir(), "gone"), Version: "v1-blkio", Devices: []string{"7:1"}}
	if _, err := gone.Usage(); err == nil || !strings.Contains(err.Error(), "blkio.throttle.io_serviced") {
		t.Errorf("a removed group: %v, want an error naming the file", err)
	}
}

// On a real group capping a disk of its own, the counters are the
// group's: a program in it writes 300 direct 4 KiB blocks under a cap of
// 200 writes a second, and the group's usage counts those writes and
// bytes on the disk, and nothing that was not its own.
func TestUsageOnRealGroup(t *testing.T) {
	h := SystemHost(target.HostFS().Sys)
	testenv.Require(t, os.Geteuid() == 0 && (h.V1Blkio != "" || h.V2 != ""), "root and cgroup block-I/O control", testenv.HowRootAndBlkio)
	dir := smallfs.MountDisk(t, 64<<20)
	tg, err := target.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tg.Storage(target.HostFS())
	if err != nil || len(st.Physical) != 1 {
		t.Fatalf("the loop disk resolves to %+v, %v", st.Physical, err)
	}
	dev := st.Physical[0].DevNumber
	g, err := h.Create("usage-"+filepath.Base(t.TempDir()), []string{dev}, Limits{WriteIOPS: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	before, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if s := before.Devices[dev]; s.WriteIOs != 0 || s.WriteBytes != 0 {
		t.Fatalf("a new group has served writes already: %+v", s)
	}
	// Writes beside the group, outside it, are not its own.
	if _, err := (execx.Real{}).Run(context.Background(), execx.Cmd{Name: "dd", Args: []string{"if=/dev/zero", "of=" + filepath.Join(dir, "outside"), "bs=4k", "count=50", "oflag=direct"}}); err != nil {
		t.Fatal(err)
	}
	cmd := g.Wrap(execx.Cmd{Name: "dd", Args: []string{"if=/dev/zero", "of=" + filepath.Join(dir, "inside"), "bs=4k", "count=300", "oflag=direct"}})
	if _, err := (execx.Real{}).Run(context.Background(), cmd); err != nil {
		t.Fatal(err)
	}
	after, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	// The filesystem may write a few blocks of its own metadata for the
	// group's file (its journal is written by a kernel thread, outside).
	s := after.Devices[dev]
	if s.WriteIOs < 300 || s.WriteIOs > 320 || s.WriteBytes < 300*4096 || s.WriteBytes > 320*4096 {
		t.Errorf("the group served %d writes and %d bytes for 300 direct writes of 4 KiB", s.WriteIOs, s.WriteBytes)
	}
	t.Logf("group %s (%s): %+v", g.Path, g.Version, after)
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
