package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"dbio/internal/results"
	"dbio/internal/secret"
	"dbio/internal/units"
)

// A run's configuration is shown in the words the user typed it in: each
// value under the flag that sets it ("--ramp-time 30s", not "rampup_s 30"),
// sizes and rates with their units ("256 MiB", "400 tx/s"), and the few
// values no flag sets (a derived one, the host a disk run was sized for) in
// plain words. run.json keeps its own keys; only the reading changes.

// configFacts are c's values in the flags' vocabulary, in the order
// run.json holds them. flag names the flag of a workload's recorded setting
// (Options.SettingFlag); nil keeps the recorded key.
func configFacts(c results.RunConfig, flag func(kind, key string) (string, bool)) []fact {
	if c.Disk != nil {
		return diskConfigFacts(*c.Disk)
	}
	if c.IsZero() {
		return nil
	}
	var out []fact
	add := func(label, value string) {
		if value != "" {
			out = append(out, fact{label, value})
		}
	}
	add("--engine", c.Engine)
	add("--target", c.Target)
	add("--log-target", c.LogTarget)
	if len(c.Users) > 0 {
		add("--users", intsText(c.Users))
	}
	for _, s := range c.Stepping {
		out = append(out, settingFacts(c.Workload, s, flag)...)
	}
	add("--ramp-time", secondsText(c.RampUpS))
	add("--runtime", secondsText(c.StepS))
	if s := c.Steady; s != nil {
		add("--ramp-until", s.Until)
		add("--steady-window", secondsText(s.WindowS))
		if s.RampS != 0 {
			add("--steady-ramp", secondsText(s.RampS))
		}
	}
	if p := c.Precision; p != nil {
		add("--precision", p.Bound)
		add("--precision-min", secondsText(p.MinS))
	}
	seed, hasSeed := c.Settings.Lookup("seed")
	if p := c.Pacing; p != nil {
		if p.RateTPS > 0 {
			add("--rate", rateText(p.RateTPS))
		}
		if p.RatePerUserTPS > 0 {
			add("--rate-per-user", rateText(p.RatePerUserTPS)+" per user")
		}
		add("--arrival", p.Arrival)
		add("--late-tolerance", millisecondsText(p.LateToleranceMS))
		// The schedule draws from the workload's seed, recorded twice.
		if !hasSeed || fmt.Sprint(seed) != strconv.FormatUint(p.Seed, 10) {
			add("arrival seed", strconv.FormatUint(p.Seed, 10))
		}
	}
	if g := c.Goal; g != nil {
		add("--goal", g.Objective)
		if len(c.Users) != 1 || c.Users[0] != g.Users {
			add("goal users", strconv.Itoa(g.Users))
		}
		add("--rate (first rate probed)", rateText(g.StartTPS))
		add("--goal-max", rateText(g.MaxTPS))
		add("--goal-resolution", g.Resolution)
		if g.MaxProbes > 0 {
			add("--goal-probes", strconv.Itoa(g.MaxProbes))
		}
		if g.Confirm {
			add("--goal-confirm", "true")
		}
		add("goal rate factor", fmt.Sprintf("%sx per probe until one fails", trimFloat(g.Factor)))
		add("goal tolerance", fmt.Sprintf("%s %% of the offered rate a probe may fall short by", trimFloat(g.Tolerance*100)))
	}
	for _, s := range c.Settings {
		out = append(out, settingFacts(c.Workload, s, flag)...)
	}
	e := c.EngineOptions
	if e.BufferPoolBytes > 0 {
		add("--buffer-pool", sizeText(e.BufferPoolBytes))
	}
	if e.ServerMemoryBytes > 0 {
		add("--server-memory", sizeText(e.ServerMemoryBytes))
	}
	for _, k := range sortedKeys(e.Settings) {
		add("--setting "+k, e.Settings[k])
	}
	server := "managed by dbio"
	if e.External {
		server = "your own, reached by --dsn"
	}
	add("server", server)
	add("--database", e.Database)
	add("--transport", e.Transport)
	if !c.Limits.IsZero() {
		add("--limit", limitText(c.Limits))
	}
	if b := c.Backups; b != nil {
		add("--cycles", strconv.Itoa(b.Cycles))
		add("--restore", strconv.FormatBool(b.Restore))
		add("--interval", durationText(b.Interval))
		add("--load-users", strconv.Itoa(b.Users))
	}
	if n := c.Noisy; n != nil {
		add("--tenants", strconv.Itoa(n.Tenants))
		add("--backup-tenants", strconv.Itoa(n.BackupTenants))
		add("--interval", durationText(n.Interval))
		add("--cycles", strconv.Itoa(n.Cycles))
		add("users per tenant", strconv.Itoa(n.Users))
	}
	return out
}

