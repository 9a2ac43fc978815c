package stream

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRepetitionDetect(t *testing.T) {
	prose := "It was late in the season when the boats came back, and the harbor smelled of tar and rain. "
	cases := []struct {
		name string
		out  string
		cfg  RepetitionConfig
		want *Repetition
	}{
		{"natural prose", strings.Repeat("x", 0) + prose + "The keeper counted them twice, then once more, because one had a new sail.", DefaultRepetition, nil},
		{"phrase loop", prose + strings.Repeat("I am sorry. ", 30), DefaultRepetition, &Repetition{Segment: "I am sorry. ", Repeats: 30}},
		{"single char loop", prose + strings.Repeat("!", 300), DefaultRepetition, &Repetition{Segment: "!", Repeats: 300}},
		{"too few repeats", prose + strings.Repeat("I am sorry. ", 5), DefaultRepetition, nil},
		{"too few bytes", prose + strings.Repeat("ab", 20), DefaultRepetition, nil},
		{"whitespace only", prose + strings.Repeat("\n", 500), DefaultRepetition, nil},
		{"loop not at the end", strings.Repeat("I am sorry. ", 30) + prose, DefaultRepetition, nil},
		{"off", prose + strings.Repeat("I am sorry. ", 30), RepetitionConfig{}, nil},
		// What the real vLLM streams with random weights (--load-format dummy): two tokens in
		// turn (testdata/servers/vllm-cpu/completions_stream.sse); a run with such a model
		// turns the check off (engine.RandomWeights), else every decode cell fails here.
		{"random weights", strings.Repeat(" fee"+"our", 64), DefaultRepetition, &Repetition{Segment: " feeour", Repeats: 64}},
		{"long period", prose + strings.Repeat(prose, 9), DefaultRepetition, &Repetition{Segment: prose, Repeats: 10}},
		{"period above max", prose + strings.Repeat(prose, 9), RepetitionConfig{MinPeriod: 1, MaxPeriod: 50, MinRepeats: 8, MinBytes: 256}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := tc.cfg.Detect([]byte(tc.out))
			var got *Repetition
			if ok {
				got = &r
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
