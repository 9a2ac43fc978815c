package numfmt

import (
	"math"
	"strings"
	"testing"
)

func TestFormats(t *testing.T) {
	tests := []struct {
		name string
		f    func(float64) string
		in   float64
		want string
	}{
		// Values and forms from the reference report.
		{"rate K", FormatTokPerS, 12200, "12.2K"},
		{"rate K whole", FormatTokPerS, 12000, "12K"},
		{"rate K rounds", FormatTokPerS, 13249, "13.2K"},
		{"rate below 10K", FormatTokPerS, 9819, "9,819.0"},
		{"rate small", FormatTokPerS, 153.94, "153.9"},
		{"rate at 10K", FormatTokPerS, 10000, "10K"},
		{"short rate", FormatTokPerSShort, 9819, "9,819"},
		{"short rate K", FormatTokPerSShort, 11200, "11.2K"},
		{"ttft", FormatTTFT, 1645.4, "1,645 ms"},
		{"ttft big", FormatTTFT, 104385, "104,385 ms"},
		{"ttft small", FormatTTFT, 45.6, "46 ms"},
		{"tbt", FormatTBT, 6.14, "6.1 ms"},
		{"tbt big", FormatTBT, 1204.46, "1,204.5 ms"},
		{"ms large", FormatMs, 657, "657 ms"},
		{"ms small", FormatMs, 6.1, "6.1 ms"},
		{"seconds", FormatSeconds, 29.74, "29.7 s"},
		{"one", FormatOne, 23.08, "23.1"},
		{"percent up", FormatPercent, 0.041, "+4.1%"},
		{"percent down", FormatPercent, -0.1234, "-12.3%"},
		{"percent zero", FormatPercent, -0.0001, "+0.0%"},
	}
	for _, tt := range tests {
		if got := tt.f(tt.in); got != tt.want {
			t.Errorf("%s: %v → %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestGroup(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "999": "999", "1000": "1,000", "4616": "4,616", "1234567.89": "1,234,567.89",
		"-12345.6": "-12,345.6", "100000": "100,000",
	} {
		if got := Group(in); got != want {
			t.Errorf("Group(%q) = %q, want %q", in, got, want)
		}
	}
	if got := FormatInt(4616); got != "4,616" {
		t.Errorf("FormatInt(4616) = %q", got)
	}
}

// TestPreciseFormats checks the comparison formats: the reference's form where it already shows
// three significant digits, more decimals where it would not, so that a change of a few percent
// is visible in the numbers themselves.
func TestPreciseFormats(t *testing.T) {
	tests := []struct {
		name string
		f    func(float64) string
		in   float64
		want string
	}{
		{"tbt tiny", FormatTBTPrecise, 0.7, "0.700 ms"},
		{"tbt tiny +10%", FormatTBTPrecise, 0.77, "0.770 ms"},
		{"tbt small", FormatTBTPrecise, 6.14, "6.14 ms"},
		{"tbt as reference", FormatTBTPrecise, 45.44, "45.4 ms"},
		{"tbt big", FormatTBTPrecise, 1204.46, "1,204.5 ms"},
		{"ttft small", FormatTTFTPrecise, 45.64, "45.6 ms"},
		{"ttft tiny", FormatTTFTPrecise, 2.345, "2.35 ms"},
		{"ttft as reference", FormatTTFTPrecise, 671.4, "671 ms"},
		{"ttft big", FormatTTFTPrecise, 104385, "104,385 ms"},
		{"rate as reference", FormatTokPerSPrecise, 153.94, "153.9"},
		{"rate tiny", FormatTokPerSPrecise, 8.234, "8.23"},
		{"rate K keeps three digits", FormatTokPerSPrecise, 12000, "12.0K"},
		{"rate K", FormatTokPerSPrecise, 12240, "12.2K"},
		{"rate large K", FormatTokPerSPrecise, 123456, "123.5K"},
		{"zero", FormatTBTPrecise, 0, "0.0 ms"},
	}
	for _, tt := range tests {
		if got := tt.f(tt.in); got != tt.want {
			t.Errorf("%s: %v → %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	// A 10 % change of a tiny time must show in the numbers.
	if a, b := FormatTBTPrecise(0.7), FormatTBTPrecise(0.77); a == b {
		t.Errorf("0.7 ms and 0.77 ms both format as %q", a)
	}
}

// TestHugeNumbers checks that no formatter prints a corrupt huge number in full (1e308 has 309
// digits) or a non-finite one as a broken number ("+InfK").
func TestHugeNumbers(t *testing.T) {
	formats := map[string]func(float64) string{
		"FormatTokPerS": FormatTokPerS, "FormatTokPerSShort": FormatTokPerSShort, "FormatMs": FormatMs,
		"FormatTTFT": FormatTTFT, "FormatTBT": FormatTBT, "FormatSeconds": FormatSeconds, "FormatOne": FormatOne,
		"FormatPercent": FormatPercent, "Plain": Plain, "Fixed1": func(v float64) string { return Fixed(v, 1) },
	}
	for name, f := range formats {
		for _, v := range []float64{1e308, -1e308, 1e15, math.Inf(1), math.NaN()} {
			if got := f(v); len(got) > 16 || strings.Contains(got, "InfK") {
				t.Errorf("%s(%g) = %q: want a short exponent form", name, v, got)
			}
		}
	}
	for _, tt := range []struct {
		got, want string
	}{
		{FormatTTFT(1e308), "1e+308 ms"}, {FormatTokPerS(1e308), "1e+308"}, {FormatPercent(1e306), "+1e+308%"},
		{Plain(1e308), "1e+308"}, {Plain(29.74), "29.74"}, {Fixed(141, 1), "141.0"}, {FormatTTFT(86_400_000), "86,400,000 ms"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
