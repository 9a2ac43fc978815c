package results

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var plainNumberRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// ParseNumber reads a number as reports print it: "9,819.0", "153.9", "12.2K", "12K", "1.2M".
// A K or M suffix scales by 1,000 or 1,000,000 without binary rounding ("12.2K" is exactly
// 12200).
func ParseNumber(s string) (float64, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	scale := 0
	switch {
	case strings.HasSuffix(t, "K"):
		scale, t = 3, strings.TrimSuffix(t, "K")
	case strings.HasSuffix(t, "M"):
		scale, t = 6, strings.TrimSuffix(t, "M")
	}
	if !plainNumberRE.MatchString(t) {
		return 0, fmt.Errorf("%q is not a number like 9,819.0 or 12.2K", s)
	}
	if scale > 0 {
		ip, fp, _ := strings.Cut(t, ".")
		if len(fp) > scale {
			return 0, fmt.Errorf("%q has more digits than its suffix can hold", s)
		}
		t = ip + fp + strings.Repeat("0", scale-len(fp))
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number like 9,819.0 or 12.2K", s)
	}
	return v, nil
}

// ParseInt reads a count as reports print it: "4,616".
func ParseInt(s string) (int, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a count like 4,616", s)
	}
	return n, nil
}

// ParseMillis reads a latency: "1,645 ms", "6.1 ms", "1.2 s", "250 µs".
func ParseMillis(s string) (float64, error) {
	t := strings.TrimSpace(s)
	for _, u := range []struct {
		suffix string
		scale  float64
	}{{"ms", 1}, {"µs", 0.001}, {"us", 0.001}, {"s", 1000}} {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			v, err := ParseNumber(num)
			if err != nil {
				break
			}
			return v * u.scale, nil
		}
	}
	return 0, fmt.Errorf("%q is not a latency like 1,645 ms or 6.1 ms", s)
}

// ParseSeconds reads a duration in seconds: "30.0 s", "30 s".
func ParseSeconds(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if num, ok := strings.CutSuffix(t, "s"); ok && !strings.HasSuffix(num, "m") {
		if v, err := ParseNumber(num); err == nil {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%q is not a duration like 30.0 s", s)
}
