package measure

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/bench/server"
	"github.com/speedmatrix/speedmatrix/bench/stream"
	"github.com/speedmatrix/speedmatrix/bench/telemetry"
	"github.com/speedmatrix/speedmatrix/engine"
	"github.com/speedmatrix/speedmatrix/internal/redact"
)

// apiKey returns the server's API key, read from the variable api_key_env names ("" without
// one); a named variable that is not set or empty is a settings error.
func apiKey(env *Deps, o session) (string, error) {
	if o.APIKeyEnv == "" {
		return "", nil
	}
	key := env.Getenv(o.APIKeyEnv)
	if key == "" {
		return "", settingsf("--api-key-env %s: the variable is not set or empty; export the key in it", o.APIKeyEnv)
	}
	return key, nil
}

// newRunner returns the configuration and the runner of one measurement of the server at
// baseURL (the run's id runID; key its API key, also redacted wherever the launch command holds
// it), and how to close its stream client once the runner is done. Errors are settings errors.
func newRunner(env *Deps, o session, baseURL, key, runID string) (bench.Config, *bench.Runner, func(), error) {
	cfg, err := benchConfig(o, baseURL, runID)
	if err != nil {
		return cfg, nil, nil, err
	}
	cfg.LaunchCommand = redact.Command(o.LaunchCommand, redact.WithValues(key)) // the key wherever it appears
	streamOpts, infoOpts := []stream.Option{stream.WithAPIKey(key)}, []server.Option{server.WithAPIKey(key)}
	scraper := &telemetry.Scraper{URL: telemetry.MetricsURL(baseURL), APIKey: key, Log: env.Log}
	var infoHC *http.Client
	if env.Net != nil {
		infoHC, scraper.Client = env.httpClient(120*time.Second), env.httpClient(10*time.Second)
		streamOpts = append(streamOpts, stream.WithDialer(env.Net.DialContext))
		infoOpts = append(infoOpts, server.WithHTTPClient(infoHC))
	}
	if note := randomWeightsNote(o); note != "" {
		streamOpts = append(streamOpts, stream.WithRepetition(stream.RepetitionConfig{}))
		cfg.Notes = append(cfg.Notes, note)
	}
	sc := stream.New(baseURL, streamOpts...)
	info := server.New(baseURL, infoOpts...)
	streamer := bench.StreamClient{C: sc}
	var srv bench.ServerInfo = bench.ServerClient{C: info}
	if o.serverVersion != nil {
		srv = knownVersion{ServerInfo: srv, version: *o.serverVersion}
	}
	r := &bench.Runner{
		Stream:   streamer,
		Server:   srv,
		Prompts:  bench.NewPrompter(info, streamer, runID, o.Endpoint),
		Metrics:  bench.TelemetryScraper{S: scraper},
		Progress: pickProgress(env, o.Quiet, o.timeScale()),
		Log:      env.Log,
	}
	closeAll := func() {
		sc.Close()
		for _, hc := range []*http.Client{scraper.Client, infoHC} {
			if hc != nil {
				hc.CloseIdleConnections()
			}
		}
	}
	return cfg, r, closeAll, nil
}

// randomWeightsNote returns, when the server serves random weights (engine.RandomWeights of the
// command engine.serve started, or of --launch-command), the note saying that the client's
// repetition check is off for the run; "" otherwise, and the check stays on. A model with
// random weights repeats one token or a short loop, which the check would fail as bad output.
func randomWeightsNote(o session) string {
	argv := o.servedArgv
	if argv == nil {
		argv = strings.Fields(o.LaunchCommand)
	}
	if !engine.RandomWeights(argv) {
		return ""
	}
	return "the server serves random weights (--load-format dummy): its output loops by nature, so the repeating-output check was off and no cell failed as bad output"
}

// httpClient returns an HTTP client with the timeout over env.Net (which must be set): the
// informational calls (/metrics, /tokenize, /version) of a run over an in-memory network.
func (env *Deps) httpClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: env.Net.DialContext, DisableCompression: true}}
}

// listener returns the listener of a built-in simulator: nil (sim.Start listens on a free
// loopback port) unless env.Net is set.
func (env *Deps) listener() (net.Listener, error) {
	if env.Net == nil {
		return nil, nil
	}
	return env.Net.Listen("tcp", "127.0.0.1:0")
}

// knownVersion is a server's facts whose version was read before measuring (simulatorAtURL), so
// that /version is asked once.
type knownVersion struct {
	bench.ServerInfo
	version string
}

// Version returns the version read before.
func (k knownVersion) Version(context.Context) (string, error) { return k.version, nil }
