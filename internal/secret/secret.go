// Package secret keeps passwords out of everything dbio records, prints or
// renders. It finds the password in a connection string (DSN) of every form
// dbio accepts, in a command line and in free text, replaces it with Mask,
// and scrubs known secret values out of messages such as driver errors.
//
// It is a package of its own, rather than a function of an engine, because
// every layer that writes something down needs the same rule (cmd records the
// command line, the runner records errors, the suite records its plan, the
// report renders all of them) and none of them should know the others' DSN
// forms. The engines parse a DSN to connect; this package reads it only to
// hide what must not leave memory. Where a string is ambiguous (a password
// with an unescaped '@', '/' or space, an unterminated quote, a form it does
// not recognize) it hides more rather than less.
package secret

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Mask replaces every secret dbio would otherwise write down.
const Mask = "***"

// span is a secret's place in a string: s[start:end].
type span struct{ start, end int }

// RedactDSN returns dsn with its password (and any other secret parameter)
// replaced by Mask: postgres://u:***@host/db, host=h password=***,
// u:***@tcp(host:3306)/db. A string of no form dbio accepts is masked whole,
// and the password is masked wherever else it appears in dsn too.
func RedactDSN(dsn string) string { return redact(dsn, dsnSpans(dsn)) }

// Values returns the secrets of dsn as they may appear in a message: as
// written, decoded (percent-escapes, quotes and backslashes undone) and in
// the pieces a driver may cut a malformed one into, for Scrub.
func Values(dsn string) []string { return values(dsn, dsnSpans(dsn), true) }

// Scrubber returns a function that hides dsn's secrets in a message, such as
// a driver's complaint about the DSN that quotes part of it back.
func Scrubber(dsn string) func(string) string {
	found := Values(dsn)
	return func(msg string) string { return Scrub(msg, found) }
}

// RedactText masks what looks like a secret in free text (a label, a shell
// command, a message): the password of any URL or user:password@host, and
// the value of any password-like key=value.
func RedactText(s string) string { return redact(s, textSpans(s)) }

// RedactArgs returns a copy of a command line in which the value of --dsn
// (--dsn X and --dsn=X) is redacted as a DSN, the value of any flag named
// like a password, secret or token is masked whole, and every other
// argument is redacted as free text (a DSN handed to another flag, or to the
// command dbio ab runs, is still hidden).
func RedactArgs(args []string) []string {
	spans := argSpans(args)
	var found []string
	for i, sp := range spans {
		found = append(found, values(args[i], sp, false)...)
	}
	out := make([]string, len(args))
	for i, sp := range spans {
		// A password found in one argument is hidden in every other one.
		out[i] = Scrub(apply(args[i], sp), found)
	}
	return out
}

// ArgValues returns the secrets RedactArgs hides in args, for Scrub.
func ArgValues(args []string) []string {
	var out []string
	for i, sp := range argSpans(args) {
		out = append(out, values(args[i], sp, true)...)
	}
	return out
}

// Scrub replaces every occurrence of each secret in s by Mask, the longest
// secrets first so that one containing another is hidden whole.
func Scrub(s string, secrets []string) string {
	sorted := append([]string(nil), secrets...)
	sort.Slice(sorted, func(i, j int) bool { return len(sorted[i]) > len(sorted[j]) })
	for _, v := range sorted {
		if v != "" {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	return s
}

// ScrubError returns err with every secret scrubbed from its message. The
// result still wraps err, so errors.Is and errors.As see through it; only
// the message changes. An error without any of the secrets is returned as is.
func ScrubError(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := Scrub(err.Error(), secrets)
	if msg == err.Error() {
		return err
	}
	return &scrubbedError{msg: msg, err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// DSN is a connection string that keeps its password to itself: formatted
// with fmt, or encoded as JSON or text, it shows its redacted form. Reveal
// (or a conversion to string) gives the whole string to what connects.
type DSN string

// Reveal returns the connection string with its password.
func (d DSN) Reveal() string { return string(d) }

// String implements fmt.Stringer with the redacted form.
func (d DSN) String() string { return RedactDSN(string(d)) }

// GoString implements fmt.GoStringer, so that %#v hides the password too.
func (d DSN) GoString() string { return fmt.Sprintf("%q", d.String()) }

// Format implements fmt.Formatter: every verb formats the redacted form.
func (d DSN) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, d.GoString())
		return
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), d.String())
}

