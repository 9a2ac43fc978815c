"""worldgen: an independent generator of noisy speedmatrix results files.

Written for issue 21 ("Other data sets than ours will be used to check these figures") without
reading or reusing calibrate's world generator. It takes a results file measured by the
real program (`speedmatrix run --matrix full --sim-speedup 200`, one or three trials) as the
truth, and derives noisy runs from it by multiplying each measured cell's level by drawn factors,
everywhere results.Validate cross-checks a level: the window's bin_output_tokens, the trial's
output_tokens and total tok/s, every request's output tokens, chunks and time between tokens, the
trial's and the cell's medians, TTFT, and the speculative-decoding counters.

See README.md beside this file for what is drawn and how it differs from `calibrate --world`.
"""

from __future__ import annotations

import copy
import math
import statistics
from dataclasses import dataclass, field

import numpy as np

# ---------------------------------------------------------------------------------------------
# Noise models. Every factor is exp(x) on a rate (rates multiply by it, times divide by it).
# ---------------------------------------------------------------------------------------------

SPEC_SIGMA = {1: 0.10, 2: 0.20, 4: 0.075}  # >= 8: 0.005 (issue 21 / vllm issue 53436)


def spec_sigma(conc: int) -> float:
    return SPEC_SIGMA.get(conc, 0.005)


def t_draw(rng: np.random.Generator, dof: float, sd: float, clip: float, size=None):
    """Student-t with `dof` degrees of freedom scaled so that its SD is `sd`, clipped at +-clip."""
    scale = sd / math.sqrt(dof / (dof - 2))
    x = rng.standard_t(dof, size=size) * scale
    return np.clip(x, -clip, clip)


@dataclass
class Model:
    name: str
    # What the files say of speculative decoding: "move" (the spec-decode counters carry the
    # acceptance draw), "none" (no server telemetry at all: /metrics not scraped) or "strip" (server
    # telemetry without spec-decode counters: an engine serving without speculative decoding).
    counters: str = "strip"

    def run_factor(self, rng) -> float:
        """log factor shared by every cell and metric of one run (one server lifetime)."""
        if self.name == "drift":
            return float(rng.normal(0, 0.02))
        if self.name == "bimodal":
            return -math.log(1.06) if rng.random() < 0.2 else 0.0
        return 0.0

    def cell_draw(self, rng, kind: str, conc: int, size=None):
        """log noise of one cell's level. kind: 'prefill', 'tput' (decode rates), 'ttft'."""
        n = self.name
        if n == "gaussian":
            return rng.normal(0, 0.01, size)
        if n == "t3":
            return t_draw(rng, 3.0, 0.02, 0.5, size)
        if n == "t25":
            return t_draw(rng, 2.5, 0.02, 0.5, size)
        if n == "drift":
            return rng.normal(0, 0.005, size)
        if n == "bimodal":
            return rng.normal(0, 0.01, size)
        if n.startswith("spec"):
            if kind == "tput":
                # the acceptance part is returned separately (spec_draw); this is the engine's own
                return rng.normal(0, 0.005, size)
            return rng.normal(0, 0.01, size)
        raise ValueError(n)

    def spec_draw(self, rng, conc: int, size=None):
        """log noise of decode rates carried by the speculative acceptance (counters move with it)."""
        if self.name.startswith("spec"):
            return rng.normal(0, spec_sigma(conc), size)
        return np.zeros(size) if size is not None else 0.0


MODELS = {
    "gaussian": Model("gaussian"),
    "t3": Model("t3"),
    "t25": Model("t25"),
    "spec": Model("spec", counters="move"),
    "spec-nocounters": Model("spec-nocounters", counters="none"),
    # extra: spec-decode noise from an engine that exports its other counters but not the
    # spec-decode ones (the files then claim speculative decoding is off)
    "spec-offcounters": Model("spec-offcounters", counters="strip"),
    "drift": Model("drift"),
    "bimodal": Model("bimodal"),
}

# Share of a cell's log-variance that is a level of the (run, cell), shared by the trials of one
# file; the rest is drawn afresh per trial (window). A one-trial file draws the full variance.
RHO = 0.5


@dataclass
class RunDraws:
    """Every random number of one run, so that the same run can be rendered with a slowdown."""

    run: float
    # per cell id -> list over trials of (tput, spec, ttft) log factors; prefill id -> list of log factors
    decode: dict = field(default_factory=dict)
    prefill: dict = field(default_factory=dict)


