package inject

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSlowdown(t *testing.T) {
	tests := []struct {
		spec string
		want *Slowdown
		err  string
	}{
		{"", &Slowdown{}, ""},
		{"prefill=1.2", &Slowdown{Rules: []Rule{{Phase: Prefill, Factor: 1.2}}}, ""},
		{"decode=110%@ctx>=64K", &Slowdown{Rules: []Rule{{Phase: Decode, Factor: 1.1, Conds: []Cond{{"ctx", ">=", 65536}}}}}, ""},
		{"all=2@batch>8&ctx<1M, decode=1.5", &Slowdown{Rules: []Rule{
			{Phase: All, Factor: 2, Conds: []Cond{{"batch", ">", 8}, {"ctx", "<", 1 << 20}}},
			{Phase: Decode, Factor: 1.5}}}, ""},
		{"decode=+5%/min", &Slowdown{Rules: []Rule{{Phase: Decode, Factor: 1, Drift: 0.05 / 60}}}, ""},
		{"all=+0.01/s@ctx>=8K", &Slowdown{Rules: []Rule{{Phase: All, Factor: 1, Drift: 0.01, Conds: []Cond{{"ctx", ">=", 8192}}}}}, ""},
		{"prefill=+36/h", &Slowdown{Rules: []Rule{{Phase: Prefill, Factor: 1, Drift: 0.01}}}, ""},
		{"decode=+5%", nil, "want +rate/unit"},
		{"decode=+5%/day", nil, "unit"},
		{"decode=-5%/min", nil, "grows"},
		{"decode=+0/min", nil, "above 0"},
		{"decode=+x/min", nil, "not a number"},
		{"decode=+2000/s", nil, "at most"},
		{"decode", nil, "missing ="},
		{"gpu=2", nil, "unknown phase"},
		{"decode=0", nil, "above 0"},
		{"decode=x", nil, "not a number"},
		{"decode=1.1@tokens>5", nil, "want ctx or batch"},
		{"decode=1.1@ctx~5", nil, "want one of"},
		{"decode=1.1@ctx>=5Q", nil, "not a whole number"},
	}
	for _, tt := range tests {
		got, err := ParseSlowdown(tt.spec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSlowdown(%q) error %v, want one containing %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSlowdown(%q): %v", tt.spec, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseSlowdown(%q) (-want +got):\n%s", tt.spec, diff)
		}
	}
}

func TestSlowdownFactor(t *testing.T) {
	s, err := ParseSlowdown("decode=1.10@ctx>=64K,prefill=1.2,all=2@batch>=16")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		p     Phase
		ctx   float64
		batch int
		want  float64
	}{
		{Decode, 32768, 1, 1},
		{Decode, 65536, 1, 1.1},
		{Prefill, 65536, 1, 1.2},
		{Decode, 65536, 16, 2.2},
		{Prefill, 8192, 16, 2.4},
	}
	for _, tt := range tests {
		if got := s.Factor(tt.p, tt.ctx, tt.batch); got < tt.want-1e-9 || got > tt.want+1e-9 {
			t.Errorf("Factor(%v, %g, %d) = %g, want %g", tt.p, tt.ctx, tt.batch, got, tt.want)
		}
	}
}

// TestSlowdownDrift checks that a drift rule's factor grows linearly with the time since the
// server started and multiplies with the constant rules that match.
func TestSlowdownDrift(t *testing.T) {
	s, err := ParseSlowdown("decode=+6%/min,decode=1.1@ctx>=64K")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		p       Phase
		ctx     float64
		elapsed time.Duration
		want    float64
	}{
		{Decode, 8192, 0, 1},
		{Decode, 8192, 30 * time.Second, 1.03},
		{Decode, 8192, 10 * time.Minute, 1.6},
		{Decode, 65536, 30 * time.Second, 1.03 * 1.1},
		{Prefill, 8192, 10 * time.Minute, 1},
	}
	for _, tt := range tests {
		if got := s.FactorAt(tt.p, tt.ctx, 1, tt.elapsed); got < tt.want-1e-9 || got > tt.want+1e-9 {
			t.Errorf("FactorAt(%v, %g, %v) = %g, want %g", tt.p, tt.ctx, tt.elapsed, got, tt.want)
		}
	}
	if got := s.Factor(Decode, 8192, 1); got != 1 {
		t.Errorf("Factor (no time) = %g, want 1", got)
	}
}

