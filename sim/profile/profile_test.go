package profile

import (
	"errors"
	"io/fs"
	"math"
	"regexp"
	"strings"
	"testing"
)

func TestEmbeddedProfilesLoad(t *testing.T) {
	names := Names()
	if len(names) == 0 || names[0] != Default {
		t.Fatalf("embedded profiles %v, want %s among them", names, Default)
	}
	for _, n := range names {
		p, err := Load(n, nil)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if p.Name != n {
			t.Errorf("profile file %s names itself %q", n, p.Name)
		}
	}
}

func TestLoadUserFile(t *testing.T) {
	p, _ := Load(Default, nil)
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	read := func(path string) ([]byte, error) {
		if path == "mine.yaml" {
			return []byte(strings.Replace(string(data), "max_num_seqs: 32", "max_num_seqs: 8", 1)), nil
		}
		return nil, fs.ErrNotExist
	}
	mine, err := Load("mine.yaml", read)
	if err != nil || mine.MaxNumSeqs != 8 {
		t.Fatalf("user file: %v %+v", err, mine)
	}
	if _, err := Load("nope", read); err == nil || !strings.Contains(err.Error(), Default) {
		t.Errorf("a missing profile must list the built-in ones: %v", err)
	}
}

func TestParseRejects(t *testing.T) {
	p, _ := Load(Default, nil)
	data, _ := p.Marshal()
	good := string(data)
	tests := []struct{ name, yaml, want string }{
		{"unknown key", good + "gpu_count: 2\n", "field gpu_count not found"},
		{"typo nested", strings.Replace(good, "block_size:", "blocksize:", 1), "field blocksize not found"},
		{"no name", strings.Replace(good, "name: "+Default, "name: \"\"", 1), "name: missing"},
		{"bad acceptance", strings.Replace(good, "acceptance:\n    - ", "acceptance:\n    - 0.5\n    - ", 1), "acceptance distribution needs"},
		{"negative noise", good + "noise:\n  cv: -1\n", "noise.cv"},
		{"empty", "", "empty"},
		{"acceptance sum", strings.Replace(good, "- 0.31766", "- 0.9", 1), "sum to"},
		{"zero step", regexp.MustCompile(`step_ms: [0-9.]+`).ReplaceAllString(good, "step_ms: 0"), "decode.steps[0]"},
	}
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(tt.yaml), tt.name)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestGeometricAcceptance(t *testing.T) {
	for _, mean := range []float64{1.5, 3, 5} {
		a := AcceptanceForMean(7, mean)
		d := GeometricAcceptance(7, a)
		m, sum := 1.0, 0.0
		for j, p := range d {
			m += float64(j) * p
			sum += p
		}
		if math.Abs(m-mean) > 1e-6 || math.Abs(sum-1) > 1e-9 {
			t.Errorf("mean %g: got mean %g, sum %g", mean, m, sum)
		}
	}
}

func TestLaunchArgs(t *testing.T) {
	got := launchArgs(`env X=1 vllm serve org/model --max-num-seqs 32 --max-model-len=1048576 --speculative-config '{"num_speculative_tokens": 7}'`)
	if got["serve"] != "org/model" || got["--max-num-seqs"] != "32" || got["--max-model-len"] != "1048576" || specTokens(got["--speculative-config"]) != 7 {
		t.Errorf("launch args %v", got)
	}
}

func FuzzParse(f *testing.F) {
	p, _ := Load(Default, nil)
	data, _ := p.Marshal()
	f.Add(string(data))
	f.Add("name: x\nserved_model: m\n")
	f.Add("{}")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(strings.NewReader(s), "fuzz")
		if err != nil {
			return
		}
		// A profile that parses must make a working engine configuration.
		if _, err := p.EngineConfig(1, -1); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("parsed profile fails EngineConfig: %v", err)
		}
	})
}
