package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Cardinalities of clause 1.2 and 4.3.3.1.
const (
	Items                 = 100000
	StockPerWarehouse     = Items
	DistrictsPerWarehouse = 10
	CustomersPerDistrict  = 3000
	OrdersPerDistrict     = 3000
	// NewOrdersPerDistrict: orders 2101..3000 are undelivered at load time.
	NewOrdersPerDistrict = 900
	firstUndelivered     = OrdersPerDistrict - NewOrdersPerDistrict + 1
)

// Tables in load order.
var Tables = []string{"item", "warehouse", "district", "customer", "history", "orders", "new_order", "order_line", "stock"}

// table describes one table's columns (clause 1.3) and keys.
type table struct {
	name    string
	columns []column
	// primary key columns; empty for HISTORY, which has none (1.3, note 3).
	pk []string
	// narrow tables are stored clustered by key where the engine offers it
	// (SQLite WITHOUT ROWID) because their rows are small.
	narrow bool
}

type column struct {
	name string
	typ  string // generic: int, money(p), dec(p,s), varchar(n), char(n), ts
}

var schema = []table{
	{name: "warehouse", pk: []string{"w_id"}, columns: cols(
		"w_id int", "w_name varchar(10)", "w_street_1 varchar(20)", "w_street_2 varchar(20)", "w_city varchar(20)",
		"w_state char(2)", "w_zip char(9)", "w_tax dec(4,4)", "w_ytd dec(12,2)")},
	{name: "district", pk: []string{"d_w_id", "d_id"}, narrow: true, columns: cols(
		"d_id int", "d_w_id int", "d_name varchar(10)", "d_street_1 varchar(20)", "d_street_2 varchar(20)",
		"d_city varchar(20)", "d_state char(2)", "d_zip char(9)", "d_tax dec(4,4)", "d_ytd dec(12,2)", "d_next_o_id int")},
	{name: "customer", pk: []string{"c_w_id", "c_d_id", "c_id"}, columns: cols(
		"c_id int", "c_d_id int", "c_w_id int", "c_first varchar(16)", "c_middle char(2)", "c_last varchar(16)",
		"c_street_1 varchar(20)", "c_street_2 varchar(20)", "c_city varchar(20)", "c_state char(2)", "c_zip char(9)",
		"c_phone char(16)", "c_since ts", "c_credit char(2)", "c_credit_lim dec(12,2)", "c_discount dec(4,4)",
		"c_balance dec(12,2)", "c_ytd_payment dec(12,2)", "c_payment_cnt int", "c_delivery_cnt int", "c_data varchar(500)")},
	{name: "history", columns: cols(
		"h_c_id int", "h_c_d_id int", "h_c_w_id int", "h_d_id int", "h_w_id int", "h_date ts", "h_amount dec(6,2)", "h_data varchar(24)")},
	{name: "new_order", pk: []string{"no_w_id", "no_d_id", "no_o_id"}, narrow: true, columns: cols(
		"no_o_id int", "no_d_id int", "no_w_id int")},
	{name: "orders", pk: []string{"o_w_id", "o_d_id", "o_id"}, narrow: true, columns: cols(
		"o_id int", "o_d_id int", "o_w_id int", "o_c_id int", "o_entry_d ts", "o_carrier_id int null", "o_ol_cnt int", "o_all_local int")},
	{name: "order_line", pk: []string{"ol_w_id", "ol_d_id", "ol_o_id", "ol_number"}, narrow: true, columns: cols(
		"ol_o_id int", "ol_d_id int", "ol_w_id int", "ol_number int", "ol_i_id int", "ol_supply_w_id int",
		"ol_delivery_d ts null", "ol_quantity int", "ol_amount dec(6,2)", "ol_dist_info char(24)")},
	{name: "item", pk: []string{"i_id"}, columns: cols(
		"i_id int", "i_im_id int", "i_name varchar(24)", "i_price dec(5,2)", "i_data varchar(50)")},
	{name: "stock", pk: []string{"s_w_id", "s_i_id"}, columns: cols(
		"s_i_id int", "s_w_id int", "s_quantity int", "s_dist_01 char(24)", "s_dist_02 char(24)", "s_dist_03 char(24)",
		"s_dist_04 char(24)", "s_dist_05 char(24)", "s_dist_06 char(24)", "s_dist_07 char(24)", "s_dist_08 char(24)",
		"s_dist_09 char(24)", "s_dist_10 char(24)", "s_ytd int", "s_order_cnt int", "s_remote_cnt int", "s_data varchar(50)")},
}

// Secondary indexes the transactions need: customer by last name (2.5.2.2,
// 2.6.2.2) and a customer's latest order (2.6.2.2).
var secondaryIndexes = []struct{ name, table, cols string }{
	{"customer_name", "customer", "c_w_id, c_d_id, c_last, c_first"},
	{"orders_customer", "orders", "o_w_id, o_d_id, o_c_id, o_id"},
}

func cols(defs ...string) []column {
	out := make([]column, len(defs))
	for i, d := range defs {
		name, typ, _ := strings.Cut(d, " ")
		out[i] = column{name: name, typ: typ}
	}
	return out
}

func tableByName(name string) table {
	for _, t := range schema {
		if t.name == name {
			return t
		}
	}
	panic("tpcc: no table " + name)
}

// columnNames lists a table's columns in order.
func (t table) columnNames() []string {
	out := make([]string, len(t.columns))
	for i, c := range t.columns {
		out[i] = c.name
	}
	return out
}

// columnTypes names an engine's types for the generic column types.
type columnTypes struct {
	integer, timestamp string
	// decimal is the exact numeric type; precision says whether the generic
	// type's "(p,s)" follows it.
	decimal   string
	precision bool
	// text renders varchar(n) and char(n).
	text func(generic string) string
}

// of is the engine's type for a generic one.
func (c columnTypes) of(generic string) string {
	switch {
	case generic == "int":
		return c.integer
	case generic == "ts":
		return c.timestamp
	case strings.HasPrefix(generic, "dec") && c.precision:
		return c.decimal + strings.TrimPrefix(generic, "dec")
	case strings.HasPrefix(generic, "dec"):
		return c.decimal
	}
	return c.text(generic)
}

// createSQL renders one table's DDL with the primary key inline; suffix
// follows the narrow tables' closing parenthesis.
func (t table) createSQL(types columnTypes, suffix string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n", t.name)
	for i, c := range t.columns {
		typ, null := c.typ, " NOT NULL"
		if strings.HasSuffix(typ, " null") {
			typ, null = strings.TrimSuffix(typ, " null"), ""
		}
		fmt.Fprintf(&b, "  %s %s%s", c.name, types.of(typ), null)
		if i < len(t.columns)-1 || len(t.pk) > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	if len(t.pk) > 0 {
		fmt.Fprintf(&b, "  PRIMARY KEY (%s)\n", strings.Join(t.pk, ", "))
	}
	b.WriteString(")")
	if t.narrow {
		b.WriteString(suffix)
	}
	return b.String()
}

// recreate drops drop where present and creates every table with the DDL
// ddl gives it, each statement through exec.
func recreate(exec func(query string) error, drop []string, ddl func(table) string) error {
	for _, t := range drop {
		if err := exec("DROP TABLE IF EXISTS " + t); err != nil {
			return err
		}
	}
	for _, t := range schema {
		if err := exec(ddl(t)); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	return nil
}

// execOn runs statements without rows on db's pool.
func execOn(ctx context.Context, db *sql.DB) func(query string) error {
	return func(query string) error {
		_, err := db.ExecContext(ctx, query)
		return err
	}
}
