package stream

import "bytes"

// RepetitionConfig defines the repeating-output detector. The output is a loop when its last
// bytes are one segment repeated back to back: a segment of Period bytes, MinPeriod ≤ Period ≤
// MaxPeriod, containing at least one byte that is not white space, that occurs at least
// MinRepeats times in a row at the very end of the output, the repeated run covering at least
// MinBytes bytes. The shortest such period is reported. Only the last Window bytes of the output
// are kept and examined. MinRepeats 0 turns the detector off.
type RepetitionConfig struct {
	MinPeriod  int
	MaxPeriod  int
	MinRepeats int
	MinBytes   int
	Window     int
}

// DefaultRepetition is the detector the Client uses unless WithRepetition says otherwise: a
// segment of 1 to 1024 bytes repeated at least 8 times in a row, covering at least 256 bytes, at
// the end of the output. Natural text, even at temperature 0, does not end in 256 bytes of one
// segment repeated 8 times; a model stuck in a loop with ignore_eos does.
var DefaultRepetition = RepetitionConfig{MinPeriod: 1, MaxPeriod: 1024, MinRepeats: 8, MinBytes: 256, Window: 16384}

// Repetition is a loop found at the end of an output.
type Repetition struct {
	Segment string // the repeated segment
	Repeats int    // how many times in a row it ends the output
}

// Detect does look for a loop at the end of out and reports it; ok is false when there is none.
// It costs O(MaxPeriod) for ordinary text: each candidate period stops at its first mismatch.
func (rc RepetitionConfig) Detect(out []byte) (rep Repetition, ok bool) {
	if rc.MinRepeats <= 0 {
		return Repetition{}, false
	}
	if rc.Window > 0 && len(out) > rc.Window {
		out = out[len(out)-rc.Window:]
	}
	minP := max(rc.MinPeriod, 1)
	maxP := min(rc.MaxPeriod, len(out)/max(rc.MinRepeats, 2))
	n := len(out)
	for p := minP; p <= maxP; p++ {
		// run = number of trailing bytes for which out[i] == out[i-p].
		run := 0
		for i := n - 1; i >= p && out[i] == out[i-p]; i-- {
			run++
		}
		covered := run + p // bytes that are the segment repeated
		repeats := covered / p
		if repeats < rc.MinRepeats || repeats*p < rc.MinBytes {
			continue
		}
		seg := out[n-p:]
		if len(bytes.TrimSpace(seg)) == 0 {
			continue
		}
		return Repetition{Segment: string(seg), Repeats: repeats}, true
	}
	return Repetition{}, false
}
