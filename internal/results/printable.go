package results

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"dbio/internal/controlchars"
)

// Text read from a results directory reaches terminals (dbio runs, report,
// compare), Markdown and CSV files. A string there carrying terminal
// controls could clear a screen, fake a line of output or write the
// clipboard (OSC 52), so every string is made printable once, as it is
// read: each control character becomes a visible escape ("\x1b", "\r",
// "\u2028"). dbio writes none, so nothing it wrote changes.

// isControl says whether r acts on a terminal instead of printing, by
// controlchars' one rule, except tabs and newlines: messages and notes
// span lines.
func isControl(r rune) bool {
	return r != '\t' && r != '\n' && controlchars.Is(r)
}

// visible is the escape that shows the control character r.
func visible(r rune) string {
	if r == '\r' {
		return `\r`
	}
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// Printable is s with every control character and every byte that is not
// UTF-8 shown as an escape.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || isControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case isControl(r):
			b.WriteString(visible(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// printableJSON returns the JSON text b with each control character in its
// strings, raw or escaped (\u001b, \r), replaced by its visible escape, so
// that every string decoded from it, json.RawMessage included, is
// printable. b is returned as it is when it holds none.
func printableJSON(b []byte) []byte {
	var out []byte // nil until the first change
	inString := false
	last := 0 // b[:last] is in out, when out is not nil
	replace := func(from, to int, r rune) {
		if out == nil {
			out = make([]byte, 0, len(b)+64)
		}
		out = append(out, b[last:from]...)
		// An escaped backslash, then the escape's letters: the decoded
		// string holds the escape as text.
		out = append(out, `\\`...)
		out = append(out, visible(r)[1:]...)
		last = to
	}
	for i := 0; i < len(b); {
		c := b[i]
		if !inString {
			inString = c == '"'
			i++
			continue
		}
		switch {
		case c == '"':
			inString = false
			i++
		case c == '\\' && i+1 < len(b):
			switch b[i+1] {
			case 'b':
				replace(i, i+2, '\b')
			case 'f':
				replace(i, i+2, '\f')
			case 'r':
				replace(i, i+2, '\r')
			case 'u':
				if i+6 <= len(b) {
					if v, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 32); err == nil && isControl(rune(v)) {
						replace(i, i+6, rune(v))
					}
				}
			}
			i += 2
		case c < utf8.RuneSelf:
			if c == 0x7f {
				replace(i, i+1, 0x7f)
			}
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if isControl(r) {
				replace(i, i+n, r)
			}
			i += n
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
