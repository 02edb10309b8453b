package iolimit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Limits
		wantErr string
	}{
		{in: "riops=5000,wiops=3000,rbps=250MB,wbps=200MB", want: Limits{ReadIOPS: 5000, WriteIOPS: 3000, ReadBPS: 250 << 20, WriteBPS: 200 << 20}},
		{in: "wiops=100", want: Limits{WriteIOPS: 100}},
		{in: "sata-hdd", want: Limits{ReadIOPS: 200, WriteIOPS: 200, ReadBPS: 180 << 20, WriteBPS: 180 << 20, Preset: "sata-hdd"}},
		{in: "sata-hdd,wiops=50", want: Limits{ReadIOPS: 200, WriteIOPS: 50, ReadBPS: 180 << 20, WriteBPS: 180 << 20, Preset: "sata-hdd"}},
		{in: "", wantErr: "empty limit"},
		{in: "riops=-1", wantErr: "positive whole number"},
		{in: "rbps=fast", wantErr: "positive size"},
		{in: "xiops=3", wantErr: `unknown key "xiops"`},
		{in: "floppy", wantErr: "neither key=value nor a preset"},
		{in: "wiops=5,sata-ssd", wantErr: "neither key=value nor a preset"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	for _, name := range PresetNames() {
		p, _ := LookupPreset(name)
		if p.Source == "" || p.Limits.IsZero() {
			t.Errorf("preset %s lacks limits or a source", name)
		}
		back, err := Parse(p.Limits.String())
		if err != nil || back.String() != p.Limits.String() {
			t.Errorf("preset %s does not round-trip: %q -> %+v %v", name, p.Limits.String(), back, err)
		}
	}
}

// TestSystemHost finds the hierarchies under the sysfs root it is given,
// never under the running system's /sys.
func TestSystemHost(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string // path under the root -> content
		want  func(root string) Host
	}{
		{"none", nil, func(string) Host { return Host{} }},
		{"v1 blkio", map[string]string{"fs/cgroup/blkio/blkio.throttle.read_iops_device": ""},
			func(root string) Host { return Host{V1Blkio: filepath.Join(root, "fs/cgroup/blkio")} }},
		{"v2 with io", map[string]string{"fs/cgroup/cgroup.controllers": "cpu io memory\n"},
			func(root string) Host { return Host{V2: filepath.Join(root, "fs/cgroup")} }},
		{"v2 without io", map[string]string{"fs/cgroup/cgroup.controllers": "cpu memory\n"},
			func(string) Host { return Host{} }},
		{"hybrid unified", map[string]string{"fs/cgroup/unified/cgroup.controllers": "io\n"},
			func(root string) Host { return Host{V2: filepath.Join(root, "fs/cgroup/unified")} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for p, content := range tt.files {
				full := filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := SystemHost(root), tt.want(root); got != want {
				t.Errorf("SystemHost(%s) = %+v, want %+v", root, got, want)
			}
		})
	}
	if got := SystemHost(""); got != (Host{}) {
		t.Errorf("SystemHost(\"\") = %+v, want no hierarchy", got)
	}
}

func TestCreateWritesV1Files(t *testing.T) {
	root := t.TempDir()
	g, err := Host{V1Blkio: root}.Create("t1", []string{"254:0"}, Limits{ReadIOPS: 10, WriteBPS: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(g.Path, "blkio.throttle.read_iops_device"))
	if string(b) != "254:0 10\n" {
		t.Errorf("read_iops_device = %q", b)
	}
	b, _ = os.ReadFile(filepath.Join(g.Path, "blkio.throttle.write_bps_device"))
	if string(b) != "254:0 1048576\n" {
		t.Errorf("write_bps_device = %q", b)
	}
	if _, err := os.Stat(filepath.Join(g.Path, "blkio.throttle.write_iops_device")); err == nil {
		t.Error("an unset limit was written")
	}
}

// A prepared group caps nothing until Apply: a run's server joins it at
// its start, and the caps bind from the first measured phase.
func TestPrepareCapsOnlyOnceApplied(t *testing.T) {
	root := t.TempDir()
	g, err := Host{V1Blkio: root}.Prepare("t1", []string{"254:0", "8:16"}, Limits{WriteIOPS: 92})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(g.Path, "blkio.throttle.write_iops_device")
	if _, err := os.Stat(file); err == nil {
		t.Fatal("a prepared group already caps its devices")
	}
	if err := g.Apply(); err != nil {
		t.Fatal(err)
	}
	// The kernel takes one device per write; the fixture keeps the last.
	if b, _ := os.ReadFile(file); string(b) != "8:16 92\n" {
		t.Errorf("write_iops_device after Apply = %q", b)
	}
	v2 := t.TempDir()
	g, err = Host{V2: v2}.Prepare("t2", []string{"254:0"}, Limits{ReadIOPS: 10, WriteBPS: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(g.Path, "io.max")); err == nil {
		t.Fatal("a prepared v2 group already caps its devices")
	}
	if err := g.Apply(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(g.Path, "io.max")); string(b) != "254:0 riops=10 wbps=1048576\n" {
		t.Errorf("io.max after Apply = %q", b)
	}
}

// Lift takes off every cap Apply put on, in the form each cgroup version
// removes a rule by.
func TestLiftRemovesTheCaps(t *testing.T) {
	v1 := t.TempDir()
	g, err := Host{V1Blkio: v1}.Create("t1", []string{"254:0"}, Limits{ReadIOPS: 10, WriteIOPS: 92})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Lift(); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"blkio.throttle.read_iops_device": "254:0 0\n", "blkio.throttle.write_iops_device": "254:0 0\n"} {
		if b, _ := os.ReadFile(filepath.Join(g.Path, file)); string(b) != want {
			t.Errorf("%s after Lift = %q, want %q", file, b, want)
		}
	}
	if _, err := os.Stat(filepath.Join(g.Path, "blkio.throttle.read_bps_device")); err == nil {
		t.Error("Lift wrote a cap that was never set")
	}
	v2 := t.TempDir()
	g, err = Host{V2: v2}.Create("t2", []string{"254:0"}, Limits{ReadIOPS: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Lift(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(g.Path, "io.max")); string(b) != "254:0 riops=max wiops=max rbps=max wbps=max\n" {
		t.Errorf("io.max after Lift = %q", b)
	}
}

func TestCreateRefusesClearly(t *testing.T) {
	_, err := Host{}.Create("x", []string{"254:0"}, Limits{ReadIOPS: 1})
	if err == nil || !strings.Contains(err.Error(), "neither cgroup v1 blkio nor a cgroup v2 io controller") {
		t.Errorf("no hierarchy: %v", err)
	}
	_, err = Host{V1Blkio: t.TempDir()}.Create("x", nil, Limits{ReadIOPS: 1})
	if err == nil || !strings.Contains(err.Error(), "no block device") {
		t.Errorf("no device: %v", err)
	}
}

// TestThrottleOnRealDevice caps direct writes on the disk behind a temporary
// directory and sees them take at least as long as the cap implies. Only a
// lower bound is asserted: a busy machine makes the run slower, never faster.
func TestThrottleOnRealDevice(t *testing.T) {
	h := SystemHost(target.HostFS().Sys)
	testenv.Require(t, os.Geteuid() == 0 && (h.V1Blkio != "" || h.V2 != ""), "root and cgroup block-I/O control", testenv.HowRootAndBlkio)
	tg, err := target.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := tg.Storage(target.HostFS())
	testenv.Require(t, err == nil && len(st.Physical) > 0, "a temporary directory on a block device", testenv.HowBlockDeviceTemp)
	var devs []string
	for _, d := range st.Physical {
		devs = append(devs, d.DevNumber)
	}
	g, err := h.Create("test-"+filepath.Base(t.TempDir()), devs, Limits{WriteIOPS: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	file := filepath.Join(tg.Dir, "throttled")
	cmd := g.Wrap(execx.Cmd{Name: "dd", Args: []string{"if=/dev/zero", "of=" + file, "bs=4k", "count=250", "oflag=direct"}})
	start := time.Now()
	if _, err := (execx.Real{}).Run(context.Background(), cmd); err != nil {
		t.Fatal(err)
	}
	// 250 writes at 100/s: about 2.5 s, less the throttle's first slice.
	if d := time.Since(start); d < 1200*time.Millisecond {
		t.Errorf("250 direct writes capped at 100 IOPS took %v; the cap did not apply", d)
	}
	// Lifted, the same writes go at the device's speed, the dd still in the group.
	if err := g.Lift(); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, err := (execx.Real{}).Run(context.Background(), cmd); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= 1200*time.Millisecond {
		t.Errorf("250 direct writes after Lift took %v, as long as capped at 100 IOPS; the cap was not lifted", d)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Path); !os.IsNotExist(err) {
		t.Error("cgroup left behind")
	}
}

func TestIOWaitSaysWhyNot(t *testing.T) {
	dir := t.TempDir()
	g := &Group{Path: dir, Version: "v1-blkio"}
	if file, why := g.IOWait(); file != "" || !strings.Contains(why, "CFQ") {
		t.Errorf("a v1 group without wait files: %q, %q", file, why)
	}
	if err := os.WriteFile(filepath.Join(dir, "blkio.bfq.io_wait_time"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if file, why := g.IOWait(); file != filepath.Join(dir, "blkio.bfq.io_wait_time") || why != "" {
		t.Errorf("a v1 group under BFQ: %q, %q", file, why)
	}
	if file, why := (&Group{Path: t.TempDir(), Version: "v2-io"}).IOWait(); file != "" || !strings.Contains(why, "io.stat") {
		t.Errorf("a v2 group: %q, %q", file, why)
	}
}

// A class is the suite's own sizing when it gives one, else the class it is
// sized from divided by the study's ratio: whole I/Os, whole MiB.
func TestSizeClass(t *testing.T) {
	nvme := Limits{ReadIOPS: 9000, WriteIOPS: 1500, ReadBPS: 390 << 20, WriteBPS: 150 << 20}
	tests := []struct {
		name    string
		defined map[string]Limits
		want    Limits
		err     string
	}{
		{"nvme", map[string]Limits{"nvme": nvme}, Limits{ReadIOPS: 9000, WriteIOPS: 1500, ReadBPS: 390 << 20, WriteBPS: 150 << 20, Class: "nvme"}, ""},
		{"sata", map[string]Limits{"nvme": nvme}, Limits{ReadIOPS: 1385, WriteIOPS: 231, ReadBPS: 60 << 20, WriteBPS: 23 << 20, Class: "sata"}, ""},
		{"sata", map[string]Limits{"nvme": {WriteIOPS: 3, WriteBPS: 1 << 20}}, Limits{WriteIOPS: 1, WriteBPS: 161319, Class: "sata"}, ""},
		{"sata", map[string]Limits{"nvme": nvme, "sata": {WriteIOPS: 100}}, Limits{WriteIOPS: 100, Class: "sata"}, ""},
		{"raid5", map[string]Limits{"raid5": {WriteIOPS: 300}}, Limits{WriteIOPS: 300, Class: "raid5"}, ""},
		{"sata", nil, Limits{}, `the sata class is sized from the nvme class: the nvme class is sized by the suite: add [classes] nvme = "riops=N,wiops=N,rbps=SIZE,wbps=SIZE"`},
		{"stata", map[string]Limits{"raid5": {WriteIOPS: 300}}, Limits{}, `unknown storage class "stata": use one of nvme, raid5, sata, or size it under [classes]`},
	}
	for _, tt := range tests {
		got, err := SizeClass(tt.name, tt.defined)
		switch {
		case tt.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case got != tt.want:
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
