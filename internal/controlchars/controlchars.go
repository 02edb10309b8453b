// Package controlchars finds the characters that must never reach a
// configuration file, an fio job file or a terminal from what a user typed:
// a line break in a path written into my.cnf starts a line of the user's
// choosing there, and an escape sequence printed in a message rewrites the
// terminal. Text holding one is refused, never cleaned up, so that what
// runs is exactly what was asked.
package controlchars

import (
	"fmt"
	"unicode/utf8"
)

// Is says whether r acts on what displays it instead of printing as
// itself: a C0 control (below U+0020, the tab and the line breaks among
// them), DEL (U+007F), a C1 control (U+0080 to U+009F, which terminals
// obey too), Unicode's line and paragraph separators (U+2028, U+2029), or
// one of the bidirectional embeddings, overrides and isolates (U+202A to
// U+202E, U+2066 to U+2069), which reorder the text around them so that
// what a reader sees is not what the bytes say. This is the one rule:
// input holding one is refused (Find, Check), text read back from disk
// shows it as an escape (results.Printable).
func Is(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x2028 || r == 0x2029 ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// Find returns the first control character in s (see Is) and its byte
// offset. ok is false when s holds none.
func Find(s string) (r rune, at int, ok bool) {
	for i, c := range s {
		if c == utf8.RuneError {
			// A byte that is not UTF-8 is read as itself: 0x80 to 0x9F
			// are C1 controls to an 8-bit terminal.
			if b := s[i]; b >= 0x80 && b <= 0x9f {
				return rune(b), i, true
			}
			continue
		}
		if Is(c) {
			return c, i, true
		}
	}
	return 0, 0, false
}

// Check is nil for text without a control character, else an error that
// names the first one and where it is: "holds a line break (U+000A) at
// byte 4". Callers say whose text it is: fmt.Errorf("--target %q: %w", p, err)
// (%q shows the character escaped, never raw).
func Check(s string) error {
	r, at, ok := Find(s)
	if !ok {
		return nil
	}
	return fmt.Errorf("holds %s (U+%04X) at byte %d", name(r), r, at)
}

// name says what a control character is in words.
func name(r rune) string {
	switch r {
	case '\n', '\r', 0x85, 0x2028, 0x2029:
		return "a line break"
	case '\t':
		return "a tab"
	case 0:
		return "a NUL byte"
	case 0x1b:
		return "an escape character"
	}
	if r >= 0x202a && r <= 0x2069 {
		return "a bidirectional text control"
	}
	return "a control character"
}
