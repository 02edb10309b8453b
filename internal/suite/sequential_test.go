package suite

import (
	"errors"
	"strings"
	"testing"
)

// until_decided compares a run's two variants until a sequential test
// decides: it reaches every run of the entry with its margin, and what it
// cannot do is refused where it is written, with the fix.
func TestUntilDecidedKeys(t *testing.T) {
	const file = `name = "x"
[targets.a]
path = "/x"
[targets.b]
path = "/y"
[engines.e]
engine = "sqlite"
[workloads.w]
kind = "tpcc"
warehouses = 1
[[runs]]
workload = "w"
engine = "e"
%RUN%
`
	parse := func(run string) (*Plan, error) {
		return Parse("s.toml", []byte(strings.Replace(file, "%RUN%", run, 1)), testEnv(nil))
	}
	p, err := parse("data = [\"a\", \"b\"]\nrepeat = 6\nuntil_decided = true\nmargin = \"2%\"")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Runs) != 12 {
		t.Fatalf("%d runs, want 6 rounds of 2", len(p.Runs))
	}
	for _, r := range p.Runs {
		if !r.UntilDecided || r.MarginPct != 2 {
			t.Errorf("run %s: until decided %v, margin %v %%", r.Name, r.UntilDecided, r.MarginPct)
		}
	}
	if p, err := parse("data = [\"a\", \"b\"]\nrepeat = 5\nuntil_decided = true"); err != nil || p.Runs[0].MarginPct != 5 {
		t.Errorf("the default margin: %v, %+v", err, p)
	}
	for _, tt := range []struct{ run, says string }{
		{"data = \"a\"\nrepeat = 6\nuntil_decided = true", "runs[0].until_decided: a sequential comparison is of two variants (A and B), and this run crosses 1"},
		{"data = [\"a\", \"b\"]\nrepeat = 4\nuntil_decided = true", "runs[0].repeat: with until_decided repeat is the most runs a side"},
		{"data = [\"a\", \"b\"]\nrepeat = 6\nuntil_decided = true\nmargin = \"five\"", `runs[0].margin: "five": give a percentage from 0% to 50%`},
		{"data = [\"a\", \"b\"]\nrepeat = 6\nmargin = \"5%\"", "runs[0].margin: applies only with until_decided = true"},
	} {
		_, err := parse(tt.run)
		var ps *Problems
		if !errors.As(err, &ps) || !strings.Contains(ps.Error(), tt.says) {
			t.Errorf("%q: %v, want a problem saying %q", tt.run, err, tt.says)
		}
	}
}
