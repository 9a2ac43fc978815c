package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// childEnv makes the test binary serve a simulator instead of running tests (see TestMain), so
// that a benchmark can measure the server's own CPU time apart from its clients'.
const childEnv = "SPEEDMATRIX_SIM_BENCH_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(serveChild(spec))
	}
	os.Exit(m.Run())
}

// serveChild serves the default profile at the speedup in spec, prints the URL and runs until
// its stdin closes.
func serveChild(spec string) int {
	speedup, err := strconv.ParseFloat(spec, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	p, err := profile.Load(profile.Default, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	s, err := Start(context.Background(), Config{Profile: p, Seed: 1, NoiseCV: -1, Speedup: speedup})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(s.URL())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = s.Close()
	return 0
}

// BenchmarkServerCPU measures the simulator's CPU use under 128 concurrent streams of an 8K
// prompt (each worker starts its next request as soon as one ends, as the benchmark client
// does), in a child process so that the clients' CPU is not counted. It reports the server's
// CPU as cores (cpu-s per wall-s) and the tokens the clients received per wall second. Run it
// with: go test ./sim -run '^$' -bench ServerCPU -benchtime 1x
func BenchmarkServerCPU(b *testing.B) {
	for _, speedup := range []float64{1, 10, 30} {
		b.Run(fmt.Sprintf("C128/speedup%g", speedup), func(b *testing.B) {
			for b.Loop() {
				cores, tps, gen := serverCPU(b, speedup, 128, 10*time.Second)
				b.ReportMetric(cores, "server-cores")
				b.ReportMetric(tps, "client-tok/s")
				b.ReportMetric(gen, "server-tok/s")
			}
		})
	}
}

// generated reads vllm:generation_tokens_total from the server.
func generated(url string) float64 {
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "vllm:generation_tokens_total") {
			f := strings.Fields(l)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			return v
		}
	}
	return 0
}

func serverCPU(b *testing.B, speedup float64, conc int, dur time.Duration) (cores, clientTPS, serverTPS float64) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+strconv.FormatFloat(speedup, 'g', -1, 64))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	url := strings.TrimSpace(line)
	prompt := strings.Repeat("The river runs past the old mill and the quiet village. ", 8192/11)
	tr := &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}
	client := &http.Client{Transport: tr}
	body, _ := json.Marshal(map[string]any{"prompt": prompt, "max_tokens": 4096, "ignore_eos": true, "stream": true,
		"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true}})
	ctx, cancel := context.WithCancel(context.Background())
	var tokens atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions", bytes.NewReader(body))
				resp, err := client.Do(req)
				if err != nil {
					return
				}
				br := bufio.NewReaderSize(resp.Body, 64<<10)
				last := 0
				for {
					l, err := br.ReadSlice('\n')
					if i := bytes.Index(l, []byte(`"completion_tokens":`)); i >= 0 {
						rest := l[i+len(`"completion_tokens":`):]
						j := bytes.IndexAny(rest, ",}")
						if n, err := strconv.Atoi(string(rest[:j])); err == nil {
							tokens.Add(int64(n - last))
							last = n
						}
					}
					if err != nil {
						break
					}
				}
				resp.Body.Close()
			}
		}()
	}
	time.Sleep(dur)
	gen := generated(url)
	cancel()
	wg.Wait()
	wall := time.Since(start)
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return cpu.Seconds() / wall.Seconds(), float64(tokens.Load()) / wall.Seconds(), gen / dur.Seconds()
}