// MarshalText implements encoding.TextMarshaler (and so JSON) with the
// redacted form.
func (d DSN) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// redact masks the spans of s, then every other occurrence of what they held.
func redact(s string, spans []span) string {
	return Scrub(apply(s, spans), values(s, spans, false))
}

// apply replaces the spans of s by Mask.
func apply(s string, spans []span) string {
	spans = merge(spans)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(Mask)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// values lists the text of each span as written and decoded, and with
// pieces its pieces long enough to hide on their own.
func values(s string, spans []span, pieces bool) []string {
	seen := map[string]bool{}
	var out []string
	add := func(v string) {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, sp := range merge(spans) {
		v := s[sp.start:sp.end]
		add(v)
		if u, err := url.PathUnescape(v); err == nil {
			add(u)
		}
		if u, err := url.QueryUnescape(v); err == nil {
			add(u)
		}
		unquoted := v
		if len(v) >= 1 && v[0] == '\'' {
			unquoted = strings.TrimSuffix(v[1:], "'")
			add(unquoted)
		}
		add(unescape(unquoted))
		if !pieces {
			continue
		}
		// A password with an unescaped delimiter may reach a driver's
		// message in pieces (postgres://u:p@ss@h looks up host "ss@h"):
		// the pieces long enough to be worth hiding are hidden too.
		for _, piece := range strings.FieldsFunc(v, isDelimiter) {
			if len(piece) >= minPiece {
				add(piece)
			}
		}
	}
	return out
}

// minPiece is the shortest piece of a secret that Values lists on its own:
// shorter ones would mask letters all over a message.
const minPiece = 3

func isDelimiter(r rune) bool { return strings.ContainsRune("@/?&:#' \t\n", r) }

// unescape undoes libpq's backslash escapes.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// merge sorts spans and joins those that overlap or touch; empty spans go.
func merge(spans []span) []span {
	var kept []span
	for _, sp := range spans {
		if sp.end > sp.start {
			kept = append(kept, sp)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].start < kept[j].start })
	var out []span
	for _, sp := range kept {
		if n := len(out); n > 0 && sp.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// secretKey says whether a parameter or flag name names a secret:
// password, sslpassword, passwd, pwd, secret, token, in any case.
func secretKey(name string) bool {
	k := strings.ToLower(name)
	for _, w := range []string{"password", "passwd", "secret", "token", "passphrase"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return k == "pwd" || strings.HasSuffix(k, "-pwd") || strings.HasSuffix(k, "_pwd")
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// dsnSpans finds the secrets of a DSN of any accepted form:
//   - a URL (postgres://user:password@host/db?password=...),
//   - libpq keyword/value pairs (host=h password='...'),
//   - go-sql-driver/mysql (user:password@tcp(host:port)/db?params).
func dsnSpans(s string) []span {
	off := 0
	for off < len(s) && isSpace(s[off]) {
		off++
	}
	if off == len(s) {
		return nil
	}
	if end := schemeEnd(s[off:]); end > 0 {
		return urlSpans(s, off+end)
	}
	// Not a URL: read it both as keyword/value pairs and as the MySQL form
	// and hide what either finds, so that a string that is a little of both
	// (a MySQL user named a=b) still loses its password.
	spans := append(keywordSpans(s, off), mysqlSpans(s)...)
	if !keywordForm(s[off:]) && !strings.Contains(s, "/") && !mysqlAddress.MatchString(s) {
		// No form dbio accepts (the MySQL form needs the slash before the
		// database name, or at least user@protocol(address)): it may be a
		// password alone, so hide it all.
		return []span{{0, len(s)}}
	}
	return spans
}

// schemeEnd returns the length of a leading "scheme://", or 0.
func schemeEnd(s string) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			i++
			continue
		}
		break
	}
	if i == 0 || !strings.HasPrefix(s[i:], "://") {
		return 0
	}
	return i + 3
}

var keywordStart = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*[ \t\r\n]*=`)

// keywordForm says whether s starts as libpq keyword/value pairs do.
func keywordForm(s string) bool { return keywordStart.MatchString(s) }

// urlSpans finds the secrets of a URL whose authority starts at start (just
// after "scheme://"). The userinfo is what libpq takes for it: up to the first
// '@', when that comes before any '/'. When another '@' follows in the host
// part, or an '@' comes only after a '/', the password held an unescaped
// character that moved it out of place: everything from the first ':' to the
// last '@' is hidden.
func urlSpans(s string, start int) []span {
	rest := s[start:]
	var spans []span
	tail := start
	userinfoEnd := -1
	first := strings.IndexAny(rest, "@/")
	last := strings.LastIndexByte(rest, '@')
	switch {
	case first >= 0 && rest[first] == '@':
		host := rest[first+1:]
		if i := strings.IndexAny(host, "/?"); i >= 0 {
			host = host[:i]
		}
		userinfoEnd = first
		if strings.Contains(host, "@") {
			userinfoEnd = last
		}
	case last >= 0:
		userinfoEnd = last
	}
	if userinfoEnd >= 0 {
		if c := strings.IndexByte(rest[:userinfoEnd], ':'); c >= 0 {
			spans = append(spans, span{start + c + 1, start + userinfoEnd})
		}
		tail = start + userinfoEnd + 1
	}
	if q := strings.IndexByte(s[tail:], '?'); q >= 0 {
		spans = append(spans, querySpans(s, tail+q+1)...)
	}
	return spans
}

// querySpans finds the secret values of key=value&... parameters starting
// at from. Segments without '=' right after a secret value are taken for
// the rest of it (a password with an unescaped '&').
func querySpans(s string, from int) []span {
	var spans []span
	secretBefore := false
	for i := from; i <= len(s); {
		end := strings.IndexByte(s[i:], '&')
		if end < 0 {
			end = len(s)
		} else {
			end += i
		}
		pair := s[i:end]
		key, _, hasValue := strings.Cut(pair, "=")
		switch {
		case hasValue && secretKey(lenientUnescape(key)):
			spans = append(spans, span{i + len(key) + 1, end})
			secretBefore = true
		case !hasValue && secretBefore:
			spans = append(spans, span{i, end})
		default:
			secretBefore = false
		}
		i = end + 1
	}
	return spans
}

func lenientUnescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// keywordSpans finds the secret values of libpq keyword/value pairs from
// off: a value is single-quoted (backslash escapes inside; unterminated, it
// runs to the end) or runs to the next space. Bare words right after a
// secret value are taken for the rest of it (a password with an unquoted space).
func keywordSpans(s string, off int) []span {
	var spans []span
	secretBefore := false
	i := off
	for i < len(s) {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
		ks := i
		for i < len(s) && s[i] != '=' && !isSpace(s[i]) {
			i++
		}
		key := s[ks:i]
		j := i
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		if j == len(s) || s[j] != '=' {
			if secretBefore {
				spans = append(spans, span{ks, i})
			}
			continue
		}
		i = j + 1
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		vs := i
		if i < len(s) && s[i] == '\'' {
			for i++; i < len(s); i++ {
				if s[i] == '\\' {
					i++
					continue
				}
				if s[i] == '\'' {
					i++
					break
				}
			}
		} else {
			for ; i < len(s) && !isSpace(s[i]); i++ {
				if s[i] == '\\' {
					i++
				}
			}
		}
		i = min(i, len(s))
		secretBefore = secretKey(key)
		if secretBefore {
			spans = append(spans, span{vs, i})
		}
	}
	return spans
}

// mysqlSpans finds the secrets of the go-sql-driver/mysql form: the password
// runs from the first ':' to the last '@' (the driver takes the last '@'
// before the database name; any later '@' only hides more), and secret
// parameters after the '?'.
// mysqlAddress recognises the MySQL form by its user@protocol( part, so
// that a DSN missing only its /database still has just its password hidden
// and a message about it stays readable.
var mysqlAddress = regexp.MustCompile(`@(tcp|tcp6|unix)\(`)

func mysqlSpans(s string) []span {
	var spans []span
	tail := 0
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		if c := strings.IndexByte(s[:at], ':'); c >= 0 {
			spans = append(spans, span{c + 1, at})
		}
		tail = at + 1
	}
	if q := strings.IndexByte(s[tail:], '?'); q >= 0 {
		spans = append(spans, querySpans(s, tail+q+1)...)
	}
	return spans
}

var (
	wordPattern = regexp.MustCompile(`\S+`)
	// secretPair is a password-like key and its value in free text.
	secretPair = regexp.MustCompile(`(?i)[a-z0-9_-]*(?:password|passwd|pwd|secret|token|passphrase)[a-z0-9_-]*[ \t]*=[ \t]*('(?:\\.|[^'\\])*'?|"(?:\\.|[^"\\])*"?|[^\s&'"` + "`" + `]*)`)
)

// textSpans finds secrets in free text: password-like key=value pairs, and
// in each word the password of a URL or of user:password@host.
func textSpans(s string) []span {
	var spans []span
	for _, m := range secretPair.FindAllStringSubmatchIndex(s, -1) {
		spans = append(spans, span{m[2], m[3]})
	}
	for _, w := range wordPattern.FindAllStringIndex(s, -1) {
		word := s[w[0]:w[1]]
		if i := strings.Index(word, "://"); i >= 0 {
			b := i
			for b > 0 && schemeEnd(word[b-1:]) > 0 {
				b--
			}
			if schemeEnd(word[b:]) == 0 {
				continue
			}
			for _, sp := range urlSpans(word, b+schemeEnd(word[b:])) {
				spans = append(spans, span{w[0] + sp.start, w[0] + sp.end})
			}
			continue
		}
		if at := strings.LastIndexByte(word, '@'); at >= 0 {
			if c := strings.IndexByte(word[:at], ':'); c >= 0 {
				spans = append(spans, span{w[0] + c + 1, w[0] + at})
			}
		}
	}
	return spans
}

// argSpans finds the secrets of each argument of a command line.
func argSpans(args []string) [][]span {
	out := make([][]span, len(args))
	next := ""
	for i, a := range args {
		switch next {
		case "dsn":
			out[i], next = dsnSpans(a), ""
			continue
		case "secret":
			out[i], next = []span{{0, len(a)}}, ""
			continue
		}
		name := strings.TrimLeft(a, "-")
		if name == a || name == "" {
			out[i] = textSpans(a)
			continue
		}
		name, value, hasValue := strings.Cut(name, "=")
		valueAt := len(a) - len(value)
		switch {
		case dsnFlag(name) && hasValue:
			out[i] = shift(dsnSpans(value), valueAt)
		case dsnFlag(name):
			next = "dsn"
		case secretKey(name) && hasValue:
			out[i] = []span{{valueAt, len(a)}}
		case secretKey(name):
			next = "secret"
		default:
			out[i] = textSpans(a)
		}
	}
	return out
}

// dsnFlag says whether a flag takes a DSN: --dsn, or any --something-dsn.
func dsnFlag(name string) bool {
	n := strings.ToLower(name)
	return n == "dsn" || strings.HasSuffix(n, "-dsn") || strings.HasSuffix(n, "_dsn")
}

func shift(spans []span, by int) []span {
	for i := range spans {
		spans[i].start += by
		spans[i].end += by
	}
	return spans
}