func TestParseFaults(t *testing.T) {
	tests := []struct {
		spec string
		want *Faults
		err  string
	}{
		{"", &Faults{}, ""},
		{"error=5%", &Faults{ErrorRate: 0.05}, ""},
		{"cut=100", &Faults{CutAfter: 100, CutRate: 1}, ""},
		{"cut=100@0.25, crash=30s", &Faults{CutAfter: 100, CutRate: 0.25, Crash: 30 * time.Second}, ""},
		{"dead=1m,hang=2s,slow-health=500ms", &Faults{Dead: time.Minute, Hang: 2 * time.Second, SlowHealth: 500 * time.Millisecond}, ""},
		{"starve=40%", &Faults{Starve: 0.4}, ""},
		{"starve=100%", nil, "below 100"},
		{"error=2", nil, "between 0 and 1"},
		{"cut=0", nil, "≥ 1"},
		{"crash=soon", nil, "positive"},
		{"boom=1", nil, "unknown fault"},
		{"error=1%,error=2%", nil, "twice"},
		{"crash", nil, "missing ="},
	}
	for _, tt := range tests {
		got, err := ParseFaults(tt.spec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseFaults(%q) error %v, want one containing %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseFaults(%q): %v", tt.spec, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseFaults(%q) (-want +got):\n%s", tt.spec, diff)
		}
	}
}

func TestDrawRate(t *testing.T) {
	n := 0
	for i := range uint64(100000) {
		if Draw(0.1, i*0x9e3779b97f4a7c15) {
			n++
		}
	}
	if n < 9000 || n > 11000 {
		t.Fatalf("Draw(0.1) happened %d times in 100000", n)
	}
}

func FuzzParseSlowdown(f *testing.F) {
	for _, s := range []string{"decode=1.10@ctx>=64K", "prefill=1.2", "all=2@batch>8&ctx<1M,decode=1.5", "x=@", ",,", "decode=+5%/min", "all=+0.01/s@ctx>=8K", "decode=+/", "decode=+1e308/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := ParseSlowdown(spec)
		if err != nil {
			if s != nil {
				t.Fatal("result with an error")
			}
			return
		}
		for _, r := range s.Rules {
			if !(r.Factor > 0) {
				t.Fatalf("rule with factor %g accepted", r.Factor)
			}
		}
		if f := s.Factor(Decode, 1e6, 3); !(f > 0) {
			t.Fatalf("factor %g", f)
		}
		for _, r := range s.Rules {
			if r.Drift < 0 || math.IsNaN(r.Drift) || math.IsInf(r.Drift, 0) {
				t.Fatalf("rule with drift %g accepted", r.Drift)
			}
		}
		if f := s.FactorAt(All, 1e6, 3, 24*time.Hour); !(f > 0) || math.IsInf(f, 0) {
			t.Fatalf("factor after a day %g", f)
		}
	})
}

func FuzzParseFaults(f *testing.F) {
	for _, s := range []string{"error=5%", "cut=100@0.1,crash=30s", "dead=1m,hang=2s,slow-health=1s", "=", "cut=@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		fl, err := ParseFaults(spec)
		if err != nil {
			return
		}
		if fl.ErrorRate < 0 || fl.ErrorRate > 1 || fl.CutRate < 0 || fl.CutRate > 1 || fl.CutAfter < 0 ||
			fl.Crash < 0 || fl.Dead < 0 || fl.Hang < 0 || fl.SlowHealth < 0 {
			t.Fatalf("out-of-range faults accepted: %+v", fl)
		}
	})
}
