package report

import "strconv"

// cellCount returns "1 cell" or "N cells".
func cellCount(n int) string {
	if n == 1 {
		return "1 cell"
	}
	return strconv.Itoa(n) + " cells"
}
