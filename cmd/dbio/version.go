package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// buildDate is stamped by the Makefile (-ldflags -X main.buildDate=...): the
// build information Go embeds has the commit's time but not the build's.
var buildDate string

// build is what the binary knows of its own making.
type build struct {
	module   string // module version, "(devel)" for a checkout
	revision string // VCS commit, empty when built without VCS stamping
	modified bool   // built from a working tree with uncommitted changes
	commitAt string // the commit's time (RFC 3339)
	goVer    string
}

func readBuild() build {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return build{}
	}
	b := build{module: info.Main.Version, goVer: info.GoVersion}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.revision = s.Value
		case "vcs.modified":
			b.modified = s.Value == "true"
		case "vcs.time":
			b.commitAt = s.Value
		}
	}
	return b
}

// version is the short form recorded in run.json and reports: the module
// version, or the commit for a development build.
func version() string { return readBuild().short() }

func (b build) short() string {
	if b.module != "" && b.module != "(devel)" {
		return b.module
	}
	if b.revision == "" {
		return "devel"
	}
	rev := b.revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if b.modified {
		rev += "-dirty"
	}
	return "devel-" + rev
}

// long is what `dbio --version` prints: enough to rebuild the same binary.
func (b build) long(date string) string {
	parts := []string{b.short()}
	if b.revision != "" {
		c := "commit " + b.revision
		if b.commitAt != "" {
			c += " of " + b.commitAt
		}
		parts = append(parts, c)
	}
	if date != "" {
		parts = append(parts, "built "+date)
	}
	if b.goVer != "" {
		parts = append(parts, b.goVer)
	}
	if b.revision == "" && (b.module == "" || b.module == "(devel)") {
		parts = append(parts, "no commit recorded: build with 'make build' or 'go build -buildvcs=true' from a git checkout")
	}
	return strings.Join(parts, ", ")
}

// isCobraUsage recognizes cobra's own argument errors, which it returns as plain errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "invalid argument", "unknown flag", "unknown shorthand"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// versionTemplate prints cobra's --version line from the long form.
func versionTemplate() string {
	return fmt.Sprintf("dbio %s\n", readBuild().long(buildDate))
}
