package controlchars

import "testing"

func TestCheck(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"/srv/data", ""},
		{"/srv/données ünïcode", ""},
		{"", ""},
		{"A\ndatadir=B\n#", "holds a line break (U+000A) at byte 1"},
		{"a\rb", "holds a line break (U+000D) at byte 1"},
		{"a\tb", "holds a tab (U+0009) at byte 1"},
		{"a\x00", "holds a NUL byte (U+0000) at byte 1"},
		{"\x1b[2J", "holds an escape character (U+001B) at byte 0"},
		{"x\x7f", "holds a control character (U+007F) at byte 1"},
		{"x\u0085y", "holds a line break (U+0085) at byte 1"},
		{"x\u009b2J", "holds a control character (U+009B) at byte 1"},
		{"x\x9b2J", "holds a control character (U+009B) at byte 1"},
		{"ab\u2028", "holds a line break (U+2028) at byte 2"},
		{"ab\u2029", "holds a line break (U+2029) at byte 2"},
		{"a\xffb", ""},
		{"evil\u202etxt.exe", "holds a bidirectional text control (U+202E) at byte 4"},
		{"a\u2066b", "holds a bidirectional text control (U+2066) at byte 1"},
		{"a\u200bb", ""},
	}
	for _, tt := range tests {
		err := Check(tt.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Check(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
