package inject

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Phase is the engine work a slow-down rule applies to.
type Phase int

// The phases a rule can name.
const (
	Prefill Phase = 1 << iota
	Decode
	All = Prefill | Decode
)

// Cond is one condition of a rule.
type Cond struct {
	Var   string // "ctx" or "batch"
	Op    string
	Value float64
}

func (c Cond) holds(ctx float64, batch int) bool {
	x := ctx
	if c.Var == "batch" {
		x = float64(batch)
	}
	switch c.Op {
	case ">=":
		return x >= c.Value
	case "<=":
		return x <= c.Value
	case ">":
		return x > c.Value
	case "<":
		return x < c.Value
	}
	return x == c.Value
}

// Rule is one slow-down rule.
type Rule struct {
	Phase  Phase
	Factor float64
	// Drift is, for a drift rule (Factor 1), how much the factor grows per second of wall-clock
	// time since the server started.
	Drift float64
	Conds []Cond
}

// Slowdown is a parsed --slowdown spec; the zero value slows nothing.
type Slowdown struct {
	Rules []Rule
}

// Factor returns the multiplier on the time of work of phase p (Prefill or Decode) at context
// ctx and batch size batch, at the server's start (drift rules add nothing).
func (s *Slowdown) Factor(p Phase, ctx float64, batch int) float64 {
	return s.FactorAt(p, ctx, batch, 0)
}

// FactorAt returns Factor at elapsed wall-clock time since the server started: each matching
// drift rule multiplies it by 1 + Drift·elapsed.
func (s *Slowdown) FactorAt(p Phase, ctx float64, batch int, elapsed time.Duration) float64 {
	f := 1.0
	for _, r := range s.Rules {
		if r.Phase&p == 0 {
			continue
		}
		ok := true
		for _, c := range r.Conds {
			if !c.holds(ctx, batch) {
				ok = false
				break
			}
		}
		if ok {
			f *= r.Factor * (1 + r.Drift*max(elapsed.Seconds(), 0))
		}
	}
	return f
}

const slowdownHelp = `want rules like decode=1.10@ctx>=64K, prefill=1.2 or decode=+5%/min, separated by commas`

// ParseSlowdown parses a --slowdown spec; the empty spec slows nothing.
func ParseSlowdown(spec string) (*Slowdown, error) {
	s := &Slowdown{}
	if strings.TrimSpace(spec) == "" {
		return s, nil
	}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		bad := func(format string, args ...any) (*Slowdown, error) {
			return nil, fmt.Errorf("slowdown rule %q: %s (%s)", item, fmt.Sprintf(format, args...), slowdownHelp)
		}
		head, conds, hasCond := strings.Cut(item, "@")
		name, val, ok := strings.Cut(head, "=")
		if !ok {
			return bad("missing =")
		}
		var r Rule
		switch strings.TrimSpace(name) {
		case "prefill":
			r.Phase = Prefill
		case "decode":
			r.Phase = Decode
		case "all":
			r.Phase = All
		default:
			return bad("unknown phase %q, want prefill, decode or all", strings.TrimSpace(name))
		}
		val = strings.TrimSpace(val)
		if strings.HasPrefix(val, "+") || strings.HasPrefix(val, "-") || strings.Contains(val, "/") {
			d, err := parseDrift(val)
			if err != nil {
				return bad("%v", err)
			}
			r.Factor, r.Drift = 1, d
		} else {
			f, err := parseFactor(val)
			if err != nil {
				return bad("%v", err)
			}
			r.Factor = f
		}
		if hasCond {
			for _, c := range strings.Split(conds, "&") {
				cond, err := parseCond(strings.TrimSpace(c))
				if err != nil {
					return bad("%v", err)
				}
				r.Conds = append(r.Conds, cond)
			}
		}
		s.Rules = append(s.Rules, r)
	}
	return s, nil
}

func parseFactor(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("factor %q is not a number", s)
	}
	if pct {
		f /= 100
	}
	if f <= 0 || f > 1000 {
		return 0, fmt.Errorf("factor %q must be above 0 and at most 1000", s)
	}
	return f, nil
}

// parseDrift reads a drift "+rate/unit" and returns its growth per second.
func parseDrift(s string) (float64, error) {
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("drift %q: a drift grows the time, write it as +rate/unit, e.g. +5%%/min", s)
	}
	rate, unit, ok := strings.Cut(strings.TrimPrefix(s, "+"), "/")
	if !ok {
		return 0, fmt.Errorf("drift %q: want +rate/unit, e.g. +5%%/min", s)
	}
	var per float64
	switch strings.TrimSpace(unit) {
	case "s":
		per = 1
	case "min":
		per = 60
	case "h":
		per = 3600
	default:
		return 0, fmt.Errorf("drift %q: unit %q, want s, min or h", s, unit)
	}
	rate = strings.TrimSpace(rate)
	pct := strings.HasSuffix(rate, "%")
	r, err := strconv.ParseFloat(strings.TrimSuffix(rate, "%"), 64)
	if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("drift rate %q is not a number", rate)
	}
	if pct {
		r /= 100
	}
	if !(r > 0) || r > 1000 {
		return 0, fmt.Errorf("drift rate %q must be above 0 and at most 1000", rate)
	}
	return r / per, nil
}

