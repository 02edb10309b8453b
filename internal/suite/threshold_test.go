package suite

import (
	"errors"
	"strings"
	"testing"
)

func TestThresholdTables(t *testing.T) {
	base := "name = \"r\"\n[targets.a]\npath = \"/a\"\n[workloads.w]\nkind = \"tpcc\"\nwarehouses = 1\n" +
		"[[runs]]\nname = \"x\"\nworkload = \"w\"\nengine = \"e\"\ndata = \"a\"\nrepeat = 2\n" +
		"[engines.e]\nengine = \"sqlite\"\n"
	p, err := Parse("s.toml", []byte(base+"[[threshold]]\nexpr = \"nopm>=100\"\n[[threshold]]\nexpr = \"new_order:p99<=50ms\"\nrun = \"x\"\n"), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Thresholds) != 2 || p.Thresholds[1].Run != "x" || p.Thresholds[1].Limit != 50 {
		t.Fatalf("thresholds %+v", p.Thresholds)
	}
	if got := p.ThresholdsFor("x"); len(got) != 2 {
		t.Errorf("run x is judged by %d thresholds, want 2", len(got))
	}
	if got := p.ThresholdsFor("y"); len(got) != 1 {
		t.Errorf("run y is judged by %d thresholds, want 1", len(got))
	}
	_, err = Parse("s.toml", []byte(base+"[[threshold]]\nexpr = \"nopmm>=100\"\n[[threshold]]\nexpr = \"nopm>=1\"\nrun = \"xx\"\n[[threshold]]\nrun = \"x\"\n"), testEnv(nil))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v is not a list of problems", err)
	}
	for _, want := range []string{
		`line 16: threshold[0].expr: threshold "nopmm>=100": "nopmm" is not a figure dbio records (did you mean nopm?)`,
		`line 19: threshold[1].run: no run named "xx" (did you mean x?)`,
		`threshold[2].expr: give the bound`,
	} {
		if !strings.Contains(ps.Error(), want) {
			t.Errorf("problems lack %q:\n%s", want, ps.Error())
		}
	}
}
