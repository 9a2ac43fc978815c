package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// ConfigIDLen is the number of hex digits of a config id.
const ConfigIDLen = 16

// configKey is what makes two results files comparable; ConfigID hashes its JSON.
type configKey struct {
	Model    string   `json:"model"`
	Revision string   `json:"revision,omitempty"`
	GPU      string   `json:"gpu"`
	GPUCount int      `json:"gpu_count"`
	Endpoint string   `json:"endpoint"`
	Decode   []int    `json:"decode_contexts"`
	Conc     []int    `json:"concurrency"`
	Prefill  []int    `json:"prefill_contexts"`
	Cells    []string `json:"cells,omitempty"`
	Duration float64  `json:"duration_seconds"`
	MaxTok   int      `json:"max_tokens"`
	Launch   string   `json:"launch_command"`
	SimProf  string   `json:"simulator_profile,omitempty"`
	Scale    float64  `json:"time_scale"`
}

// ConfigID returns the short hex SHA-256 (ConfigIDLen digits) of what makes results comparable:
//
//   - the model (run.served_model, run.revision);
//   - the hardware: GPU model and count (not the driver, clocks or OS: a driver update is a
//     change the history should show, not a new series);
//   - the matrix: decode contexts, concurrency levels, prefill contexts and an explicit cell
//     list (run.settings; for a file without settings, the cells it holds), the window
//     duration, max_tokens and the endpoint;
//   - the launch command, already redacted of secrets, with runs of white space made one space
//     and the server's port (of run.settings.url) written PORT: an engine served on a port
//     picked per run (engine.serve.port 0) is one series;
//   - the built-in simulator's profile and time scale (File.TimeScale).
//
// The engine commit, run id, start and end times, trials, seed, the simulator's noise, slowdown
// and fault (in its settings and in its launch command), and every measured number do not
// change it: they differ between runs that are meant to be compared.
func ConfigID(f *results.File) string {
	k := configKey{
		Model:    strings.TrimSpace(f.Run.ServedModel),
		Revision: strings.TrimSpace(f.Run.Revision),
		GPU:      strings.TrimSpace(f.Hardware.GPU),
		GPUCount: f.Hardware.GPUCount,
		Duration: f.Run.SecondsPerMeasurement,
		MaxTok:   f.Run.MaxOutputTokens,
		Launch:   strings.Join(strings.Fields(f.Run.LaunchCommand), " "),
		Scale:    f.TimeScale(),
	}
	if s := f.Run.Settings; s != nil {
		k.Endpoint = s.Endpoint
		k.Launch = withoutPort(k.Launch, s.URL)
		k.Decode = contexts(s.Contexts)
		k.Conc = sortedInts(s.Concurrency)
		k.Prefill = contexts(s.PrefillContexts)
		for _, c := range s.Cells {
			if id, err := results.ParseCellID(c); err == nil {
				k.Cells = append(k.Cells, id.String())
			} else {
				k.Cells = append(k.Cells, strings.TrimSpace(c))
			}
		}
		slices.Sort(k.Cells)
		k.Cells = slices.Compact(k.Cells)
		if s.DurationSeconds > 0 {
			k.Duration = s.DurationSeconds
		}
		if s.MaxTokens > 0 {
			k.MaxTok = s.MaxTokens
		}
		if s.Simulator != nil {
			k.SimProf = s.Simulator.Profile
			k.Launch = simLaunch(k.Launch)
		}
	}
	if k.Decode == nil && k.Conc == nil && k.Prefill == nil && k.Cells == nil {
		for _, c := range f.Decode {
			k.Decode = append(k.Decode, c.Context)
			k.Conc = append(k.Conc, c.Concurrency)
		}
		for _, c := range f.Prefill {
			k.Prefill = append(k.Prefill, c.Context)
		}
		k.Decode, k.Conc, k.Prefill = sortedInts(k.Decode), sortedInts(k.Conc), sortedInts(k.Prefill)
	}
	data, _ := json.Marshal(k)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:ConfigIDLen]
}

// withoutPort returns the launch command (words already single-spaced) with the port of the
// server's URL written PORT where the command gives it: host:PORT, --port PORT, --port=PORT.
func withoutPort(cmd, serverURL string) string {
	u, err := url.Parse(serverURL)
	if err != nil || u.Port() == "" {
		return cmd
	}
	port := u.Port()
	words := strings.Fields(cmd)
	for i, w := range words {
		switch {
		case strings.HasSuffix(w, ":"+port):
			words[i] = strings.TrimSuffix(w, port) + "PORT"
		case strings.HasSuffix(w, "port="+port):
			words[i] = strings.TrimSuffix(w, port) + "PORT"
		case w == port && i > 0 && strings.HasSuffix(words[i-1], "port"):
			words[i] = "PORT"
		case w == port && i > 0 && !strings.HasPrefix(words[i-1], "-"):
			// A positional argument, as a launch script takes it (serve.sh PORT); a flag's
			// value equal to the port (--max-num-seqs 64) is that flag's.
			words[i] = "PORT"
		}
	}
	return strings.Join(words, " ")
}

// simRunFlags are the flags of `speedmatrix sim` that differ between runs meant to be compared
// (the seed, the noise, and the slow-downs and faults under test).
var simRunFlags = []string{"--seed", "--noise", "--slowdown", "--fault"}

// simLaunch returns a simulator's launch command (words already single-spaced) without the
// values of simRunFlags, so that the runs of one profile at one speed share a config id; the
// speed is written --speedup, its name before --sim-speedup, so that either spelling of one
// speed keeps the ids of results stored before the rename.
func simLaunch(cmd string) string {
	words := strings.Fields(cmd)
	out := words[:0:0]
	for i := 0; i < len(words); i++ {
		if w, ok := strings.CutPrefix(words[i], "--sim-speedup"); ok && (w == "" || w[0] == '=') {
			words[i] = "--speedup" + w
		}
		name, _, hasValue := strings.Cut(words[i], "=")
		if slices.Contains(simRunFlags, name) {
			if !hasValue {
				i++ // the value is the next word
			}
			continue
		}
		out = append(out, words[i])
	}
	return strings.Join(out, " ")
}

// contexts parses context labels ("8K", "8192") to token counts, sorted and without repeats;
// a label that does not parse is dropped (Validate of the run's settings reports it).
func contexts(labels []string) []int {
	var out []int
	for _, l := range labels {
		if n, err := results.ParseContext(l); err == nil {
			out = append(out, n)
		}
	}
	return sortedInts(out)
}

func sortedInts(xs []int) []int {
	if len(xs) == 0 {
		return nil
	}
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}
