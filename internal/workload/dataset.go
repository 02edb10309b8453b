package workload

import (
	"fmt"
	"strconv"
	"strings"

	"dbio/internal/results"
)

// The keys under which a load's record (the workload's own key-value table
// in the database, written when the load is complete) holds the identity
// of its data. A setting's key is its flag's name with "_" for "-", as in
// a suite table; the keys a workload recorded before the identity
// (TPC-C's warehouses, sysbench's tables, AS3AP's rows) keep their names.
const (
	recordWorkload      = "workload"
	recordLoaderVersion = "loader_version"
	recordSeed          = "seed"
)

// NewDataset is the identity of the data a load of workload makes with
// loader version version from seed and settings (the flags the data
// depends on, the scale first, each with its value as the flag takes it:
// "warehouses", "2").
func NewDataset(workload string, version int, seed uint64, settings ...[2]string) results.Dataset {
	d := results.Dataset{Workload: workload, LoaderVersion: version, Seed: seed}
	for _, s := range settings {
		d.Settings = append(d.Settings, results.DatasetSetting{Flag: s[0], Value: s[1]})
	}
	return d
}

// DatasetRecord is d as a load's record holds it.
func DatasetRecord(d results.Dataset) [][2]string {
	kv := [][2]string{
		{recordWorkload, d.Workload},
		{recordLoaderVersion, strconv.Itoa(d.LoaderVersion)},
		{recordSeed, strconv.FormatUint(d.Seed, 10)},
	}
	for _, s := range d.Settings {
		kv = append(kv, [2]string{settingKey(s.Flag), s.Value})
	}
	return kv
}

func settingKey(flag string) string { return strings.ReplaceAll(flag, "-", "_") }

// CheckReuse says whether data whose load recorded record may stand for the
// data want describes, which the run would load itself: nil when every
// part of the identity is the same, a *ReuseRefused naming each difference
// otherwise, or saying that the record, an older dbio's, holds no identity.
func CheckReuse(record map[string]string, want results.Dataset) error {
	type part struct {
		key, flag, want string
	}
	parts := []part{
		{recordWorkload, "", want.Workload},
		{recordLoaderVersion, "", strconv.Itoa(want.LoaderVersion)},
	}
	for _, s := range want.Settings {
		parts = append(parts, part{settingKey(s.Flag), s.Flag, s.Value})
	}
	parts = append(parts, part{recordSeed, "seed", strconv.FormatUint(want.Seed, 10)})
	_, versioned := record[recordLoaderVersion]
	refused := &ReuseRefused{Workload: want.Workload, Unidentified: !versioned}
	for _, p := range parts {
		name := p.flag
		if name == "" {
			name = strings.ReplaceAll(p.key, "_", " ")
		}
		found, ok := record[p.key]
		switch {
		case refused.Unidentified && !ok && p.key != recordWorkload:
			refused.Unrecorded = append(refused.Unrecorded, name)
		case !refused.Unidentified && found != p.want:
			refused.Differences = append(refused.Differences, DatasetDifference{Name: name, Flag: p.flag != "", Found: found, Wanted: p.want})
		}
	}
	if refused.Unidentified || len(refused.Differences) > 0 {
		return refused
	}
	return nil
}

// ReuseRefused is --reuse refused before anything was loaded or run: the
// data in the database is not what the run would load, or nothing says it
// is. The user fixes it by loading afresh, or by asking for the data that
// is there.
type ReuseRefused struct {
	Workload string
	// Differences are the parts of the identity that differ, in the order
	// of the record: workload, loader version, scale and other settings,
	// seed. Empty when Unidentified.
	Differences []DatasetDifference
	// Unidentified says the data was loaded by an older dbio, which did
	// not record its loader's version; Unrecorded names what of the
	// identity its record lacks ("loader version", TPC-C's "seed").
	Unidentified bool
	Unrecorded   []string
}

// DatasetDifference is one part of a dataset's identity that differs
// between the data in the database and the data a run would load.
type DatasetDifference struct {
	// Name is the flag that sets it ("seed", "warehouses"), or, when Flag
	// is false, what no flag sets ("workload", "loader version").
	Name string
	Flag bool
	// Found is the value the database's record holds (empty when it holds
	// none), Wanted the run's.
	Found, Wanted string
}

func (e *ReuseRefused) Error() string {
	if e.Unidentified {
		return fmt.Sprintf("--reuse: the %s data in this database was loaded by an older dbio, which did not record its %s, so nothing says it is the data this run would load: load afresh without --reuse", e.Workload, strings.Join(e.Unrecorded, " or "))
	}
	var diffs, flags []string
	byFlag := true
	for _, d := range e.Differences {
		found := d.Found + " there"
		if d.Found == "" {
			found = "not recorded there"
		}
		diffs = append(diffs, fmt.Sprintf("%s %s, %s for this run", d.Name, found, d.Wanted))
		if !d.Flag || d.Found == "" {
			byFlag = false
			continue
		}
		flags = append(flags, "--"+d.Name+" "+d.Found)
	}
	fix := "load afresh without --reuse"
	if byFlag {
		fix += ", or run with " + strings.Join(flags, " ")
	}
	return fmt.Sprintf("--reuse: the %s data in this database is not what this run would load (%s): %s", e.Workload, strings.Join(diffs, "; "), fix)
}
