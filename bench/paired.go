package bench

import (
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// PairOrder returns the order in which a paired run serves base (A) and head (B) blocks, n
// blocks each: ABBA (A B B A A B B A …: pair k is blocks 2k−1 and 2k, alternating which side
// goes first, so a drift linear in time cancels) or sequential (every base block, then every
// head block: what two separate runs do).
func PairOrder(scheme string, n int) (string, error) {
	if n < 1 {
		return "", fmt.Errorf("paired run: %d blocks per side; want at least 1", n)
	}
	switch scheme {
	case results.PairingABBA:
		var b strings.Builder
		for k := range n {
			if k%2 == 0 {
				b.WriteString("AB")
			} else {
				b.WriteString("BA")
			}
		}
		return b.String(), nil
	case results.PairingSequential:
		return strings.Repeat("A", n) + strings.Repeat("B", n), nil
	}
	return "", fmt.Errorf("paired scheme %q: want %s or %s", scheme, results.PairingABBA, results.PairingSequential)
}
