package tpcc

import (
	"bytes"
	"fmt"
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
	lastTime     time.Time
	lastTimeText []byte
}

func (e *textEncoder) writeRow(b *bytes.Buffer, row []any) {
	for i, v := range row {
		if i > 0 {
			b.WriteByte('\t')
		}
		e.writeValue(b, v)
	}
	b.WriteByte('\n')
}

func (e *textEncoder) writeValue(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString(`\N`)
	case int:
		b.Write(strconv.AppendInt(b.AvailableBuffer(), int64(x), 10))
	case string:
		if needsEscape(x) {
			x = textEscaper.Replace(x)
		}
		b.WriteString(x)
	case time.Time:
		if e.lastTimeText == nil || !x.Equal(e.lastTime) {
			e.lastTime = x
			e.lastTimeText = x.AppendFormat(e.lastTimeText[:0], e.timeLayout)
		}
		b.Write(e.lastTimeText)
	case float64:
		b.Write(strconv.AppendFloat(b.AvailableBuffer(), x, 'f', -1, 64))
	default:
		fmt.Fprint(b, x)
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
