package tpcc

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// textEncoder writes rows in the tab-separated text that PostgreSQL's COPY
// and MariaDB's LOAD DATA read by default: \N for NULL, backslash escapes.
type textEncoder struct {
	timeLayout string
	// lastTime caches the text of the last timestamp: the loader stamps every
	// row with the same load time.
	lastTime     int64 // Unix nanoseconds
	lastTimeText []byte
}

func (e *textEncoder) writeRow(b *bytes.Buffer, row []value) {
	for i, v := range row {
		if i > 0 {
			b.WriteByte('\t')
		}
		e.writeValue(b, v)
	}
	b.WriteByte('\n')
}

func (e *textEncoder) writeValue(b *bytes.Buffer, v value) {
	switch v.kind {
	case kindNull:
		b.WriteString(`\N`)
	case kindInt:
		b.Write(strconv.AppendInt(b.AvailableBuffer(), v.n, 10))
	case kindString:
		s := v.s
		if needsEscape(s) {
			s = textEscaper.Replace(s)
		}
		b.WriteString(s)
	case kindTime:
		if e.lastTimeText == nil || v.n != e.lastTime {
			e.lastTime = v.n
			e.lastTimeText = time.Unix(0, v.n).AppendFormat(e.lastTimeText[:0], e.timeLayout)
		}
		b.Write(e.lastTimeText)
	}
}

var textEscaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

// needsEscape reports whether s holds a character the text format escapes.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\', '\t', '\n', '\r':
			return true
		}
	}
	return false
}
