package calibrate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/compare"
)

// ParseDecodeRatePrior parses a prior for decode rates by concurrency, as calibrate's
// calibrate --compare prior-decode-rate= takes it: UPTO=PERCENT entries joined by commas, in rising UPTO, the last
// one *=PERCENT for every higher concurrency ("1=20,2=24,4=9,*=1").
func ParseDecodeRatePrior(s string) ([]compare.ConcurrencyCV, error) {
	bad := func(why string) ([]compare.ConcurrencyCV, error) {
		return nil, fmt.Errorf("decode-rate prior %q: %s (want UPTO=PERCENT,…,*=PERCENT, e.g. 1=20,2=24,4=9,*=1)", s, why)
	}
	var out []compare.ConcurrencyCV
	parts := strings.Split(s, ",")
	for i, p := range parts {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			return bad(fmt.Sprintf("entry %q has no =", p))
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
		if err != nil || !(pct > 0 && pct < 100) {
			return bad(fmt.Sprintf("%q is not a percentage between 0 and 100", v))
		}
		e := compare.ConcurrencyCV{CV: pct / 100}
		last := i == len(parts)-1
		switch k = strings.TrimSpace(k); {
		case k == "*" && last:
		case k == "*":
			return bad("* must be the last entry")
		case last:
			return bad("the last entry must be *=PERCENT")
		default:
			n, err := strconv.Atoi(k)
			if err != nil || n < 1 || (len(out) > 0 && n <= out[len(out)-1].UpTo) {
				return bad(fmt.Sprintf("%q is not a concurrency above the previous entry's", k))
			}
			e.UpTo = n
		}
		out = append(out, e)
	}
	return out, nil
}
