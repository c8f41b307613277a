"""The timing helper the benchmarks of this folder share (each script runs with this folder on sys.path)."""
import time


def timed(fn):
    """Calls fn; returns the wall time it took in seconds and its result."""
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result
