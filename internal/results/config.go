package results

import (
	"encoding/json"
	"strconv"
)

// RunConfig is the part of run.json's config that reading a run needs:
// what makes two runs comparable and how a fio run bounded latency. Each
// value is read on its own, so a directory written by an older dbio (or by
// a suite, whose config had another shape) reads as far as it matches,
// and whatever is absent is the zero value.
type RunConfig struct {
	// Users is the virtual-user sequence as configured.
	Users []int
	// StepS and RampUpS are a step's measured length and its ramp-up, in
	// seconds, as recorded ("" when not recorded).
	StepS, RampUpS string
	// RampUpUntil is the steady-state criterion that ended each ramp-up
	// ("nopm_slope:0.5%"), "" for ramp-ups of fixed length.
	RampUpUntil string
	// Warehouses is the TPC-C scale (0 when not recorded).
	Warehouses int
	// KeyingThinking is TPC-C's pacing as recorded: "true", "false", or ""
	// when not recorded.
	KeyingThinking string
	// LatencyMax and LatencyStat are fio's latency bound as given
	// (--latency-max, --latency-stat), "" when not set.
	LatencyMax  string
	LatencyStat LatencyStat
}

// ConfigView reads the run's config into a RunConfig.
func (r Run) ConfigView() RunConfig {
	var c RunConfig
	var top map[string]json.RawMessage
	if json.Unmarshal(r.Config, &top) != nil {
		return c
	}
	var users []json.Number
	if json.Unmarshal(top["users"], &users) == nil {
		for _, n := range users {
			if i, err := n.Int64(); err == nil {
				c.Users = append(c.Users, int(i))
			}
		}
	}
	c.StepS = scalarText(top["step_s"])
	c.RampUpS = scalarText(top["rampup_s"])
	c.RampUpUntil = scalarText(top["ramp_until"])
	c.LatencyMax = scalarText(top["latency_max"])
	c.LatencyStat = LatencyStat(scalarText(top["latency_stat"]))
	var tpcc map[string]json.RawMessage
	if json.Unmarshal(top["tpcc"], &tpcc) == nil {
		var n json.Number
		if json.Unmarshal(tpcc["warehouses"], &n) == nil {
			if i, err := n.Int64(); err == nil {
				c.Warehouses = int(i)
			}
		}
		c.KeyingThinking = scalarText(tpcc["keying_thinking"])
	}
	return c
}

// scalarText is a JSON string, number or boolean as text; "" for null,
// absent, or anything else.
func scalarText(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			return n.String()
		}
	}
	return ""
}
