"""Dataset's contract, for every format: with p = Permutation(len(ds), s),
the records ds[p[0]], ds[p[1]], ... written in the tool's output framing are
byte for byte `extshuffle FILES --seed s`'s output, and so is every shard
and split (a split's records are a range of p). len(ds) is the tool's record
count. Indexes are built in a cache directory of the test's, or come from
the tool's --index-only and --index."""

import os
import subprocess

import numpy as np
import pytest

import extshuffle
from dataset_files import (csv_records, heavy_tailed_jsonl, npy_bytes, tar_members, tar_samples, tfrecord_frame,
                           write_tar)

SEEDS = (0, 7, 2**63 + 5)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """Each test's own index cache (the default when none is given)."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("EXTSHUFFLE_CACHE_DIR", str(directory))
    return directory


def run(binary, *args):
    result = subprocess.run([binary, *map(str, args)], capture_output=True)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


def lines_out(ds, records):
    """Records of lines, CSV, TSV or JSONL in the tool's framing: the header,
    then each record followed by its terminator."""
    terminator = b"\0" if ds._options.get("zero_terminated") else b"\n"
    return ds.header + b"".join(record + terminator for record in records)


def order(ds, seed):
    return extshuffle.Permutation(len(ds), seed)[:]


def check_lines_contract(binary, ds, paths, *args):
    for seed in SEEDS:
        p = order(ds, seed)
        expected = run(binary, *paths, "--seed", seed, *args)
        assert lines_out(ds, ds[p]) == expected
        assert ds.header + b"".join(ds.raw_batch(p)) == expected


def test_lines_crlf_empty_and_unterminated(binary, tmp_path, cache):
    path = tmp_path / "a.txt"
    path.write_bytes(b"".join(f"line {i}\r\n".encode() if i % 5 else b"\n" for i in range(3000)) + b"last")
    ds = extshuffle.Dataset(path, progress=False)
    assert len(ds) == 3001 and ds[0] == b"" and ds[1] == b"line 1\r" and ds[-1] == b"last"
    check_lines_contract(binary, ds, [path])


def test_csv_tsv_and_headers(binary, tmp_path, cache):
    csv = tmp_path / "a.csv"
    records = csv_records(2000, 1)
    csv.write_bytes(b"id,text\n" + b"".join(records))
    ds = extshuffle.Dataset(csv, progress=False)
    assert len(ds) == 2000 and ds.header == b"id,text\n" and ds.format == "csv"
    assert ds[3] == records[3][:-1]
    check_lines_contract(binary, ds, [csv])
    tsv = tmp_path / "a.tsv"
    tsv.write_bytes(b"h1\th2\nsecond header\n" + b"".join(f"{i}\t\"q{i}\n".encode() for i in range(500)))
    ds = extshuffle.Dataset(tsv, header=2, progress=False)
    assert len(ds) == 500 and ds.header.count(b"\n") == 2
    check_lines_contract(binary, ds, [tsv], "--header=2")


def test_jsonl_heavy_tailed_several_files_and_a_directory(binary, tmp_path, cache):
    lines = heavy_tailed_jsonl(3000, 2)
    (tmp_path / "d").mkdir()
    for k, part in enumerate((lines[:1000], lines[1000:1001], [], lines[1001:])):
        (tmp_path / "d" / f"part-{k}.jsonl").write_bytes(b"".join(part))
    ds = extshuffle.Dataset(tmp_path / "d", progress=False)
    assert len(ds) == 3000 and ds.format == "jsonl" and len(ds.files) == 4
    assert [ds[i] for i in (0, 1000, 2999)] == [lines[i][:-1] for i in (0, 1000, 2999)]
    check_lines_contract(binary, ds, [tmp_path / "d"])
    # The files named one by one, in another order: another dataset.
    files = [tmp_path / "d" / f"part-{k}.jsonl" for k in (3, 0)]
    ds = extshuffle.Dataset(files, progress=False)
    check_lines_contract(binary, ds, ["-o", "/dev/stdout", *files])


def test_skip_empty_and_zero_terminated(binary, tmp_path, cache):
    path = tmp_path / "a.txt"
    path.write_bytes(b"".join(b"  \n" if i % 3 == 0 else f"r{i}\n".encode() for i in range(900)) + b"\t")
    ds = extshuffle.Dataset(path, skip_empty=True, progress=False)
    assert len(ds) == 600 and ds[0] == b"r1"
    check_lines_contract(binary, ds, [path], "--skip-empty")
    zero = tmp_path / "z.bin"
    zero.write_bytes(b"".join(f"item {i}\nwith newline".encode() + b"\0" for i in range(700)))
    ds = extshuffle.Dataset(zero, zero_terminated=True, progress=False)
    assert len(ds) == 700 and ds[5] == b"item 5\nwith newline"
    check_lines_contract(binary, ds, [zero], "-z")


def test_tfrecord(binary, tmp_path, cache):
    rng = np.random.default_rng(3)
    data = [rng.bytes(int(rng.integers(0, 300))) for _ in range(800)]
    path = tmp_path / "a.tfrecord"
    path.write_bytes(b"".join(tfrecord_frame(d) for d in data))
    ds = extshuffle.Dataset(path, progress=False)
    assert len(ds) == 800 and ds[7] == data[7] and ds.format == "tfrecord"
    for seed in SEEDS:
        p = order(ds, seed)
        expected = run(binary, path, "--seed", seed)
        assert b"".join(tfrecord_frame(d) for d in ds[p]) == expected
        assert b"".join(ds.raw_batch(p)) == expected


def test_tar_samples(binary, tmp_path, cache):
    samples = tar_samples(600, 4)
    write_tar(tmp_path / "a.tar", samples[:250])
    write_tar(tmp_path / "b.tar", samples[250:], long_names=True)
    ds = extshuffle.Dataset([tmp_path / "a.tar", tmp_path / "b.tar"], progress=False)
    assert len(ds) == 600 and ds.format == "tar"
    first = ds[0]
    assert first == {"__key__": samples[0][0], **samples[0][1]}
    assert ds[300]["__key__"] == "long/" * 30 + samples[300][0]
    for seed in SEEDS:
        p = order(ds, seed)
        expected = run(binary, tmp_path / "a.tar", tmp_path / "b.tar", "-o", "/dev/stdout", "--seed", seed)
        assert b"".join(ds.raw_batch(p)) + b"\0" * 1024 == expected
        read_back = tar_members(expected)
        assert [{"__key__": key, **members} for key, members in read_back] == ds[p]


def test_npy_rows_and_aligned(binary, tmp_path, cache):
    x = np.arange(3000 * 6, dtype="<f4").reshape(3000, 2, 3)
    y = np.arange(3000, dtype="<i8") * 7
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    ds = extshuffle.Dataset(tmp_path / "x.npy")
    assert len(ds) == 3000 and ds.format == "npy"
    assert np.array_equal(ds[5], x[5]) and ds[5].dtype == x.dtype and ds[5].shape == (2, 3)
    pair = extshuffle.Dataset([tmp_path / "x.npy", tmp_path / "y.npy"], aligned=True)
    assert len(pair) == 3000
    row, label = pair[9]
    assert np.array_equal(row, x[9]) and label == y[9]
    for seed in SEEDS:
        p = order(pair, seed)
        run(binary, tmp_path / "x.npy", tmp_path / "y.npy", "-o", tmp_path / "xs.npy", "-o", tmp_path / "ys.npy",
            "--seed", seed)
        rows = pair[p]
        xs, ys = np.stack([r for r, _ in rows]), np.stack([label for _, label in rows])
        assert npy_bytes(xs) == (tmp_path / "xs.npy").read_bytes()
        assert npy_bytes(ys) == (tmp_path / "ys.npy").read_bytes()
        assert b"".join(r for r, _ in pair.raw_batch(p)) == (tmp_path / "xs.npy").read_bytes()[len(pair.header[0]):]


def test_fixed_size_records(binary, tmp_path, cache):
    path = tmp_path / "a.bin"
    data = np.random.default_rng(5).integers(0, 255, size=(1000, 12), dtype=np.uint8)
    path.write_bytes(data.tobytes())
    ds = extshuffle.Dataset(path, record_size=12)
    assert len(ds) == 1000 and ds[4] == data[4].tobytes()
    as_u32 = extshuffle.Dataset(path, record_size=12, dtype="<u4")
    assert np.array_equal(as_u32[4], data[4].view("<u4"))
    assert not cache.exists()  # fixed-size records need no index
    for seed in SEEDS:
        p = order(ds, seed)
        assert b"".join(ds[p]) == run(binary, path, "--seed", seed, "--record-size", 12)


def piece_records(path, fmt):
    """A piece's bytes of records: less its header (CSV, .npy) or trailer (tar)."""
    data = path.read_bytes()
    if fmt == "csv":
        return data[data.index(b"\n") + 1:]
    if fmt == "npy":
        return data[10 + int.from_bytes(data[8:10], "little"):]
    if fmt == "tar":
        assert data.endswith(b"\0" * 1024)
        return data[:-1024]
    return data


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tfrecord", "tar", "npy"])
def test_shards_and_splits_are_ranges_of_the_order(binary, tmp_path, cache, fmt):
    path = tmp_path / f"in.{fmt}"
    if fmt == "jsonl":
        path.write_bytes(b"".join(heavy_tailed_jsonl(2500, 6)))
    elif fmt == "csv":
        path.write_bytes(b"id,text\n" + b"".join(csv_records(2500, 6)))
    elif fmt == "tfrecord":
        path.write_bytes(b"".join(tfrecord_frame(bytes([k % 251]) * (k % 40)) for k in range(2500)))
    elif fmt == "tar":
        write_tar(path, tar_samples(500, 6))
    else:
        np.save(path, np.arange(2500 * 3, dtype="<u2").reshape(2500, 3))
    ds = extshuffle.Dataset(path, progress=False)
    out = tmp_path / "out"
    out.mkdir()
    run(binary, path, "-o", out / f"{{split}}-{{shard}}.{fmt}", "--seed", 11, "--split", "train=0.9,val=rest",
        "--shards", 3)
    p = order(ds, 11)
    train_end = int(len(ds) * 0.9)
    for split, positions in (("train", p[:train_end]), ("val", p[train_end:])):
        pieces = b"".join(piece_records(out / f"{split}-{k:05d}.{fmt}", fmt) for k in range(3))
        assert pieces == b"".join(ds.raw_batch(positions)), split


