package fio

import (
	"fmt"
	"testing"
)

// TestSQLServerProfile: the profile's points are SQL Server's documented
// patterns: page and extent sizes, read-ahead, the log blocks' ends one at
// a time and written through, and --iodepth and --jobs reach the data
// points only.
func TestSQLServerProfile(t *testing.T) {
	c := Config{Profile: "sqlserver", Targets: []string{"/mnt/a"}, IODepths: []int{16}, Jobs: 2}
	p, err := NewPlan(c, BuiltinProfiles())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, pt := range p.Points {
		got = append(got, fmt.Sprintf("%s %s %d qd%d j%d wt=%v log=%v", pt.Name, pt.RW, pt.BS, pt.IODepth, pt.Jobs, pt.WriteThrough, pt.LogWrite()))
	}
	want := []string{
		"8k-page-read randread 8192 qd16 j2 wt=false log=false",
		"8k-page-write randwrite 8192 qd16 j2 wt=true log=false",
		"64k-extent-read randread 65536 qd16 j2 wt=false log=false",
		"512k-read-ahead read 524288 qd16 j2 wt=false log=false",
		"512b-log-write write 512 qd1 j1 wt=true log=true",
		"60k-log-write write 61440 qd1 j1 wt=true log=true",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("points\n%v\nwant\n%v", got, want)
	}
}
