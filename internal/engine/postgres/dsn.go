package postgres

import (
	"fmt"
	"net/url"
	"strings"
)

// keywordDSN renders keyword/value pairs as a libpq connection string, quoting
// every value so that paths with spaces survive.
func keywordDSN(pairs ...[2]string) string {
	parts := make([]string, 0, len(pairs))
	for _, kv := range pairs {
		v := strings.ReplaceAll(kv[1], `\`, `\\`)
		v = strings.ReplaceAll(v, `'`, `\'`)
		parts = append(parts, fmt.Sprintf("%s='%s'", kv[0], v))
	}
	return strings.Join(parts, " ")
}

// withDatabase returns the user's DSN pointed at database db instead of the one
// it names, keeping everything else (hosts, user, password, TLS settings) as
// given. In both DSN forms a later dbname wins over an earlier one (and over a
// URL's path), so the DSN is extended rather than re-written.
func withDatabase(dsn, db string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "dbname=" + url.QueryEscape(db)
	}
	return strings.TrimSpace(dsn) + " " + keywordDSN([2]string{"dbname", db})
}

// withPassword returns dsn, which carries no password, with password added:
// a query parameter of a URL (percent-encoded the way libpq decodes it: no
// '+' for a space), a quoted pair of a keyword/value string.
func withPassword(dsn, password string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "password=" + strings.ReplaceAll(url.QueryEscape(password), "+", "%20")
	}
	return strings.TrimSpace(dsn) + " " + keywordDSN([2]string{"password", password})
}

// withoutPassword returns dsn without its password, so that the command line
// of pg_dump and pg_restore, which anyone on the machine may read, does not
// carry it; the password goes to them in their environment instead.
func withoutPassword(dsn string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", err
		}
		if u.User != nil {
			u.User = url.User(u.User.Username())
		}
		q := u.Query()
		if q.Has("password") {
			q.Del("password")
			u.RawQuery = q.Encode()
		}
		return u.String(), nil
	}
	pairs, err := keywordPairs(dsn)
	if err != nil {
		return "", err
	}
	kept := pairs[:0]
	for _, kv := range pairs {
		if kv[0] != "password" {
			kept = append(kept, kv)
		}
	}
	return keywordDSN(kept...), nil
}

// keywordPairs reads a libpq keyword/value connection string: keyword = value
// pairs separated by spaces, a value either single-quoted or running to the
// next space, backslash escaping the next character in both.
func keywordPairs(s string) ([][2]string, error) {
	var pairs [][2]string
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
	}
	for {
		skipSpace()
		if i == len(s) {
			return pairs, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		key := s[start:i]
		skipSpace()
		if i == len(s) || s[i] != '=' || key == "" {
			// Neither the string nor the rest of it is quoted: either may hold the password.
			return nil, fmt.Errorf("connection string: expected keyword=value at character %d", start+1)
		}
		i++
		skipSpace()
		var v strings.Builder
		quoted := i < len(s) && s[i] == '\''
		if quoted {
			i++
		}
		closed := !quoted
		for i < len(s) {
			c := s[i]
			if c == '\\' && i+1 < len(s) {
				v.WriteByte(s[i+1])
				i += 2
				continue
			}
			if quoted && c == '\'' {
				i++
				closed = true
				break
			}
			if !quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
				break
			}
			v.WriteByte(c)
			i++
		}
		if !closed {
			return nil, fmt.Errorf("connection string: unterminated quoted value for %s", key)
		}
		pairs = append(pairs, [2]string{key, v.String()})
	}
}