// settingFacts is one setting of a workload's record under its flag, its
// value in the unit its key names ("ceiling_ms" is --ceiling, a duration);
// a setting no flag sets keeps its key, after the workload's name.
func settingFacts(kind string, s results.Setting, flag func(kind, key string) (string, bool)) []fact {
	if nested, ok := s.Value.(results.Settings); ok {
		var out []fact
		for _, n := range nested {
			out = append(out, settingFacts(kind, results.Setting{Name: s.Name + "." + n.Name, Value: n.Value}, flag)...)
		}
		return out
	}
	key, value := s.Name, settingText(s.Value)
	if key == "dsn" || strings.HasSuffix(key, ".dsn") {
		// Recorded redacted; redacted again for older results directories.
		value = secret.RedactDSN(value)
	}
	for _, u := range []struct {
		suffix string
		format func(float64) string
	}{{"_ms", millisecondsText}, {"_s", secondsText}, {"_bytes", func(v float64) string { return sizeText(int64(v)) }}} {
		base, ok := strings.CutSuffix(key, u.suffix)
		if !ok {
			continue
		}
		if n, err := strconv.ParseFloat(value, 64); err == nil {
			key, value = base, u.format(n)
		}
		break
	}
	if flag != nil {
		if f, ok := flag(kind, key); ok {
			return []fact{{"--" + f, value}}
		}
	}
	// Every workload's run records it; its flag is the run's own.
	if key == "skip_checks" {
		return []fact{{"--skip-checks", value}}
	}
	label := s.Name
	if kind != "" {
		label = kind + "." + s.Name
	}
	return []fact{{label, value}}
}

// settingText is a recorded value as typed: a list as "1,2,4".
func settingText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []any:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = settingText(p)
		}
		return strings.Join(parts, ",")
	case json.Number:
		return x.String()
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// diskConfigFacts are a disk run's fio settings under dbio disk's flags.
func diskConfigFacts(d results.DiskConfig) []fact {
	var out []fact
	add := func(label, value string) {
		if value != "" {
			out = append(out, fact{label, value})
		}
	}
	add("--profile", d.Profile)
	add("--target", strings.Join(d.Targets, ", "))
	if d.Group {
		add("--group", "true")
	}
	add("--runtime", d.Runtime)
	add("--ramp-time", d.Ramp)
	if d.SizeBytes > 0 {
		add("--size", sizeText(d.SizeBytes))
	}
	if len(d.IODepths) > 0 {
		add("--iodepth", intsText(d.IODepths))
	}
	if d.Jobs > 0 {
		add("--jobs", strconv.Itoa(d.Jobs))
	}
	add("--ioengine", d.Engine)
	var sizes []string
	for _, b := range d.BlockSizes {
		sizes = append(sizes, sizeText(b))
	}
	add("--bs", strings.Join(sizes, ", "))
	add("--rw", strings.Join(d.RW, ","))
	if d.ReadPct != nil {
		add("--read-pct", strconv.Itoa(*d.ReadPct)+" % reads")
	}
	var rates []string
	for _, r := range d.RatePcts {
		rates = append(rates, trimFloat(r))
	}
	if len(rates) > 0 {
		add("--rates", strings.Join(rates, ",")+" % of the measured maximum")
	}
	add("--latency-max", d.LatencyMax)
	add("--latency-stat", string(d.LatencyStat))
	add("--steady-state", d.SteadyState)
	add("--ss-window", d.SteadyWindow)
	add("--ss-ramp", d.SteadyRamp)
	if d.Buffered {
		add("buffered I/O", "through the page cache (not O_DIRECT)")
	}
	if d.WriteThrough {
		add("write-through", "every write reaches the device before it completes (O_SYNC)")
	}
	if d.BlockAlign > 0 {
		add("block alignment", sizeText(d.BlockAlign))
	}
	if d.CPUs > 0 || d.MemoryBytes > 0 {
		var host []string
		if d.CPUs > 0 {
			host = append(host, plural(d.CPUs, "CPU", "CPUs"))
		}
		if d.MemoryBytes > 0 {
			host = append(host, units.FormatBytes(d.MemoryBytes))
		}
		add("profile sized for", strings.Join(host, ", "))
	}
	for _, h := range d.Hosts {
		add("--host "+h.Name, h.Destination)
	}
	// The flags reaching the hosts are one for all of them; a suite may
	// give each host its own, then listed per host.
	for _, f := range []struct {
		label string
		value func(results.HostConfig) string
	}{
		{"--ssh-config", func(h results.HostConfig) string { return h.SSHConfig }},
		{"--fio-port", func(h results.HostConfig) string { return portText(h.FioPort) }},
		{"--fio-server", func(h results.HostConfig) string { return h.FioServer }},
		{"node exporter", func(h results.HostConfig) string { return h.NodeExporter }},
		{"fio", func(h results.HostConfig) string { return h.Fio }},
		{"work directory", func(h results.HostConfig) string { return h.WorkDir }},
		{"address", func(h results.HostConfig) string { return h.Address }},
	} {
		same := true
		for _, h := range d.Hosts {
			same = same && f.value(h) == f.value(d.Hosts[0])
		}
		if same && len(d.Hosts) > 0 {
			add(f.label, f.value(d.Hosts[0]))
			continue
		}
		for _, h := range d.Hosts {
			add(f.label+" of "+h.Name, f.value(h))
		}
	}
	return out
}

