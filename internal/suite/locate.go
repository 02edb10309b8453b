package suite

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// locator maps table and key to the line they are written on, so that a
// problem found after decoding still points at the file. Array tables are
// numbered as decoded: the second [[runs]] is "runs[1]".
type locator struct {
	keys   map[string]int // "table\x00key" -> line
	tables map[string]int // table -> line of its header
}

func newLocator(b []byte) *locator {
	l := &locator{keys: map[string]int{}, tables: map[string]int{}}
	arrays := map[string]int{}
	table := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "[["):
			name := strings.TrimSpace(strings.Trim(strings.SplitN(line, "#", 2)[0], "[] \t"))
			idx := arrays[name]
			arrays[name] = idx + 1
			table = fmt.Sprintf("%s[%d]", name, idx)
			l.tables[table] = n
		case strings.HasPrefix(line, "["):
			name := strings.TrimSpace(strings.Trim(strings.SplitN(line, "#", 2)[0], "[] \t"))
			// A sub-table of the last array element: [runs.backups] after [[runs]].
			for arr, count := range arrays {
				if strings.HasPrefix(name, arr+".") {
					name = fmt.Sprintf("%s[%d]%s", arr, count-1, strings.TrimPrefix(name, arr))
				}
			}
			table = name
			l.tables[table] = n
		default:
			key, _, ok := strings.Cut(line, "=")
			if !ok {
				continue
			}
			key = strings.Trim(strings.TrimSpace(key), `"'`)
			// Dotted keys (a.b = 1) address sub-tables of the current table.
			if i := strings.LastIndex(key, "."); i > 0 {
				sub := key[:i]
				key = key[i+1:]
				if table == "" {
					l.keys[sub+"\x00"+key] = n
				} else {
					l.keys[table+"."+sub+"\x00"+key] = n
				}
				continue
			}
			l.keys[table+"\x00"+key] = n
		}
	}
	return l
}

// line returns the line of key in table, else of the table's header, else 0.
func (l *locator) line(table, key string) int {
	if n, ok := l.keys[table+"\x00"+key]; ok {
		return n
	}
	if n, ok := l.tables[table]; ok {
		return n
	}
	return 0
}
