// Package inject parses the simulator's injection specs: --slowdown (which engine work gets
// slower, by how much, and where) and --fault (HTTP errors, cut streams, a crash, a dead
// engine, a hang, a slow /health). It only parses and evaluates rules; the sim package applies
// them.
//
// Slow-down grammar:
//
//	spec   = rule { "," rule }
//	rule   = phase "=" factor [ "@" cond { "&" cond } ]
//	phase  = "prefill" | "decode" | "all"
//	factor = a number > 0, e.g. 1.10, or a percentage of the normal time, e.g. 110%
//	       | "+" rate "/" unit    a drift: the factor grows from 1 by rate per unit of
//	                              wall-clock time since the server started, e.g. +5%/min
//	rate   = a number > 0 (0.05) or a percentage (5%), at most 1000
//	unit   = "s" | "min" | "h"
//	cond   = ("ctx" | "batch") op count
//	op     = ">=" | "<=" | ">" | "<" | "=="
//	count  = a whole number, with K (×1024) or M (×1024²) allowed for ctx
//
// "decode=1.10@ctx>=64K" makes decode steps whose mean context per sequence is at least 64K
// tokens take 10 % longer; "prefill=1.2" makes all prefill 20 % slower. For prefill, ctx is the
// prompt length and batch is 1; for decode, ctx is the mean context per sequence and batch the
// number of sequences in the step. When several rules match, their factors multiply.
// "decode=+5%/min" makes decode steps 5 % slower after one minute, 10 % after two, and so on: a
// machine that drifts (thermals, a neighbour, a leak), which base and head measured in separate
// blocks see as a change and paired ABBA blocks cancel.
//
// Fault grammar:
//
//	spec  = item { "," item }
//	item  = "error=" rate             answer that fraction of completion requests with HTTP 500
//	      | "cut=" tokens [ "@" rate ] end that fraction of streams (default all) abruptly after
//	                                  that many output tokens, without [DONE]
//	      | "crash=" duration         after that long, the server stops: connections are refused,
//	                                  open streams are cut
//	      | "dead=" duration          after that long, the engine dies: /health answers 503 and
//	                                  requests 500, as vLLM does after an engine error
//	      | "hang=" duration          after that long, the engine stops stepping: streams stall
//	                                  and new requests never answer; /health still answers 200
//	      | "slow-health=" duration   /health answers only after that delay
//	      | "starve=" rate            the engine loses that fraction of model time, as on a
//	                                  machine too busy to keep its step clock, and says so in
//	                                  speedmatrix_sim_lost_seconds_total (below 100 %)
//	rate     = a fraction 0..1 (0.05) or a percentage (5%)
//	duration = a Go duration (30s, 1m30s), wall-clock time since the server started
//
// Which requests fail is decided by hashing the seed with the request's arrival number, so a
// run with the same seed and the same request order fails the same requests.
package inject