func portText(p int) string {
	if p == 0 {
		return ""
	}
	return strconv.Itoa(p)
}

// limitText is a storage class as --limit takes it, then in words:
// "riops=500,wbps=200MB (500 read IOPS, 200 MiB/s written)".
func limitText(l results.LimitsConfig) string {
	var flag, words []string
	if l.Preset != "" {
		flag = append(flag, l.Preset)
	}
	count := func(key string, n int64, what string) {
		if n > 0 {
			flag = append(flag, key+"="+strconv.FormatInt(n, 10))
			words = append(words, units.GroupThousands(n)+" "+what)
		}
	}
	rate := func(key string, n int64, what string) {
		if n > 0 {
			typed, ok := units.ExactBytes(n, [3]string{"GB", "MB", "KB"})
			if !ok {
				typed = strconv.FormatInt(n, 10)
			}
			flag = append(flag, key+"="+typed)
			words = append(words, sizeText(n)+"/s "+what)
		}
	}
	count("riops", l.ReadIOPS, "read IOPS")
	count("wiops", l.WriteIOPS, "write IOPS")
	rate("rbps", l.ReadBPS, "read")
	rate("wbps", l.WriteBPS, "written")
	if l.Preset != "" {
		// A preset's own values are its; only overrides follow its name.
		flag = flag[:1]
	}
	out := strings.Join(flag, ",") + " (" + strings.Join(words, ", ") + ")"
	if l.Class != "" {
		out += ", the " + l.Class + " class"
	}
	return out
}

// sizeText writes bytes in the largest binary unit that keeps them exact
// ("256 MiB"), else to a tenth ("1.5 GiB").
func sizeText(b int64) string {
	if b > 0 && b < 1024 {
		return strconv.FormatInt(b, 10) + " B"
	}
	if s, ok := units.ExactBytes(b, [3]string{" GiB", " MiB", " KiB"}); ok {
		return s
	}
	return units.FormatBytes(uint64(max(b, 0)))
}

// secondsText writes seconds as a duration flag takes it: "30s", "2m",
// "1m30s", "0s".
func secondsText(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return "-"
	}
	return durationText(time.Duration(math.Round(s * float64(time.Second))))
}

// millisecondsText writes milliseconds as a duration: "50ms", "1.5s".
func millisecondsText(ms float64) string {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return "-"
	}
	return durationText(time.Duration(math.Round(ms * float64(time.Millisecond))))
}

// durationText is Go's duration text without its empty tails: "2m", not
// "2m0s"; "1h", not "1h0m0s".
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// rateText is a transaction rate with its unit: "400 tx/s", "12.5 tx/s".
func rateText(tps float64) string { return trimFloat(tps) + " tx/s" }

// trimFloat writes v with no trailing zeros: 400, 12.5, 0.05.
func trimFloat(v float64) string {
	if math.Abs(v) >= 1000 && v == math.Trunc(v) {
		return thousands(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
