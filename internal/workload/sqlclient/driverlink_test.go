package sqlclient

import (
	"database/sql/driver"
	"reflect"
	"testing"
	"time"
)

func TestDriverArgs(t *testing.T) {
	at := time.Date(2026, 11, 25, 19, 0, 0, 0, time.UTC)
	buf := make([]driver.NamedValue, 0, 1)
	for _, tc := range []struct {
		name string
		args []any
		want []driver.Value
		bad  bool
	}{
		{name: "ints become int64", args: []any{1, int32(2), int64(3)}, want: []driver.Value{int64(1), int64(2), int64(3)}},
		{name: "driver values pass", args: []any{1.5, "c", true, []byte("b"), at, nil}, want: []driver.Value{1.5, "c", true, []byte("b"), at, nil}},
		{name: "others refused", args: []any{uint8(1)}, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DriverArgs(buf[:0], tc.args)
			if (err != nil) != tc.bad {
				t.Fatalf("err %v, want an error: %v", err, tc.bad)
			}
			if tc.bad {
				return
			}
			for i, nv := range got {
				if nv.Ordinal != i+1 || !reflect.DeepEqual(nv.Value, tc.want[i]) {
					t.Errorf("argument %d: %+v, want ordinal %d value %#v", i, nv, i+1, tc.want[i])
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("%d arguments, want %d", len(got), len(tc.want))
			}
			buf = got // reused, as a session does
		})
	}
}