def test_indexes_from_the_tool_need_no_cache(binary, tmp_path, cache):
    samples = tar_samples(300, 8)
    write_tar(tmp_path / "in.tar", samples)
    out = tmp_path / "out"
    out.mkdir()
    run(binary, tmp_path / "in.tar", "-o", out / "train-{shard}.tar", "--shards", 4, "--seed", 3, "--index")
    names = sorted(os.listdir(out))
    assert names == sorted([f"train-{k:05d}.tar" for k in range(4)] +
                           [f".train-{k:05d}.tar.extshuffle-index" for k in range(4)])
    shuffled = extshuffle.Dataset(out, progress=False)
    assert not cache.exists()
    original = extshuffle.Dataset(tmp_path / "in.tar", progress=False)  # its index built in the cache
    p = order(original, 3)
    assert shuffled[:] == original[p]
    # --index-only: the index beside each input, found there.
    cached = os.listdir(cache)
    lines = tmp_path / "l.txt"
    lines.write_bytes(b"a\nb\nc\n")
    run(binary, "--index-only", lines)
    assert (tmp_path / ".l.txt.extshuffle-index").exists()
    assert extshuffle.Dataset(lines)[:] == [b"a", b"b", b"c"]
    assert os.listdir(cache) == cached and len(cached) == 1


