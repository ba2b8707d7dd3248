"""Run by the target interpreter: a fixed BF16 matmul and a device-memory copy on every NeuronCore, timed.

Usage: python perf_canary.py --cores N [--size 4096] [--iters 20] [--copy-mib 256] [--parallel 8] [--timeout S]
Each core is measured by a child process of its own that sees only that core (`NEURON_RT_VISIBLE_CORES=K`, the
runtime's way to pin a process to a core; neuron-runtime/nrt-configurable-parameters.rst), through torch-xla's
device (`torch_xla.device()`, else `xm.xla_device()`): an N x N BF16 matmul (2 N^3 flops) and a clone of a
`--copy-mib` buffer (read + write), each after two warm-up runs, with the device synchronised before the clock
stops. Prints one JSON line: per core `matmul_tflops` and `copy_gbs`, or the stage that failed and its message.
The graphs are the same on every core, so the compile cache serves all but the first.
"""

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def _emit(document):
    sys.stdout.write(json.dumps(document) + "\n")
    sys.stdout.flush()


def _option(argv, name, default):
    return int(argv[argv.index(name) + 1]) if name in argv else default


def _sync(torch_xla, xm):
    step = getattr(torch_xla, "sync", None)
    (step or xm.mark_step)()


def _measure(argv):
    """One core (the child): the numbers, or the stage that failed."""
    size, iters = _option(argv, "--size", 4096), _option(argv, "--iters", 20)
    copy_mib = _option(argv, "--copy-mib", 256)
    stage = "import"
    try:
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        stage = "device"
        device = torch_xla.device() if hasattr(torch_xla, "device") else xm.xla_device()
        stage = "matmul"
        left = torch.randn(size, size, dtype=torch.bfloat16, device=device)
        right = torch.randn(size, size, dtype=torch.bfloat16, device=device)
        for _ in range(2):
            product = left @ right
            _sync(torch_xla, xm)
        xm.wait_device_ops()
        started = time.perf_counter()
        for _ in range(iters):
            product = left @ right
            _sync(torch_xla, xm)
        xm.wait_device_ops()
        matmul_s = time.perf_counter() - started
        del product
        stage = "copy"
        buffer = torch.ones(copy_mib << 20, dtype=torch.uint8, device=device)
        _sync(torch_xla, xm)
        for _ in range(2):
            copied = buffer.clone()
            _sync(torch_xla, xm)
        xm.wait_device_ops()
        started = time.perf_counter()
        for _ in range(iters):
            copied = buffer.clone()
            _sync(torch_xla, xm)
        xm.wait_device_ops()
        copy_s = time.perf_counter() - started
        del copied
        return {"status": "ok", "matmul_tflops": round(2 * size ** 3 * iters / matmul_s / 1e12, 4),
                "copy_gbs": round(2 * (copy_mib << 20) * iters / copy_s / 1e9, 3),
                "matmul_s": round(matmul_s, 4), "copy_s": round(copy_s, 4)}
    except BaseException as error:  # reported, never raised: the parent judges it
        return {"status": "error", "stage": stage, "error_type": type(error).__name__,
                "message": str(error).strip()[:2000]}


def _core(core, argv, timeout):
    env = dict(os.environ, NEURON_RT_VISIBLE_CORES=str(core))
    command = [sys.executable, os.path.abspath(__file__), "--one", *argv]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"core": core, "status": "error", "stage": "timeout", "message": "no result in %d s" % timeout}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    try:
        result = json.loads(lines[-1]) if lines else None
    except ValueError:
        result = None
    if not isinstance(result, dict):
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        result = {"status": "error", "stage": "run", "message": "exit %s: %s" % (done.returncode, tail[:500])}
    result["core"] = core
    return result


def main(argv):
    if "--one" in argv:
        _emit(_measure(argv))
        return
    cores = _option(argv, "--cores", 1)
    parallel = max(1, _option(argv, "--parallel", 8))
    timeout = _option(argv, "--timeout", 900)
    passed = [word for word in argv[1:] if word not in ("--one",)]
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=min(parallel, cores)) as pool:
        results = list(pool.map(lambda core: _core(core, passed, timeout), range(cores)))
    try:
        import torch
        import torch_xla
        versions = {"torch": torch.__version__, "torch_xla": getattr(torch_xla, "__version__", "?")}
    except BaseException as error:
        versions = {"import_error": str(error)[:500]}
    _emit({"schema": "neurondoctor.probe/1", "status": "ok", "mode": "perf", "cores": results,
           "size": _option(argv, "--size", 4096), "iters": _option(argv, "--iters", 20),
           "copy_mib": _option(argv, "--copy-mib", 256), "pjrt_device": os.environ.get("PJRT_DEVICE"),
           "seconds": round(time.perf_counter() - started, 2), **versions})


if __name__ == "__main__":
    main(sys.argv)
