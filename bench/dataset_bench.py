#!/usr/bin/env python3
"""Records in the permutation's order through a torch DataLoader with 2
workers, side by side (docs/benchmarks.md, "Record indexes and Dataset"):
  (a) extshuffle.Dataset read in the order Permutation(n, seed) gives,
      a batch at a time (a BatchSampler, batch_size=None: torch 1.13's way);
  (b) the tool's shuffled copy of the same files read sequentially (the
      bound: `extshuffle --shards 2`, one shard per worker);
  (c) a plain Python offsets-list reader in the same order (an offsets list
      built in Python, seek and read per record: what users write today);
for 1 GiB of heavy-tailed JSONL (bench/generate_jsonl), a WebDataset tar of
100 KB images and .npy rows of 512 bytes, with a warm page cache and a cold
one (echo 3 > /proc/sys/vm/drop_caches before each run; root only). Also the
index build (--index-only) against the counting pass (--dry-run reads the
input once, counting) in GiB/s, and the package's own CPU per record
(get_batch in the process: user CPU per record; system CPU is the kernel's
reads). Each case runs in a fresh interpreter; the table gives samples/s
and the peak RSS of the training process and of its largest worker.

usage: PYTHONPATH=build/python /usr/bin/python3 bench/dataset_bench.py \\
           [--dir /var/tmp/extshuffle-dataset-bench] [--bytes 1G] [--caches warm,cold]
prints the markdown table (and `uptime` before and after) on stdout."""

import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
FORMATS = ("jsonl", "tar", "npy")
READERS = ("dataset", "sequential", "offsets")
SEED = 7

CASE = r"""
import json, os, resource, sys, time

def reset_peak():
    # Peak RSS from here on: a process keeps the high-water mark of the one
    # it was forked from (and across exec), which is not this case's.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

def peak_rss():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))

reset_peak()
import numpy as np
import torch
import extshuffle
fmt, reader, path, shards, count, batch, workers = sys.argv[1:8]
count, batch, workers = int(count), int(batch), int(workers)
shards = json.loads(shards)

def identity(records):
    return records

class Order(torch.utils.data.Sampler):
    def __init__(self, order):
        self.order = order
    def __iter__(self):
        return iter(self.order.tolist())
    def __len__(self):
        return len(self.order)

class Offsets(torch.utils.data.Dataset):
    # What users write: an offsets list in Python, a seek and a read per record.
    def __init__(self, path):
        self.path, self.file = path, None
        if fmt == "jsonl":
            self.offsets = [0]
            with open(path, "rb") as f:
                for line in f:
                    self.offsets.append(self.offsets[-1] + len(line))
            self.n = len(self.offsets) - 1
        elif fmt == "tar":
            import tarfile
            self.samples = {}
            with tarfile.open(path) as archive:
                for info in archive:
                    key, _, ext = info.name.partition(".")
                    self.samples.setdefault(key, []).append((ext, info.offset_data, info.size))
            self.samples = list(self.samples.items())
            self.n = len(self.samples)
        else:
            self.rows = np.load(path, mmap_mode="r")
            self.n = len(self.rows)
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        if fmt == "npy":
            return np.array(self.rows[i])
        if self.file is None:
            self.file = open(self.path, "rb")
        if fmt == "jsonl":
            self.file.seek(self.offsets[i])
            return self.file.read(self.offsets[i + 1] - self.offsets[i] - 1)
        key, members = self.samples[i]
        sample = {"__key__": key}
        for ext, offset, size in members:
            self.file.seek(offset)
            sample[ext] = self.file.read(size)
        return sample

class Sequential(torch.utils.data.IterableDataset):
    # The shuffled copy read front to back, one shard per worker.
    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        shard, share = shards[info.id], count // info.num_workers
        if fmt == "jsonl":
            with open(shard, "rb") as f:
                for k, line in zip(range(share), f):
                    yield line[:-1]
        elif fmt == "tar":
            import tarfile
            sample, done = None, 0
            with tarfile.open(shard, "r|") as archive:
                for member in archive:
                    key, _, ext = member.name.partition(".")
                    if sample is None or sample["__key__"] != key:
                        if sample is not None:
                            yield sample
                            done += 1
                            if done == share:
                                return
                        sample = {"__key__": key}
                    sample[ext] = archive.extractfile(member).read()
            if sample is not None and done < share:
                yield sample
        else:
            rows = np.load(shard, mmap_mode="r")
            for first in range(0, min(share, len(rows)), 256):
                block = np.array(rows[first:min(share, first + 256)])
                yield from block

def worker_init(_):
    reset_peak()

if reader == "sequential":
    loader = torch.utils.data.DataLoader(Sequential(), batch_size=batch, num_workers=workers, collate_fn=identity,
                                         worker_init_fn=worker_init)
else:
    ds = extshuffle.Dataset(path, progress=False) if reader == "dataset" else Offsets(path)
    order = extshuffle.Permutation(len(ds), 7)[:count]
    if reader == "dataset":
        batches = torch.utils.data.BatchSampler(Order(order), batch_size=batch, drop_last=False)
        loader = torch.utils.data.DataLoader(ds, sampler=batches, batch_size=None, num_workers=workers,
                                             collate_fn=identity, worker_init_fn=worker_init)
    else:
        loader = torch.utils.data.DataLoader(ds, sampler=Order(order), batch_size=batch, num_workers=workers,
                                             collate_fn=identity, worker_init_fn=worker_init)
begin = time.perf_counter()
samples = 0
for records in loader:
    samples += len(records)
seconds = time.perf_counter() - begin
del loader  # the workers end, their peaks counted
print(json.dumps({"samples": samples, "seconds": seconds, "rss_main": peak_rss(),
                  "rss_worker": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))
"""

