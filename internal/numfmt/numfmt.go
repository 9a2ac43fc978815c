package numfmt

import (
	"math"
	"strconv"
	"strings"
)

// Dash stands for a number that does not exist (a cell not measured, a column that does not
// apply).
const Dash = "—"

// FormatTokPerS formats a rate as the reference report does: one decimal with thousands
// separators below 10,000 ("9,819.0", "153.9"), else thousands with one decimal and a trailing
// ".0" dropped ("12.2K", "12K").
func FormatTokPerS(v float64) string {
	if e, ok := huge(v); ok {
		return e
	}
	if v >= 10000 {
		s := strconv.FormatFloat(v/1000, 'f', 1, 64)
		return strings.TrimSuffix(s, ".0") + "K"
	}
	return Group(strconv.FormatFloat(v, 'f', 1, 64))
}

// FormatTokPerSShort formats a rate as the reference's prefill list does: like FormatTokPerS
// from 10,000 up, and a whole number below ("9,819").
func FormatTokPerSShort(v float64) string {
	if v >= 10000 {
		return FormatTokPerS(v)
	}
	return grouped(v, 0)
}

// FormatMs formats a latency in milliseconds: whole milliseconds from 100 ms up ("1,645 ms",
// "657 ms"), one decimal below ("6.1 ms").
func FormatMs(v float64) string {
	if v >= 100 {
		return grouped(v, 0) + " ms"
	}
	return grouped(v, 1) + " ms"
}

// FormatTTFT formats a time to first token: always whole milliseconds ("671 ms", "104,385 ms").
func FormatTTFT(v float64) string {
	return grouped(v, 0) + " ms"
}

// FormatTBT formats a time between tokens: one decimal ("6.1 ms", "45.4 ms", "1,204.5 ms").
func FormatTBT(v float64) string {
	return grouped(v, 1) + " ms"
}

// FormatSeconds formats a duration in seconds with one decimal ("30.0 s").
func FormatSeconds(v float64) string {
	return grouped(v, 1) + " s"
}

// FormatOne formats a number with one decimal and thousands separators ("23.1", "1.0").
func FormatOne(v float64) string {
	return grouped(v, 1)
}

// FormatInt formats a count with thousands separators ("4,616").
func FormatInt(v int) string {
	return Group(strconv.Itoa(v))
}

// FormatPercent formats a signed relative change given as a fraction: +0.041 → "+4.1%".
func FormatPercent(frac float64) string {
	p := frac * 100
	if e, ok := huge(p); ok {
		if p >= 0 {
			e = "+" + e
		}
		return e + "%"
	}
	if math.Abs(p) < 0.05 {
		p = 0
	}
	s := strconv.FormatFloat(p, 'f', 1, 64)
	if p >= 0 {
		s = "+" + s
	}
	return s + "%"
}

// MinSignificant is how many significant digits the precise formats show at least.
const MinSignificant = 3

// decimals returns how many decimals show v with at least MinSignificant significant digits,
// and never fewer than least.
func decimals(v float64, least int) int {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return least
	}
	return max(least, MinSignificant-1-int(math.Floor(math.Log10(math.Abs(v)))))
}

// FormatTokPerSPrecise formats a rate for a comparison: as FormatTokPerS where that shows
// three significant digits ("153.9", "12.2K"), with more decimals where it would not ("8.23",
// "12.0K"), so that a change of a few percent shows in the numbers themselves.
func FormatTokPerSPrecise(v float64) string {
	if e, ok := huge(v); ok {
		return e
	}
	if v >= 10000 {
		return strconv.FormatFloat(v/1000, 'f', decimals(v/1000, 1), 64) + "K"
	}
	return grouped(v, decimals(v, 1))
}

// FormatTTFTPrecise formats a time to first token for a comparison: whole milliseconds from
// 100 ms up as FormatTTFT does ("671 ms"), three significant digits below ("45.6 ms", "2.35 ms").
func FormatTTFTPrecise(v float64) string {
	return grouped(v, decimals(v, 0)) + " ms"
}

// FormatTBTPrecise formats a time between tokens for a comparison: one decimal from 10 ms up as
// FormatTBT does ("45.4 ms"), three significant digits below ("6.14 ms", "0.700 ms"), so that
// "0.700 ms → 0.770 ms" shows a 10 % change that "0.7 ms → 0.8 ms" would misstate.
func FormatTBTPrecise(v float64) string {
	return grouped(v, decimals(v, 1)) + " ms"
}

// hugeAt is the magnitude from which a number prints in exponent form ("1.235e+20"): no
// measurement has sixteen digits, and a corrupt 1e308 must not print as 309 of them.
const hugeAt = 1e15

// huge returns the exponent form of v (four significant digits) when v is not finite or its
// magnitude is at least hugeAt; ok is false otherwise.
func huge(v float64) (string, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) >= hugeAt {
		return strconv.FormatFloat(v, 'g', 4, 64), true
	}
	return "", false
}

// grouped formats v with prec decimals and thousands separators, or in exponent form when it is
// huge.
func grouped(v float64, prec int) string {
	if e, ok := huge(v); ok {
		return e
	}
	return Group(strconv.FormatFloat(v, 'f', prec, 64))
}

// Fixed formats v with prec decimals and no separators ("0.5", "141.0"), or in exponent form when
// it is not finite or its magnitude is at least 10^15.
func Fixed(v float64, prec int) string {
	if e, ok := huge(v); ok {
		return e
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// Plain formats v with the fewest digits that read back to it ("0.05", "141", "29.74"), or in
// exponent form when it is not finite or its magnitude is at least 10^15.
func Plain(v float64) string {
	if _, ok := huge(v); ok {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Group inserts thousands separators into the integer part of a decimal number written by
// strconv ("-12345.6" → "-12,345.6").
func Group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i:]
	}
	if len(intPart) <= 3 {
		return sign + s
	}
	var b strings.Builder
	lead := len(intPart) % 3
	if lead > 0 {
		b.WriteString(intPart[:lead])
	}
	for i := lead; i < len(intPart); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(intPart[i : i+3])
	}
	return sign + b.String() + frac
}
