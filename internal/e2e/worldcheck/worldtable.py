"""worldtable: the table of worldrun's results (JSON lines), with 95 % Wilson intervals."""

import json
import math
import sys
from collections import defaultdict


def wilson(k, n, z=1.959964):
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def pct(k, n):
    lo, hi = wilson(k, n)
    return f"{100 * k / n:.1f} % [{100 * lo:.1f}–{100 * hi:.1f}]"


def main(paths):
    rc = defaultdict(lambda: defaultdict(int))
    unch = defaultdict(lambda: [0, 0])
    errors = []
    for p in paths:
        for line in open(p):
            r = json.loads(line)
            key = (r["model"], r["proc"], r["shape"])
            rc[key][r["rc"]] += 1
            rc[key]["n"] += 1
            if r["rc"] not in (0, 3, 4):
                errors.append(r)
            if r["shape"] == "aa" and r.get("cells"):
                c = r["cells"]
                unch[(r["model"], r["proc"])][0] += c.get("unchanged", 0)
                unch[(r["model"], r["proc"])][1] += sum(v for k, v in c.items() if k != "not_comparable")
    models = list(dict.fromkeys(k[0] for k in rc))
    procs = [p for p in ("one", "history", "runs3", "trials3") if any(k[1] == p for k in rc)]
    print("| model | procedure | n (A/A) | A/A false blocks (exit 3) | A/A undecided (exit 4) | rows≥32K −10 %: exit 3 | exit 4 | matrix −10 %: exit 3 | exit 4 | A/A cells unchanged | target |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for m in models:
        for p in procs:
            aa, rows, mat = rc[(m, p, "aa")], rc[(m, p, "rows")], rc[(m, p, "matrix")]
            if not aa["n"]:
                continue
            n = aa["n"]
            ub = wilson(aa[3], n)[1]
            tgt = ["A/A " + ("pass" if ub <= 0.02 else "FAIL") + f" (ub {100 * ub:.1f} %)"]
            if p == "history" and rows["n"]:
                need = 0.8 if m == "bimodal" else 0.9
                tgt.append(f"det {'pass' if rows[3] / rows['n'] >= need else 'FAIL'} (≥{int(need * 100)} %)")
            if p == "runs3" and rows["n"] and m in ("gaussian", "spec", "spec-nocounters"):
                tgt.append(f"det {'pass' if rows[3] / rows['n'] >= 0.9 else 'FAIL'} (≥90 %)")
            u = unch[(m, p)]
            print(f"| {m} | {p} | {n} | {pct(aa[3], n)} | {pct(aa[4], n)} | "
                  + (f"{pct(rows[3], rows['n'])} | {100 * rows[4] / rows['n']:.1f} % | " if rows["n"] else "– | – | ")
                  + (f"{pct(mat[3], mat['n'])} | {100 * mat[4] / mat['n']:.1f} % | " if mat["n"] else "– | – | ")
                  + (f"{100 * u[0] / u[1]:.1f} % | " if u[1] else "– | ")
                  + "; ".join(tgt) + " |")
    if errors:
        print(f"\n{len(errors)} comparisons exited neither 0, 3 nor 4; first: {json.dumps(errors[0])[:600]}")


if __name__ == "__main__":
    main(sys.argv[1:])
