package fio

import (
	"encoding/json"
	"fmt"

	"dbio/internal/results"
)

// Detail is the point's record in the results (a fio step's detail). A
// PointResult is stored as exactly this record, so the conversion goes
// through the stored form: a field added to the point reaches the record
// only when the record has it too, and TestDetailIsThePointAsStored says so.
func (r PointResult) Detail() (results.FioPoint, error) {
	var d results.FioPoint
	b, err := json.Marshal(r)
	if err != nil {
		return d, fmt.Errorf("encode point %s: %w", r.Name, err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("encode point %s: %w", r.Name, err)
	}
	return d, nil
}