def _split(model: Model, rng, kind, conc, trials, draw):
    if trials == 1:
        return [float(draw(rng, kind, conc))]
    a = float(draw(rng, kind, conc))
    bs = [float(draw(rng, kind, conc)) for _ in range(trials)]
    return [math.sqrt(RHO) * a + math.sqrt(1 - RHO) * b for b in bs]


def draw_run(model: Model, truth: dict, rng: np.random.Generator) -> RunDraws:
    d = RunDraws(run=model.run_factor(rng))
    for c in truth["decode"]:
        if c["status"] not in ("valid", "queued"):
            continue
        k = len(c.get("trials") or [None])
        conc = c["concurrency"]
        tput = _split(model, rng, "tput", conc, k, lambda r, kd, cc: model.cell_draw(r, kd, cc))
        spec = _split(model, rng, "tput", conc, k, lambda r, kd, cc: model.spec_draw(r, cc))
        ttft = _split(model, rng, "ttft", conc, k, lambda r, kd, cc: model.cell_draw(r, kd, cc))
        d.decode[(c["context"], conc)] = list(zip(tput, spec, ttft))
    for c in truth["prefill"]:
        if c["status"] not in ("valid", "queued"):
            continue
        k = len(c.get("trials") or [None])
        d.prefill[c["context"]] = _split(model, rng, "prefill", 1, k, lambda r, kd, cc: model.cell_draw(r, kd, cc))
    return d


# ---------------------------------------------------------------------------------------------
# Rendering a run: the truth file with every level scaled, summaries recomputed as the validator
# recomputes them.
# ---------------------------------------------------------------------------------------------


def median(xs):
    return statistics.median(xs) if xs else None


def _scale_trial(t: dict, F: float, G: float, L: float | None, counters: str):
    """F: rate factor of the window (tokens, 1/TBT); G: TTFT factor (times divide by it);
    L: factor of the speculative acceptance length (None: leave)."""
    bins = [int(round(n * F)) for n in t["bin_output_tokens"]]
    if sum(bins) == 0:
        bins[0] = 1
    t["bin_output_tokens"] = bins
    s = sum(bins)
    t["output_tokens"] = s
    t["total_tok_per_s"] = s / t["window_seconds"]
    t["measured_seconds"] = t["window_seconds"]
    for r in t["requests"]:
        r["output_tokens"] = int(round(r["output_tokens"] * F))
        if r.get("chunks"):
            r["chunks"] = max(1, int(round(r["chunks"] * F)))
        if r.get("tbt_ms") is not None:
            r["tbt_ms"] = r["tbt_ms"] / F
        if r.get("ttft_ms") is not None:
            r["ttft_ms"] = r["ttft_ms"] / G
    tbts = [r["tbt_ms"] for r in t["requests"] if r.get("tbt_ms") is not None and r["tbt_ms"] > 0]
    if tbts:
        t["tbt_ms"] = median(tbts)
        t["per_request_tok_per_s"] = median([1000 / x for x in tbts])
    elif t.get("tbt_ms") is not None:
        t["tbt_ms"] = t["tbt_ms"] / F
        if t.get("per_request_tok_per_s") is not None:
            t["per_request_tok_per_s"] = t["per_request_tok_per_s"] * F
    if t.get("ttft_ms") is not None:
        t["ttft_ms"] = t["ttft_ms"] / G
    if t.get("inter_chunk_ms") is not None:
        t["inter_chunk_ms"] = t["inter_chunk_ms"] / F
    _telemetry(t, L, counters)


def _telemetry(m: dict, L: float | None, counters: str):
    tel = m.get("telemetry")
    if counters == "strip":
        if tel is not None:
            tel.pop("spec_acceptance_length", None)
            tel.pop("spec_acceptance_pct", None)
        return
    if counters == "none":
        # /metrics not scraped: no server telemetry and no server samples at all
        for k in ("telemetry", "running_samples", "waiting_samples", "sample_seconds", "awaiting_samples"):
            m.pop(k, None)
        return
    if tel is None or L is None:
        return
    ln = tel.get("spec_acceptance_length")
    pct = tel.get("spec_acceptance_pct")
    if ln is not None:
        new = max(1.0, ln * L)
        if pct is not None and ln > 1:
            k = (ln - 1) / (pct / 100) if pct > 0 else None
            if k:
                tel["spec_acceptance_pct"] = (new - 1) / k * 100
        tel["spec_acceptance_length"] = new


