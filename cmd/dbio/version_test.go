package main

import "testing"

func TestBuildVersion(t *testing.T) {
	rev := "10fbf4b2bf2299418dac5a7d44d257a898e7c67b"
	cases := []struct {
		name        string
		b           build
		date        string
		short, long string
	}{
		{"release", build{module: "v1.2.0", goVer: "go1.26.8"}, "", "v1.2.0", "v1.2.0, go1.26.8"},
		{"checkout", build{module: "(devel)", revision: rev, commitAt: "2026-11-23T21:16:29Z", goVer: "go1.26.8"}, "2026-11-24T09:00:00Z",
			"devel-10fbf4b2bf22", "devel-10fbf4b2bf22, commit " + rev + " of 2026-11-23T21:16:29Z, built 2026-11-24T09:00:00Z, go1.26.8"},
		{"dirty", build{module: "(devel)", revision: rev, modified: true}, "", "devel-10fbf4b2bf22-dirty", "devel-10fbf4b2bf22-dirty, commit " + rev},
		{"no vcs", build{module: "(devel)", goVer: "go1.26.8"}, "", "devel",
			"devel, go1.26.8, no commit recorded: build with 'make build' or 'go build -buildvcs=true' from a git checkout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.b.short(); got != c.short {
				t.Errorf("short() = %q, want %q", got, c.short)
			}
			if got := c.b.long(c.date); got != c.long {
				t.Errorf("long() = %q, want %q", got, c.long)
			}
		})
	}
}
