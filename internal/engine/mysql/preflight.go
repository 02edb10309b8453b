package mysql

import (
	"errors"
	"fmt"
	mysqldrv "github.com/go-sql-driver/mysql"
	"net"
	"net/url"
	"strings"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
)

var _ engine.Layout = (*Engine)(nil)

// dsns read DSNs as go-sql-driver does; the unix network is a socket.
var dsns = server.DSN[*mysqldrv.Config]{
	Parse:   parseDSN,
	Socket:  func(c *mysqldrv.Config) bool { return c.Net == "unix" },
	Forms:   "user:password@tcp(host:3306)/, user:password@unix(/run/mysqld/mysqld.sock)/ or mysql://user:password@host:3306/",
	Address: func(c *mysqldrv.Config) string { return c.Addr },
	Scheme:  dsnScheme,
	Refusal: refusal,
}

// parseDSN reads dsn as go-sql-driver does, and a mysql:// or mariadb://
// URL too, which the driver alone misreads (its user would be "mysql").
func parseDSN(dsn string) (*mysqldrv.Config, error) {
	d, err := driverForm(dsn)
	if err != nil {
		return nil, err
	}
	return mysqldrv.ParseDSN(d)
}

// driverForm is dsn in go-sql-driver's form: a mysql:// or mariadb:// URL
// (mysql://user:password@host:3306/db?param=value) rewritten, the
// driver's form behind such a scheme (mysql://user@tcp(host:3306)/) with
// the scheme dropped, and any other DSN as it is.
func driverForm(dsn string) (string, error) {
	scheme, rest, isURL := strings.Cut(dsn, "://")
	if !isURL || (scheme != "mysql" && scheme != "mariadb") {
		return dsn, nil
	}
	if strings.Contains(rest, "@tcp(") || strings.Contains(rest, "@unix(") || strings.HasPrefix(rest, "tcp(") || strings.HasPrefix(rest, "unix(") {
		return rest, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		// url's error quotes the DSN, password and all.
		return "", fmt.Errorf("a %s:// URL that does not parse: write it as %s://user:password@host:3306/ (the password percent-encoded)", scheme, scheme)
	}
	cfg := mysqldrv.NewConfig()
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "3306"
	}
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, port)
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	d := cfg.FormatDSN()
	if u.RawQuery != "" {
		sep := "?"
		if strings.Contains(d, "?") {
			sep = "&"
		}
		d += sep + u.RawQuery
	}
	return d, nil
}

// dsnScheme says whether dsn is written for MySQL or MariaDB: a mysql://
// or mariadb:// URL, or the driver's user:password@tcp(host:port)/ form.
func dsnScheme(dsn string) (string, bool) {
	scheme, _, isURL := strings.Cut(dsn, "://")
	if isURL {
		return scheme, scheme == "mysql" || scheme == "mariadb"
	}
	return "", strings.Contains(dsn, "@tcp(") || strings.Contains(dsn, "@unix(") || strings.HasPrefix(dsn, "tcp(") || strings.HasPrefix(dsn, "unix(")
}

// refusal says what a server's refusal of a connection means, by its
// error number, and what the user checks.
func refusal(err error) (reason, hint string, ok bool) {
	var me *mysqldrv.MySQLError
	if !errors.As(err, &me) {
		return "", "", false
	}
	switch me.Number {
	case 1045:
		return me.Message, "check the DSN's user and password (or " + PasswordEnv + " when the DSN has none), and the hosts the user may connect from", true
	case 1044:
		return me.Message, "grant the user that database, or name another in the DSN (dbio creates its own beside it)", true
	case 1049:
		return me.Message, "check the DSN's database, or leave it out (user:password@tcp(host:3306)/): dbio creates its own", true
	case 1130:
		return me.Message, "the server does not let this host in: create the user for it (CREATE USER 'name'@'this-host')", true
	case 1040:
		return me.Message, "the server has no connection to spare: wait for other clients, or raise its max_connections", true
	}
	return "", "", false
}

// Subdirs implements engine.Layout. Which server is installed decides the
// directory's name (mariadb or mysql), so both are named.
func (e *Engine) Subdirs(separateLog bool) (data, log []string) {
	data = []string{string(mariadb), string(mysql)}
	if separateLog {
		log = []string{string(mariadb) + "-redo", string(mysql) + "-redo"}
	}
	return data, log
}

// Replaces implements engine.Layout: a fresh start re-creates the whole
// instance, in whichever of the two directories the installed server uses.
func (e *Engine) Replaces(engine.Options) []string { return []string{string(mariadb), string(mysql)} }
