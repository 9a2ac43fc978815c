// Package numfmt formats numbers exactly as the reference "Speed test matrix" report prints
// them ("12.2K", "9,819.0", "1,645 ms"). Both the renderer and the importer use it, so what one
// writes the other reads. The Precise formats, for comparisons, add the decimals that the
// reference's forms would drop below three significant digits ("0.700 ms", not "0.7 ms"). It is
// a leaf: it imports nothing of this module.
//
// # Method
//
// One function per kind of number: rates (FormatTokPerS, and FormatTokPerSShort for "12.2K"),
// latencies (FormatTTFT, FormatTBT, FormatMs), seconds, counts and percentages, each in the
// reference's rounding and digit grouping; the Precise forms and Fixed and Plain for the
// comparisons and machine-readable text. Nothing here parses: results/import.go reads these
// forms back.
package numfmt
