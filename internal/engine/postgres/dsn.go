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
