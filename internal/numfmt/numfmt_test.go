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