def test_pickles_by_path_and_reads_in_workers(tmp_path, cache):
    torch = pytest.importorskip("torch")
    path = tmp_path / "a.jsonl"
    lines = heavy_tailed_jsonl(1000, 9)
    path.write_bytes(b"".join(lines))
    ds = extshuffle.Dataset(path, progress=False)
    import pickle
    state = pickle.dumps(ds)
    # One worker process (each costs a fork and a torch worker loop): what
    # is proved is that a worker reopens the dataset by path and reads it.
    assert len(state) < 2000  # paths and options, not records
    sampler = extshuffle.DistributedSampler(ds, num_replicas=1, rank=0, seed=5)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, sampler=sampler, num_workers=1)
    assert list(loader) == [lines[i][:-1] for i in sampler]
    # torch 1.13: a BatchSampler as the sampler, each batch read at once.
    batches = torch.utils.data.BatchSampler(sampler, batch_size=64, drop_last=False)
    loader = torch.utils.data.DataLoader(ds, sampler=batches, batch_size=None, num_workers=1,
                                         collate_fn=lambda batch: batch)
    assert [r for batch in loader for r in batch] == [lines[i][:-1] for i in sampler]


def test_a_batch_of_rows_is_one_array_through_a_data_loader(tmp_path, cache):
    """A batch of .npy rows (or of fixed-size records with dtype=) is one
    array, rows in the order asked: a DataLoader's worker hands it on as one
    tensor, torch 1.13's way (BatchSampler, batch_size=None) and the way newer
    torch calls __getitems__ and collates what it returns."""
    torch = pytest.importorskip("torch")
    x = np.arange(700 * 6, dtype="<f4").reshape(700, 2, 3)
    np.save(tmp_path / "x.npy", x)
    ds = extshuffle.Dataset(tmp_path / "x.npy")
    p = order(ds, 7)[:100]
    batch = ds.get_batch(p)
    assert isinstance(batch, np.ndarray) and batch.dtype == x.dtype and batch.shape == (100, 2, 3)
    assert np.array_equal(batch, x[p]) and np.array_equal(ds[p], x[p]) and np.array_equal(ds[3:9], x[3:9])
    assert ds[int(p[0])].shape == (2, 3) and np.array_equal(ds[int(p[0])], x[p[0]])
    # Newer torch's fetcher: collate_fn(dataset.__getitems__(indices)).
    collated = torch.utils.data.default_collate(ds.__getitems__(p.tolist()))
    assert collated.shape == (100, 2, 3) and torch.equal(collated, torch.from_numpy(x[p]))
    sampler = extshuffle.DistributedSampler(ds, num_replicas=1, rank=0, seed=5)
    batches = torch.utils.data.BatchSampler(sampler, batch_size=64, drop_last=False)
    expected = x[np.fromiter(sampler, dtype=np.int64)]
    for collate in ({}, {"collate_fn": torch.utils.data.default_collate}):
        loader = torch.utils.data.DataLoader(ds, sampler=batches, batch_size=None, num_workers=1, **collate)
        got = list(loader)
        assert all(isinstance(b, torch.Tensor) for b in got) and [len(b) for b in got] == [64] * 10 + [60]
        assert torch.equal(torch.cat(got), torch.from_numpy(expected))
    # One index at a time (batch_size=64, no __getitems__ in torch 1.13): rows stacked by the collate.
    loader = torch.utils.data.DataLoader(ds, sampler=sampler, batch_size=64, num_workers=1)
    assert torch.equal(torch.cat(list(loader)), torch.from_numpy(expected))
    # A transform still sees one record at a time; the batch is then its list.
    halves = extshuffle.Dataset(tmp_path / "x.npy", transform=lambda row: row / 2)
    assert isinstance(halves.get_batch(p), list) and np.array_equal(np.stack(halves.get_batch(p)), x[p] / 2)
    # Fixed-size records with dtype=: one array too; without dtype=: bytes each.
    raw = tmp_path / "r.bin"
    raw.write_bytes(x.tobytes())
    as_f4 = extshuffle.Dataset(raw, record_size=24, dtype="<f4")
    assert np.array_equal(as_f4.get_batch(p), x.reshape(700, 6)[p])
    assert extshuffle.Dataset(raw, record_size=24).get_batch(p[:2]) == [x[i].tobytes() for i in p[:2]]
