"""docs/python.md "Reading records in the order": every example runs as
written (python blocks in-process, the shell block with bash and the tool on
PATH), on small files of the names they use, and does what the page says:
the resumed epoch holds the records the interrupted one had left, in its
order; decoded images come in batches; the torch 1.13 batch recipe reads
whole batches."""

import json
import os
import pathlib
import re
import subprocess

import numpy as np
import pytest

import extshuffle

REPO = pathlib.Path(__file__).resolve().parents[2]


def examples():
    """The section's code blocks, in order: (language, text)."""
    text = (REPO / "docs" / "python.md").read_text()
    section = text[text.index("## Reading records in the order"):]
    end = section.find("\n## ", 5)
    section = section if end < 0 else section[:end]
    return re.findall(r"```(python|sh)\n(.*?)```", section, re.S)


@pytest.fixture
def workdir(tmp_path, monkeypatch, binary):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EXTSHUFFLE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", os.path.dirname(os.path.abspath(binary)) + os.pathsep + os.environ["PATH"])
    return tmp_path


def block(language, containing):
    found = [text for lang, text in examples() if lang == language and containing in text]
    assert len(found) == 1, f"one {language} example with {containing!r}"
    return found[0]


def run_python(text):
    """Runs an example as torchrun would: inside a process group (of one
    process here), which the samplers built without num_replicas and rank
    read their world size and rank from, as torch's own does."""
    namespace = {"__name__": "__main__"}
    try:
        import torch.distributed as dist
    except ImportError:
        dist = None
    grouped = dist is not None and dist.is_available() and not dist.is_initialized()
    if grouped:
        store = dist.HashStore()
        dist.init_process_group("gloo", store=store, world_size=1, rank=0)
    try:
        exec(compile(text, "docs/python.md", "exec"), namespace)
    finally:
        if grouped:
            dist.destroy_process_group()
    return namespace


def test_the_section_has_the_examples_the_tests_run():
    languages = [lang for lang, _ in examples()]
    assert languages == ["python", "python", "sh", "python", "python"]


def test_the_order_and_the_jsonl_loop(workdir, binary):
    pytest.importorskip("torch")
    lines = [json.dumps({"id": i, "text": f"record {i} " + "x" * (i % 50)}) for i in range(1000)]
    (workdir / "train.jsonl").write_text("".join(line + "\n" for line in lines))
    intro = run_python(examples()[0][1])
    cli = subprocess.run([binary, "train.jsonl", "--seed", "7"], capture_output=True, check=True).stdout
    assert intro["ds"][intro["p"][0]] + b"\n" == cli[:cli.index(b"\n") + 1]
    assert len(intro["ds"][intro["p"][:256]]) == 256
    loop = run_python(block("python", "train.jsonl\", transform=json.loads"))
    ds, sampler, rest = loop["ds"], loop["sampler"], loop["rest"]
    order = extshuffle.Permutation(1000, extshuffle.epoch_seed(42, 1))[:]
    assert rest == [json.loads(line) for line in np.array(lines)[order[256:]]]
    assert len(rest) == len(ds) - 4 * 64


def test_the_webdataset_loop_decodes_images(workdir):
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    import io
    import tarfile
    generator = torch.Generator().manual_seed(0)
    with tarfile.open(workdir / "images.tar", "w") as archive:
        for i in range(120):
            size = 20 + i % 30
            image = torch.randint(0, 256, (3, size, size + 5), dtype=torch.uint8, generator=generator)
            for extension, data in (("jpg", torchvision.io.encode_jpeg(image).numpy().tobytes()),
                                    ("cls", str(i % 10).encode())):
                info = tarfile.TarInfo(f"img{i:04d}.{extension}")
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    (workdir / "shards").mkdir()
    subprocess.run(["bash", "-ec", block("sh", "--index")], check=True)
    assert len(list((workdir / "shards").glob(".*.extshuffle-index"))) == 4
    loop = run_python(block("python", "torchvision"))
    assert not (workdir / "cache").exists()  # the shards' indexes were beside them
    images, labels = loop["images"], loop["labels"]
    assert images.dtype == torch.uint8 and images.shape[1:] == (3, 32, 32) and labels.max() < 10
    assert len(loop["ds"]) == 120


def test_the_aligned_npy_loop_reads_whole_batches(workdir):
    torch = pytest.importorskip("torch")
    features = np.random.default_rng(1).standard_normal((1000, 8)).astype(np.float32)
    labels = np.arange(1000, dtype=np.int64)
    np.save(workdir / "features.npy", features)
    np.save(workdir / "labels.npy", labels)
    loop = run_python(block("python", "aligned=True"))
    got_features, got_labels = loop["features"], loop["labels"]
    assert got_features.shape == (1000 % 256, 8) and got_labels.shape == (1000 % 256,)
    assert np.array_equal(got_features.numpy(), features[got_labels.numpy()])
    # The last batch is what is left of 1000 records in batches of 256:
    # each came whole from one get_batch (ds[list]) and was collated.
    assert loop["batches"].batch_size == 256