OWN_COST = r"""
import json, resource, sys, time
import numpy as np
import extshuffle
ds = extshuffle.Dataset(sys.argv[1], progress=False)
order = extshuffle.Permutation(len(ds), 7)[:int(sys.argv[2])]
for first in range(0, len(order), 256):  # warm: the pages, the index
    ds.get_batch(order[first:first + 256])
best = None
for _ in range(3):
    before = resource.getrusage(resource.RUSAGE_THREAD)
    start = time.perf_counter()
    for first in range(0, len(order), 256):
        ds.get_batch(order[first:first + 256])
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_THREAD)
    result = {"wall_us": wall / len(order) * 1e6, "user_us": (after.ru_utime - before.ru_utime) / len(order) * 1e6,
              "system_us": (after.ru_stime - before.ru_stime) / len(order) * 1e6}
    best = result if best is None or result["wall_us"] < best["wall_us"] else best
print(json.dumps(best))
"""


def sh(*command, **kwargs):
    return subprocess.run([str(c) for c in command], check=True, capture_output=True, text=True, **kwargs)


def size_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def make_tar(path, total, seed):
    """WebDataset samples of a 100 KB image (random bytes) and a class."""
    import io
    import random
    import tarfile
    rng = random.Random(seed)
    pool = rng.randbytes(16 << 20)
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as archive:
        for k in range(total // 102_400):
            at = rng.randrange(len(pool) - 100_000)
            for ext, data in (("jpg", pool[at:at + 100_000]), ("cls", str(k % 1000).encode())):
                info = tarfile.TarInfo(f"{k:08d}.{ext}")
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))


def make_npy(path, total, seed):
    import numpy as np
    rows = total // 512
    array = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint8, shape=(rows, 512))
    rng = np.random.default_rng(seed)
    for first in range(0, rows, 1 << 16):
        count = min(1 << 16, rows - first)
        array[first:first + count] = rng.integers(0, 256, size=(count, 512), dtype=np.uint8)
    array.flush()


def prepare(args):
    """The inputs, their indexes and their shuffled copies (made once)."""
    d = pathlib.Path(args.dir)
    (d / "shuffled").mkdir(parents=True, exist_ok=True)
    total = size_bytes(args.bytes)
    inputs = {"jsonl": d / "heavy.jsonl", "tar": d / "images.tar", "npy": d / "rows.npy"}
    if not inputs["jsonl"].exists():
        sh(args.generator, inputs["jsonl"], total, 3)
    if not inputs["tar"].exists():
        make_tar(inputs["tar"], total, 4)
    if not inputs["npy"].exists():
        make_npy(inputs["npy"], total, 5)
    shards = {}
    for fmt, path in inputs.items():
        pattern = d / "shuffled" / f"{fmt}-{{shard}}.{fmt}"
        shards[fmt] = [str(d / "shuffled" / f"{fmt}-{k:05d}.{fmt}") for k in range(args.workers)]
        if not all(os.path.exists(s) for s in shards[fmt]):
            sh(args.binary, path, "--seed", SEED, "--shards", args.workers, "-o", pattern)
    return inputs, shards


def drop_caches():
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def warm(paths):
    for path in paths:
        with open(path, "rb") as f:
            while f.read(16 << 20):
                pass