func parseCond(s string) (Cond, error) {
	var c Cond
	for _, v := range []string{"ctx", "batch"} {
		if strings.HasPrefix(s, v) {
			c.Var = v
			break
		}
	}
	if c.Var == "" {
		return c, fmt.Errorf("condition %q: want ctx or batch, then a comparison", s)
	}
	rest := strings.TrimSpace(s[len(c.Var):])
	for _, op := range []string{">=", "<=", "==", ">", "<"} {
		if strings.HasPrefix(rest, op) {
			c.Op = op
			break
		}
	}
	if c.Op == "" {
		return c, fmt.Errorf("condition %q: want one of >=, <=, ==, >, <", s)
	}
	n, err := parseCount(strings.TrimSpace(rest[len(c.Op):]))
	if err != nil {
		return c, fmt.Errorf("condition %q: %v", s, err)
	}
	c.Value = n
	return c, nil
}

// parseCount reads a whole number with an optional K (1024) or M (1024²) suffix.
func parseCount(s string) (float64, error) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "K") || strings.HasSuffix(s, "k"):
		mult, s = 1024, s[:len(s)-1]
	case strings.HasSuffix(s, "M") || strings.HasSuffix(s, "m"):
		mult, s = 1024*1024, s[:len(s)-1]
	}
	n, err := strconv.ParseUint(s, 10, 40)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number like 64K or 8", s)
	}
	return float64(n) * mult, nil
}

// Faults is a parsed --fault spec; the zero value injects nothing.
type Faults struct {
	ErrorRate  float64       // fraction of completion requests answered with HTTP 500
	CutAfter   int           // cut streams after this many output tokens (0: never)
	CutRate    float64       // fraction of streams cut
	Crash      time.Duration // stop the server after this long (0: never)
	Dead       time.Duration // the engine dies after this long (0: never)
	Hang       time.Duration // the engine stops stepping after this long (0: never)
	SlowHealth time.Duration // /health delay
	// Starve is the fraction of model time the simulator loses, as on a machine too busy to
	// keep its step clock (0: none): after each step it skips ahead by that share and counts
	// it lost (speedmatrix_sim_lost_seconds_total), as it does when it really falls behind.
	Starve float64
}

const faultHelp = `want items like error=5%, cut=100@0.1, crash=30s, dead=30s, hang=20s, slow-health=2s or starve=50%, separated by commas`

// ParseFaults parses a --fault spec; the empty spec injects nothing.
func ParseFaults(spec string) (*Faults, error) {
	f := &Faults{}
	if strings.TrimSpace(spec) == "" {
		return f, nil
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		bad := func(format string, args ...any) (*Faults, error) {
			return nil, fmt.Errorf("fault %q: %s (%s)", item, fmt.Sprintf(format, args...), faultHelp)
		}
		name, val, ok := strings.Cut(item, "=")
		if !ok {
			return bad("missing =")
		}
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if seen[name] {
			return bad("%s given twice", name)
		}
		seen[name] = true
		var err error
		switch name {
		case "error":
			f.ErrorRate, err = parseRate(val)
		case "cut":
			n, rate, hasRate := strings.Cut(val, "@")
			f.CutRate = 1
			if hasRate {
				if f.CutRate, err = parseRate(strings.TrimSpace(rate)); err != nil {
					break
				}
			}
			var c uint64
			c, err = strconv.ParseUint(strings.TrimSpace(n), 10, 31)
			if err != nil || c == 0 {
				err = fmt.Errorf("token count %q must be a whole number ≥ 1", n)
			}
			f.CutAfter = int(c)
		case "crash":
			f.Crash, err = parseDuration(val)
		case "dead":
			f.Dead, err = parseDuration(val)
		case "hang":
			f.Hang, err = parseDuration(val)
		case "slow-health":
			f.SlowHealth, err = parseDuration(val)
		case "starve":
			f.Starve, err = parseRate(val)
			if err == nil && f.Starve >= 1 {
				err = fmt.Errorf("rate %q must be below 100%%", val)
			}
		default:
			return bad("unknown fault %q", name)
		}
		if err != nil {
			return bad("%v", err)
		}
	}
	return f, nil
}

func parseRate(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	r, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || math.IsNaN(r) {
		return 0, fmt.Errorf("rate %q is not a number", s)
	}
	if pct {
		r /= 100
	}
	if r < 0 || r > 1 {
		return 0, fmt.Errorf("rate %q must lie between 0 and 1 (or 0%% and 100%%)", s)
	}
	return r, nil
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("duration %q must be positive, like 30s or 2m", s)
	}
	return d, nil
}

// Draw reports whether an event of probability rate happens for the key; the same key always
// gives the same answer.
func Draw(rate float64, key uint64) bool {
	if rate <= 0 {
		return false
	}
	if rate >= 1 {
		return true
	}
	return (float64(key>>11)+0.5)/(1<<53) < rate
}
