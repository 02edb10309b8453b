package suite

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestExpandCrossesVariants(t *testing.T) {
	p, err := Load("testdata/good.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Runs) != 2+4 {
		t.Fatalf("%d runs, want 6", len(p.Runs))
	}
	var names []string
	for _, r := range p.Runs {
		names = append(names, r.Name)
	}
	want := []string{"corners-nvme", "corners-sata", "memory-nvme-8MB", "memory-nvme-256MB", "memory-sata-8MB", "memory-sata-256MB"}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("run names %v, want %v", names, want)
		}
	}
	r := p.Runs[2]
	if r.BufferPool != 8<<20 || r.Data.Limits.ReadIOPS == 0 || r.Step != 20*time.Second || r.Engine != "sqlite" {
		t.Errorf("run %+v", r)
	}
	var out bytes.Buffer
	est := func(r Run) (time.Duration, uint64) { return time.Minute, 100 << 20 }
	if err := p.DryRun(&out, est); err != nil {
		t.Fatal(err)
	}
	golden(t, "good.dryrun", out.Bytes())
}

func TestValidationPointsAtLines(t *testing.T) {
	_, err := Load("testdata/bad.toml", nil)
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v is not a list of problems", err)
	}
	golden(t, "bad.problems", []byte(ps.Error()+"\n"))
}

func TestDecodeErrorsPointAtLines(t *testing.T) {
	tests := map[string]string{
		"unknown key": "name = \"x\"\n[targets.a]\npath = \"/x\"\nspeed = 3\n",
		"bad syntax":  "name = \"x\"\n[targets.a\n",
		"wrong type":  "name = \"x\"\n[workloads.w]\nkind = \"tpcc\"\nwarehouses = \"many\"\n",
	}
	for name, text := range tests {
		_, err := Parse("s.toml", []byte(text), nil)
		var ps *Problems
		if !errors.As(err, &ps) || ps.Items[0].Line == 0 {
			t.Errorf("%s: %v, want a located problem", name, err)
		}
	}
}