def index_speed(args, inputs):
    """GiB/s of --index-only and of the counting pass (--dry-run reads the
    input once, counting), warm, alternating, best of 5 each; and the CPU
    seconds a GiB of each (user + system, their best), which a shared
    machine's load disturbs less than the wall time."""
    rows = []
    for fmt in ("jsonl", "tar"):
        path = inputs[fmt]
        warm([path])
        gib = os.path.getsize(path) / (1 << 30)
        wall = {"index": float("inf"), "count": float("inf")}
        cpu = dict(wall)
        for _ in range(5):
            for what, command in (("index", [args.binary, "--index-only", path]),
                                  ("count", [args.binary, path, "--dry-run", "-S", "64M"])):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                sh(*command)
                wall[what] = min(wall[what], time.perf_counter() - start)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[what] = min(cpu[what], after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        rows.append((fmt, gib / wall["index"], gib / wall["count"], cpu["index"] / gib, cpu["count"] / gib))
    return rows


def index_overhead(args, inputs):
    """Seconds of the shuffle of the JSONL into two pieces without and with
    --index (each piece's index written from the records as they are
    written), warm, alternating, best of 2 each."""
    warm([inputs["jsonl"]])
    out = pathlib.Path(args.dir) / "indexed"
    out.mkdir(exist_ok=True)
    best = {False: float("inf"), True: float("inf")}
    for _ in range(2):
        for index in (False, True):
            command = [args.binary, inputs["jsonl"], "--seed", SEED, "--shards", 2, "-o", out / "p-{shard}.jsonl"]
            start = time.perf_counter()
            sh(*command, *(["--index"] if index else []))
            best[index] = min(best[index], time.perf_counter() - start)
    return best[False], best[True]


def run_case(args, fmt, reader, cache, inputs, shards):
    count = args.cold_samples if cache == "cold" else args.warm_samples
    count = min(count, records_of(fmt, inputs))
    if cache == "cold":
        if not drop_caches():
            return None
    else:
        warm(shards[fmt] if reader == "sequential" else [inputs[fmt]])
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if args.keep_freed_memory:
        env.update(MALLOC_TRIM_THRESHOLD_=str(32 << 20), MALLOC_MMAP_THRESHOLD_=str(32 << 20))
    result = sh(sys.executable, "-c", CASE, fmt, reader, inputs[fmt], json.dumps(shards[fmt]), count, args.batch,
                args.workers, env=env)
    return json.loads(result.stdout.strip().splitlines()[-1])


def case_row(fmt, cache, reader, r, bound):
    label = f"({'abc'[READERS.index(reader)]}) {reader}"
    if r is None:
        return f"| {fmt} | {cache} | {label} | - | (cannot drop caches: not root) | | |"
    rate = r["samples"] / r["seconds"]
    ratio = rate / (bound["samples"] / bound["seconds"]) if bound else float("nan")
    return (f"| {fmt} | {cache} | {label} | {r['samples']} | {rate:,.0f} | {ratio:.2f} | "
            f"{r['rss_main'] >> 20} / {r['rss_worker'] >> 20} |")


_RECORDS = {}


def records_of(fmt, inputs):
    if fmt not in _RECORDS:
        import extshuffle
        _RECORDS[fmt] = len(extshuffle.Dataset(inputs[fmt], progress=False))
    return _RECORDS[fmt]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/var/tmp/extshuffle-dataset-bench")
    parser.add_argument("--bytes", default="1G")
    parser.add_argument("--caches", default="warm,cold")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--warm-samples", type=int, default=400_000)
    parser.add_argument("--cold-samples", type=int, default=20_000)
    parser.add_argument("--binary", default=str(REPO / "build" / "extshuffle"))
    parser.add_argument("--generator", default=str(REPO / "build" / "bench" / "generate_jsonl"))
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--parts", default="readers,index,cost", help="what to measure")
    parser.add_argument("--keep-freed-memory", action="store_true",
                        help="cases run with MALLOC_TRIM_THRESHOLD_ and MALLOC_MMAP_THRESHOLD_ of 32 MiB: glibc "
                             "keeps a batch's freed buffers for the next instead of returning them")
    args = parser.parse_args()
    print("uptime before:", sh("uptime").stdout.strip())
    inputs, shards = prepare(args)
    for fmt, path in inputs.items():
        if fmt != "npy":
            sh(args.binary, "--index-only", path)
    formats = args.formats.split(",")
    parts = args.parts.split(",")
    if "readers" in parts:
        print("\n| format | cache | reader | samples | samples/s | vs (b) | peak RSS main / worker (MiB) |")
        print("|---|---|---|---|---|---|---|")
        for fmt in formats:
            for cache in args.caches.split(","):
                results = {reader: run_case(args, fmt, reader, cache, inputs, shards) for reader in READERS}
                for reader in READERS:
                    print(case_row(fmt, cache, reader, results[reader], results["sequential"]))
    if "index" in parts:
        print("\n| format | --index-only GiB/s | counting pass (--dry-run) GiB/s | index / count | "
              "CPU s/GiB index | CPU s/GiB count |")
        print("|---|---|---|---|---|---|")
        for fmt, index, count, index_cpu, count_cpu in index_speed(args, inputs):
            print(f"| {fmt} | {index:.2f} | {count:.2f} | {index / count:.2f} | {index_cpu:.3f} | {count_cpu:.3f} |")
        plain, indexed = index_overhead(args, inputs)
        print(f"\n`extshuffle heavy.jsonl --shards 2` (1 GiB): {plain:.2f} s; with --index: {indexed:.2f} s "
              f"({indexed / plain:.2f}x)")
    if "cost" in parts:
        print("\n| format | get_batch µs/record (wall) | user CPU µs/record (the package) | system CPU µs/record |")
        print("|---|---|---|---|")
        for fmt in formats:
            warm([inputs[fmt]])
            count = min(200_000 if fmt != "tar" else 2_000, records_of(fmt, inputs))
            r = json.loads(sh(sys.executable, "-c", OWN_COST, inputs[fmt], count).stdout)
            print(f"| {fmt} | {r['wall_us']:.2f} | {r['user_us']:.2f} | {r['system_us']:.2f} |")
    print("\nuptime after:", sh("uptime").stdout.strip())


if __name__ == "__main__":
    main()
