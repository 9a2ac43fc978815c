package report

import "github.com/speedmatrix/speedmatrix/internal/numfmt"

// Dash stands for a number that does not exist (a cell not measured, a column that does not
// apply).
const Dash = numfmt.Dash

// FormatTokPerS formats a rate as the reference report does: one decimal with thousands
// separators below 10,000 ("9,819.0", "153.9"), else thousands with one decimal and a trailing
// ".0" dropped ("12.2K", "12K").
func FormatTokPerS(v float64) string { return numfmt.FormatTokPerS(v) }

// FormatTokPerSShort formats a rate as the reference's prefill list does: like FormatTokPerS
// from 10,000 up, and a whole number below ("9,819").
func FormatTokPerSShort(v float64) string { return numfmt.FormatTokPerSShort(v) }

// FormatMs formats a latency in milliseconds: whole milliseconds from 100 ms up ("1,645 ms",
// "657 ms"), one decimal below ("6.1 ms").
func FormatMs(v float64) string { return numfmt.FormatMs(v) }

// FormatTTFT formats a time to first token: always whole milliseconds ("671 ms", "104,385 ms").
func FormatTTFT(v float64) string { return numfmt.FormatTTFT(v) }

// FormatTBT formats a time between tokens: one decimal ("6.1 ms", "45.4 ms", "1,204.5 ms").
func FormatTBT(v float64) string { return numfmt.FormatTBT(v) }

// FormatSeconds formats a duration in seconds with one decimal ("30.0 s").
func FormatSeconds(v float64) string { return numfmt.FormatSeconds(v) }

// FormatOne formats a number with one decimal and thousands separators ("23.1", "1.0").
func FormatOne(v float64) string { return numfmt.FormatOne(v) }

// FormatInt formats a count with thousands separators ("4,616").
func FormatInt(v int) string { return numfmt.FormatInt(v) }

// FormatPercent formats a signed relative change given as a fraction: +0.041 → "+4.1%".
func FormatPercent(frac float64) string { return numfmt.FormatPercent(frac) }

// Group inserts thousands separators into the integer part of a decimal number written by
// strconv ("-12345.6" → "-12,345.6").
func Group(s string) string { return numfmt.Group(s) }
