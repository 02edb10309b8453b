package engine

import (
	"net/url"
	"regexp"
	"strings"
)

// DSNChecker is implemented by engines that can work on an existing server
// (external mode, --dsn). An engine without it has no external mode.
type DSNChecker interface {
	// CheckDSN parses dsn without connecting and says how it reaches the
	// server: "socket" or "tcp". Its error may quote the DSN: show it
	// through MaskDSN's scrub.
	CheckDSN(dsn string) (transport string, err error)
}

// Layout is implemented by engines that keep their files in dbio's
// directory on the targets, so that a preflight can look at those places
// before anything is written.
type Layout interface {
	// Subdirs names the subdirectories of <target>/dbio the engine works in
	// on the data target, and on the log target when the log has its own.
	Subdirs(separateLog bool) (data, log []string)
	// Replaces lists the paths, relative to <data target>/dbio, that a fresh
	// start with o removes before it writes: their space counts as free.
	Replaces(o Options) []string
}

// MaskDSN returns dsn with its password replaced by ***, in the URL form
// (postgres://user:password@host/db, password=... in the query), the
// keyword form (password=...) and go-sql-driver's form
// (user:password@tcp(host:3306)/db), and scrub, which replaces the password
// wherever else it appears (an error message quoting the DSN), for DSNs
// that may not even parse.
func MaskDSN(dsn string) (masked string, scrub func(string) string) {
	var secrets []string
	masked = passwordKV.ReplaceAllStringFunc(dsn, func(kv string) string {
		m := passwordKV.FindStringSubmatch(kv)
		secrets = append(secrets, strings.Trim(m[2], `'`))
		return m[1] + "***"
	})
	rest, scheme := masked, ""
	if i := strings.Index(rest, "://"); i >= 0 {
		scheme, rest = rest[:i+3], rest[i+3:]
	}
	if at := strings.LastIndex(rest, "@"); at > 0 {
		if colon := strings.Index(rest[:at], ":"); colon >= 0 && rest[colon+1:at] != "***" {
			secrets = append(secrets, rest[colon+1:at])
			masked = scheme + rest[:colon+1] + "***" + rest[at:]
		}
	}
	var all []string
	for _, s := range secrets {
		if s == "" || s == "***" {
			continue
		}
		all = append(all, s)
		if u, err := url.PathUnescape(s); err == nil && u != s {
			all = append(all, u)
		}
	}
	return masked, func(text string) string {
		for _, s := range all {
			text = strings.ReplaceAll(text, s, "***")
		}
		return text
	}
}

// passwordKV finds password settings: keyword form (quoted or not) and URL query.
var passwordKV = regexp.MustCompile(`(?i)(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)`)
