#!/usr/bin/env python3
"""Summarises a device timeline written by libimghist_timeline.so (cupti_timeline.cpp).

    python3 bench/timeline/summarize.py run.tl [--top 8] [--calls cuMemFree_v2,cuEventSynchronize]

Prints, on the clock of the run's first record (ms):
  - each thread (by name) with its driver API time and its costliest calls (count, total, longest);
  - when the calls named by --calls happened, per tenth of the run (how many, how long): frees, waits...;
  - each stream's kernel, copy and memset time on the device;
  - the longest single calls.
"""
import argparse
import collections
import lzma


def read(path):
    opener = lzma.open if path.endswith(".xz") else open
    names, api, dev = {}, [], []
    with opener(path, "rt") as f:
        for line in f:
            part = line.split(" ", 4)
            tag = part[0]
            if tag == "T":
                names[part[1]] = " ".join(part[2:]).strip()
            elif tag == "A":
                api.append((part[1], int(part[2]), int(part[3]), part[4].strip()))
            elif tag in ("K", "M", "S"):
                dev.append((tag, part[1], int(part[2]), int(part[3]), part[4].strip()))
    return names, api, dev


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("timeline")
    ap.add_argument("--top", type=int, default=8, help="calls listed per thread, and longest calls")
    ap.add_argument("--calls", default="cuMemFree_v2,cuMemFreeHost,cuMemAlloc_v2,cuMemHostAlloc",
                    help="comma-separated driver calls to place along the run")
    a = ap.parse_args()
    names, api, dev = read(a.timeline)
    if not api and not dev:
        raise SystemExit(f"{a.timeline}: no records")
    t0 = min([s for _, s, _, _ in api] + [s for _, _, s, _, _ in dev])
    t1 = max([e for _, _, e, _ in api] + [e for _, _, _, e, _ in dev])
    ms = lambda ns: ns / 1e6

    print(f"{a.timeline}: {len(api)} driver calls, {len(dev)} device records over {ms(t1 - t0):.1f} ms")
    per = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0, 0]))
    for tid, s, e, call in api:
        c = per[tid][call]
        c[0] += 1
        c[1] += e - s
        c[2] = max(c[2], e - s)
    print("\nthreads (driver API time; calls: count, total ms, longest ms)")
    for tid in sorted(per, key=lambda t: -sum(v[1] for v in per[t].values())):
        total = sum(v[1] for v in per[tid].values())
        print(f"  {names.get(tid, '?')} [{tid}]: {ms(total):.1f} ms")
        for call, (n, tot, mx) in sorted(per[tid].items(), key=lambda kv: -kv[1][1])[: a.top]:
            print(f"      {call:34s} {n:8d} {ms(tot):9.1f} {ms(mx):8.2f}")

    wanted = set(a.calls.split(",")) if a.calls else set()
    if wanted:
        print(f"\n{', '.join(sorted(wanted))} along the run (tenths of {ms(t1 - t0):.0f} ms: count / ms)")
        span = (t1 - t0) / 10 or 1
        for call in sorted(wanted):
            for tid in sorted(per):
                hits = [(s, e) for t, s, e, c in api if t == tid and c == call]
                if not hits:
                    continue
                bins = [[0, 0] for _ in range(10)]
                for s, e in hits:
                    b = bins[min(9, int((s - t0) / span))]
                    b[0] += 1
                    b[1] += e - s
                cells = " ".join(f"{n:3d}/{ms(d):6.1f}" for n, d in bins)
                print(f"  {call} in {names.get(tid, '?')}: {cells}")

    print("\ndevice streams (ms busy: kernels, copies, memsets; copies' MB)")
    streams = collections.defaultdict(lambda: [0, 0, 0, 0])
    for tag, stream, s, e, rest in dev:
        v = streams[stream]
        v["KMS".index(tag)] += e - s
        if tag == "M":
            v[3] += int(rest.split()[1])
    for stream, (k, m, st, b) in sorted(streams.items(), key=lambda kv: -sum(kv[1][:3])):
        print(f"  stream {stream}: kernels {ms(k):8.1f}  copies {ms(m):8.1f} ({b / 1e6:.0f} MB)  memsets {ms(st):6.1f}")

    print(f"\nlongest calls")
    for tid, s, e, call in sorted(api, key=lambda r: r[1] - r[2])[: a.top]:
        print(f"  {ms(e - s):9.2f} ms at {ms(s - t0):9.1f} ms  {call} in {names.get(tid, '?')}")


if __name__ == "__main__":
    main()
