"""worldrun: measure `speedmatrix compare` on worldgen's files, through the CLI only.

For every model and pair index it draws the runs of one "world" (a base run, 10 history runs of
the base, 3 head runs, and a 3-trial file a side), writes them as results files, and runs compare
as a user does, counting exit codes:

  one      compare BASE HEAD
  history  compare --history DIR BASE HEAD          (DIR: 10 earlier runs of the base)
  runs3    compare B1,B2,B3 H1,H2,H3                (3 separate runs a side)
  trials3  compare BASE3 HEAD3                      (3 trials of one run in one file a side)

each for the shapes aa (unchanged head), rows (decode rows at context >= 32K 10 % slower: time
x1.10) and matrix (every decode cell 10 % slower). One line of JSON per comparison goes to --out;
files of comparisons that missed a target are kept under --keep.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from multiprocessing import Pool

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import worldgen as wg  # noqa: E402

SHAPES = {
    "aa": None,
    "rows": wg.rows_at_least(32 * 1024, 1.10),
    "matrix": wg.whole_matrix(1.10),
}
PROCS = ("one", "history", "runs3", "trials3")

G = {}


def _load(path):
    if path.endswith(".gz"):
        with gzip.open(path, "rt") as fh:
            return json.load(fh)
    with open(path) as fh:
        return json.load(fh)


def _init(args):
    G["args"] = args
    G["t1"] = _load(args.truth1)
    G["t3"] = _load(args.truth3)


def _iso(t0: dt.datetime, hours: float) -> str:
    return (t0 + dt.timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _write(path, f):
    with open(path, "w") as fh:
        json.dump(f, fh, separators=(",", ":"))


def world(task):
    model_name, i = task
    args = G["args"]
    model = wg.MODELS[model_name]
    mi = list(wg.MODELS).index(model_name)
    rng = np.random.default_rng([args.seed, mi, i])
    t0 = dt.datetime(2027, 1, 1) + dt.timedelta(days=i)
    d = tempfile.mkdtemp(prefix=f"w-{model_name}-{i}-", dir=args.tmp)
    hist = os.path.join(d, "hist")
    os.mkdir(hist)
    tag = f"{model_name}-{i}"

    def run(truth, name, hours, slow=None, draws=None):
        dr = draws or wg.draw_run(model, truth, rng)
        f = wg.render(truth, model, dr, f"wc-{tag}-{name}", _iso(t0, hours), _iso(t0, hours + 0.2), slow)
        return f, dr

    # base side: 10 history runs (earlier), the base run
    for k in range(10):
        f, _ = run(G["t1"], f"h{k:02d}", -24.0 * (10 - k))
        _write(os.path.join(hist, f"h{k:02d}.json"), f)
    f, _ = run(G["t1"], "base", 0)
    _write(os.path.join(d, "base.json"), f)
    if "trials3" in args.procs:
        f, _ = run(G["t3"], "base3", 0.5)
        _write(os.path.join(d, "base3.json"), f)
    # head side: three runs and a 3-trial file, each rendered unchanged and slowed
    draws = {}
    for name, truth, hrs in (("head", G["t1"], 24), ("head2", G["t1"], 25), ("head3", G["t1"], 26), ("head3t", G["t3"], 27)):
        draws[name] = wg.draw_run(model, truth, rng)
        if name in ("head2", "head3") and "runs3" not in args.procs:
            continue
        if name == "head3t" and "trials3" not in args.procs:
            continue
        for shape, slow in SHAPES.items():
            if shape not in args.shapes:
                continue
            if shape == "matrix" and name == "head3t" and "trials3" not in args.matrix_procs:
                continue
            if shape == "matrix" and name in ("head2", "head3") and "runs3" not in args.matrix_procs:
                continue
            f, _ = run(truth, f"{name}-{shape}", hrs, slow, draws[name])
            _write(os.path.join(d, f"{name}-{shape}.json"), f)

    if args.regen:
        keep = os.path.join(args.regen, model_name, f"{i:04d}")
        if not os.path.exists(keep):
            shutil.copytree(d, keep)
        shutil.rmtree(d)
        return []
    out = []
    b3 = ",".join(os.path.join(d, x) for x in ("base.json", "hist/h08.json", "hist/h09.json"))
    for shape in args.shapes:
        cmds = {
            "one": [os.path.join(d, "base.json"), os.path.join(d, f"head-{shape}.json")],
            "history": ["--history", hist, os.path.join(d, "base.json"), os.path.join(d, f"head-{shape}.json")],
            "runs3": [b3, ",".join(os.path.join(d, f"{h}-{shape}.json") for h in ("head", "head2", "head3"))],
            "trials3": [os.path.join(d, "base3.json"), os.path.join(d, f"head3t-{shape}.json")],
        }
        for proc in args.procs:
            if shape == "matrix" and proc not in args.matrix_procs:
                continue
            jpath = os.path.join(d, f"cmp-{proc}-{shape}.json")
            cmd = [args.bin, "compare", "--format", "json", "-o", jpath] + cmds[proc]
            p = subprocess.run(cmd, capture_output=True, text=True)
            rec = {"model": model_name, "pair": i, "proc": proc, "shape": shape, "rc": p.returncode}
            try:
                rec.update(summarize(json.load(open(jpath))))
            except Exception as e:  # noqa: BLE001
                rec["summary_error"] = str(e)[:200]
            if p.returncode not in (0, 3, 4):
                rec["stderr"] = p.stderr[-2000:]
            odd = (shape == "aa" and p.returncode != 0) or (shape != "aa" and proc in ("history", "runs3") and p.returncode != 3) \
                or p.returncode not in (0, 3, 4)
            if odd and args.keep:
                keep = os.path.join(args.keep, model_name, f"{i:04d}")
                if not os.path.exists(keep):
                    shutil.copytree(d, keep)
                rec["kept"] = keep
                rec["cmd"] = " ".join(["/tmp/smw", "compare"] + [x.replace(d, keep) for x in cmds[proc]])
            out.append(rec)
    shutil.rmtree(d)
    return out


def summarize(c: dict) -> dict:
    """The verdict and the per-cell verdict counts, from the comparison file."""
    s = c.get("summary") or {}
    return {"verdict": c.get("verdict"), "cells": s.get("cell_counts"),
            "geomean": (s.get("decode_total_geomean") or {}).get("change")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth1", required=True)
    ap.add_argument("--truth3", required=True)
    ap.add_argument("--bin", default="/tmp/smw")
    ap.add_argument("--models", default="gaussian,t3,spec,spec-nocounters,drift,bimodal")
    ap.add_argument("--procs", default=",".join(PROCS))
    ap.add_argument("--matrix-procs", default="history,runs3", help="procedures that also run the whole-matrix slowdown")
    ap.add_argument("--shapes", default="aa,rows,matrix")
    ap.add_argument("--pairs", type=int, default=250)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--out", required=True)
    ap.add_argument("--keep", default="")
    ap.add_argument("--tmp", default="/tmp")
    ap.add_argument("--regen", default="", help="only write the worlds' files under this folder (same draws as a full run with the same --procs/--shapes/--matrix-procs)")
    args = ap.parse_args()
    args.procs = args.procs.split(",")
    args.matrix_procs = args.matrix_procs.split(",")
    args.shapes = args.shapes.split(",")
    tasks = [(m, i) for i in range(args.first, args.first + args.pairs) for m in args.models.split(",")]
    t = time.time()
    with Pool(args.workers, initializer=_init, initargs=(args,)) as pool, open(args.out, "a") as fh:
        for n, recs in enumerate(pool.imap_unordered(world, tasks)):
            for r in recs:
                fh.write(json.dumps(r) + "\n")
            fh.flush()
            if n % 20 == 0:
                print(f"{n + 1}/{len(tasks)} worlds, {time.time() - t:.0f} s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