def _summarize_decode(c: dict):
    ts = c["trials"]
    if len(ts) == 1:
        t = ts[0]
        for k in ("total_tok_per_s", "per_request_tok_per_s", "ttft_ms", "tbt_ms", "avg_active_requests",
                  "completed_requests", "output_tokens", "measured_seconds", "inter_chunk_ms", "client_queue_ms"):
            if k in t:
                c[k] = t[k]
        if "telemetry" in t:
            c["telemetry"] = copy.deepcopy(t["telemetry"])
        else:
            c.pop("telemetry", None)
        return
    tokens = sum(t.get("output_tokens") or 0 for t in ts)
    completed = sum(t.get("completed_requests") or 0 for t in ts)
    secs = sum(t["window_seconds"] for t in ts)
    reqs = [r for t in ts for r in t["requests"]]
    tbts = [r["tbt_ms"] for r in reqs if r.get("tbt_ms") is not None and r["tbt_ms"] > 0]
    ttfts = [r["ttft_ms"] for r in reqs if r.get("ttft_ms") is not None]
    c["output_tokens"] = tokens
    c["completed_requests"] = completed
    c["measured_seconds"] = secs
    c["total_tok_per_s"] = tokens / secs
    if tbts:
        c["tbt_ms"] = median(tbts)
        c["per_request_tok_per_s"] = median([1000 / x for x in tbts])
    if ttfts:
        c["ttft_ms"] = median(ttfts)
    else:
        tt = [t["ttft_ms"] for t in ts if t.get("ttft_ms") is not None]
        if tt:
            c["ttft_ms"] = median(tt)
    aw = [(t["avg_active_requests"], t["window_seconds"]) for t in ts if t.get("avg_active_requests") is not None]
    if aw:
        c["avg_active_requests"] = sum(a * w for a, w in aw) / sum(w for _, w in aw)
    gaps = [t["inter_chunk_ms"] for t in ts if t.get("inter_chunk_ms") is not None]
    if gaps:
        c["inter_chunk_ms"] = median(gaps)
    c["client_queue_ms"] = median([r.get("client_queue_ms", 0.0) for r in reqs]) if reqs else c.get("client_queue_ms")
    tels = [t.get("telemetry") for t in ts]
    if all(x is None for x in tels):
        c.pop("telemetry", None)
    elif c.get("telemetry") is not None:
        for key in ("spec_acceptance_length", "spec_acceptance_pct"):
            vals = [x[key] for x in tels if x and x.get(key) is not None]
            if vals and key in c["telemetry"]:
                c["telemetry"][key] = sum(vals) / len(vals)


def render(truth: dict, model: Model, d: RunDraws, run_id: str, start_iso: str, end_iso: str,
           slow_decode=None) -> dict:
    """slow_decode: function (context, concurrency) -> time factor (1.10 = 10 % slower) or None."""
    f = copy.deepcopy(truth)
    f["run"]["id"] = run_id
    f["run"]["start"] = start_iso
    f["run"]["end"] = end_iso
    R = math.exp(d.run)
    for c in f["prefill"]:
        if c["status"] not in ("valid", "queued"):
            continue
        for t, x in zip(c["trials"], d.prefill[c["context"]]):
            P = R * math.exp(x)
            t["ttft_ms"] = t["ttft_ms"] / P
            t["prompt_tok_per_s"] = t["prompt_tokens"] / (t["ttft_ms"] / 1000)
        c["ttft_ms"] = median([t["ttft_ms"] for t in c["trials"]])
        c["prompt_tok_per_s"] = median([t["prompt_tok_per_s"] for t in c["trials"]])
    for c in f["decode"]:
        if c["status"] not in ("valid", "queued"):
            continue
        key = (c["context"], c["concurrency"])
        slow = slow_decode(*key) if slow_decode else 1.0
        for t, (xt, xs, xg) in zip(c["trials"], d.decode[key]):
            F = R * math.exp(xt + xs) / slow
            G = R * math.exp(xg)  # TTFT: the run's factor, its own cell draw (not throughput's)
            _scale_trial(t, F, G, math.exp(xs), model.counters)
        _telemetry(c, None, model.counters)
        _summarize_decode(c)
    if model.counters == "none" and f.get("server"):
        f["server"]["metrics"] = "none"
    return f


def rows_at_least(ctx_tokens: int, factor: float):
    return lambda ctx, conc: factor if ctx >= ctx_tokens else 1.0


def whole_matrix(factor: float):
    return lambda ctx, conc: factor
