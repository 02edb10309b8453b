package tpcc

import (
	"strings"
	"testing"
)

// TestColumnTypes checks each engine's name for every generic type the
// schema uses, and that an engine's DDL carries it.
func TestColumnTypes(t *testing.T) {
	for _, tc := range []struct {
		engine string
		types  columnTypes
		want   map[string]string
	}{
		{"sqlite", sqliteTypes, map[string]string{"int": "INTEGER", "ts": "TIMESTAMP", "dec(12,2)": "NUMERIC", "varchar(24)": "TEXT", "char(2)": "TEXT"}},
		{"postgres", pgTypes, map[string]string{"int": "integer", "ts": "timestamp", "dec(12,2)": "numeric(12,2)", "varchar(24)": "varchar(24)", "char(2)": "char(2)"}},
		{"mariadb", myTypes, map[string]string{"int": "INT", "ts": "DATETIME", "dec(12,2)": "DECIMAL(12,2)", "varchar(24)": "VARCHAR(24)", "char(2)": "CHAR(2)"}},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			for generic, want := range tc.want {
				if got := tc.types.of(generic); got != want {
					t.Errorf("%s: %q, want %q", generic, got, want)
				}
			}
			ddl := tableByName("orders").createSQL(tc.types, " WITHOUT ROWID")
			for _, line := range []string{"o_carrier_id " + tc.want["int"] + ",", "o_entry_d " + tc.want["ts"] + " NOT NULL,", "PRIMARY KEY (o_w_id, o_d_id, o_id)"} {
				if !strings.Contains(ddl, line) {
					t.Errorf("DDL lacks %q:\n%s", line, ddl)
				}
			}
			if !strings.HasSuffix(ddl, ") WITHOUT ROWID") {
				t.Errorf("a narrow table's DDL does not end with its suffix:\n%s", ddl)
			}
		})
	}
}
