"""shuffle(): the program's Job run from Python. Byte for byte the program's
output, its errors as extshuffle.Error with the program's message and exit
code, progress, and Ctrl-C leaving nothing behind."""

import os
import pathlib
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import extshuffle


def run_program(binary, *args):
    return subprocess.run([binary, *map(str, args)], capture_output=True, text=True)


def test_lines_equal_the_program(binary, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(20000)))
    result = extshuffle.shuffle(source, tmp_path / "out.txt", seed=77, progress=False)
    assert run_program(binary, source, tmp_path / "cli.txt", "--seed", 77).returncode == 0
    assert (tmp_path / "out.txt").read_bytes() == (tmp_path / "cli.txt").read_bytes()
    assert result["records"] == 20000 and result["levels"] == 1 and result["format"] == "lines"
    assert result["outputs"][0]["records"] == 20000 and len(result["datasets"]) == 1


def test_shuffle_imports_neither_numpy_nor_torch(tmp_path):
    # Its child interpreter imports the package: numpy (and torch) would be
    # most of each call's start-up; Permutation and Dataset load them when used.
    (tmp_path / "in.txt").write_text("a\nb\nc\n")
    program = textwrap.dedent(f"""
        import sys
        import extshuffle
        extshuffle.shuffle({str(tmp_path / "in.txt")!r}, {str(tmp_path / "out.txt")!r}, seed=1, progress=False)
        assert "numpy" not in sys.modules and "torch" not in sys.modules, sorted(sys.modules)
        assert extshuffle.Permutation(3, 1)[0] in (0, 1, 2) and "numpy" in sys.modules
        assert "Dataset" in dir(extshuffle) and "torch" not in sys.modules
        """)
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert sorted((tmp_path / "out.txt").read_text().split()) == ["a", "b", "c"]


def test_records_through_disk_equal_the_program(binary, tmp_path):
    # 300000 records of 8 bytes, leaves of 4096 and 1 MiB of memory: two
    # levels, two passes through scratch space.
    n = 300000
    source = tmp_path / "in.bin"
    np.arange(n, dtype=np.uint64).tofile(source)
    seen = []
    result = extshuffle.shuffle([source], tmp_path / "out.bin", seed=3, record_size=8, memory=1 << 20,
                                leaf_records=4096, tmpdir=tmp_path,
                                progress=lambda done, total: seen.append((done, total)))
    assert run_program(binary, source, tmp_path / "cli.bin", "--seed", 3, "--record-size", 8, "-S", "1M",
                       "--leaf-records", 4096, "-T", tmp_path).returncode == 0
    assert (tmp_path / "out.bin").read_bytes() == (tmp_path / "cli.bin").read_bytes()
    assert result["passes"] == 2 and result["levels"] == 2 and result["records"] == n
    assert seen and seen[0][0] == 0 and all(total > 0 for _, total in seen)
    out = np.fromfile(tmp_path / "out.bin", dtype=np.uint64)
    assert np.array_equal(np.sort(out), np.arange(n, dtype=np.uint64))
    assert np.array_equal(out, extshuffle.Permutation(n, 3, leaf_records=4096)[:])


def test_shards_and_manifest_equal_the_program(binary, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(f'{{"i": {i}}}\n' for i in range(5000)))
    (tmp_path / "py").mkdir()
    (tmp_path / "cli").mkdir()
    result = extshuffle.shuffle(source, tmp_path / "py" / "part-{shard}.jsonl", seed=1, shards=3,
                                manifest=tmp_path / "py.json", progress=False)
    assert run_program(binary, source, "-o", tmp_path / "cli" / "part-{shard}.jsonl", "--seed", 1, "--shards", 3,
                       "--manifest", tmp_path / "cli.json").returncode == 0
    names = [pathlib.Path(o["path"]).name for o in result["outputs"]]
    assert sorted(names) == sorted(os.listdir(tmp_path / "cli")) and len(names) == 3
    for name in names:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    assert [o["records"] for o in result["outputs"]] == [1667, 1667, 1666]
    assert (tmp_path / "py.json").exists()


# What the dict holds besides the RESULT fields: the files, the format and
# what the run says.
NOT_RESULT_FIELDS = {"inputs", "outputs", "format", "records_written", "dry_run_text", "notes", "warnings",
                     "stale_pieces", "datasets"}


def test_the_dict_holds_the_result_line_fields(binary, tmp_path):
    # One list of fields (tools/cli/result_fields.hpp) for both: the RESULT
    # line's keys but the seed, which the caller gave, are the dict's.
    source = tmp_path / "in.txt"
    source.write_text("".join(f"{i}\n" for i in range(1000)))
    cli = run_program(binary, source, tmp_path / "cli.txt", "--seed", 5, "--stats")
    assert cli.returncode == 0, cli.stderr
    line = next(line for line in cli.stderr.splitlines() if line.startswith("RESULT "))
    keys = [field.split("=")[0] for field in line.split()[1:]]
    assert keys[-1] == "seed" and len(keys) >= 13, line
    result = extshuffle.shuffle(source, tmp_path / "py.txt", seed=5, progress=False)
    assert [key for key in result if key not in NOT_RESULT_FIELDS] == keys[:-1]
    values = dict(field.split("=") for field in line.split()[1:])
    assert result["records"] == int(values["records"]) == 1000
    assert result["bytes"] == int(values["bytes"]) and result["levels"] == int(values["levels"])


def test_errors_carry_the_program_message_and_code(binary, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n")
    cases = [
        ((tmp_path / "missing.txt", tmp_path / "out.txt"), {}, 1),
        ((source, tmp_path / "out.txt"), {"memory": "lots"}, 2),
        ((source, tmp_path / "out.txt"), {"record_size": 3}, 1),  # 4 bytes are not whole records of 3
        ((source, tmp_path / "no-such-dir" / "out.txt"), {}, 2),
    ]
    for (inputs, output), options, code in cases:
        with pytest.raises(extshuffle.Error) as caught:
            extshuffle.shuffle(inputs, output, seed=1, progress=False, **options)
        assert caught.value.exit_code == code
        assert isinstance(caught.value, extshuffle.UsageError) == (code == 2)
        cli = run_program(binary, inputs, output, "--seed", 1,
                          *(["-S", options["memory"]] if "memory" in options else []),
                          *(["--record-size", options["record_size"]] if "record_size" in options else []))
        assert cli.returncode == code
        # The tool's line, its options named as the keywords were.
        expected = cli.stderr.strip().replace("--memory", "memory=").replace("--record-size", "record_size=")
        assert expected == f"extshuffle: {caught.value}"
        assert not pathlib.Path(output).exists()
    with pytest.raises(extshuffle.UsageError, match=r"^colour=: unknown option"):
        extshuffle.shuffle(source, tmp_path / "out.txt", seed=1, colour="blue")
    assert sorted(os.listdir(tmp_path)) == ["in.txt"]  # nothing left behind


INTERRUPTED = textwrap.dedent("""
    import os, signal, sys
    import extshuffle
    source, output, tmpdir = sys.argv[1:]
    def progress(done, total):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, once the passes run
    try:
        extshuffle.shuffle(source, output, seed=1, record_size=8, memory="8M", tmpdir=tmpdir, progress=progress)
    except KeyboardInterrupt:
        print("KeyboardInterrupt")
""")


def test_ctrl_c_raises_keyboard_interrupt_and_leaves_nothing(tmp_path):
    source = tmp_path / "in.bin"
    np.arange(1 << 22, dtype=np.uint64).tofile(source)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    output = tmp_path / "out.bin"
    run = subprocess.run([sys.executable, "-c", INTERRUPTED, str(source), str(output), str(scratch)],
                         capture_output=True, text=True, timeout=120, env=os.environ)
    assert run.stdout.strip() == "KeyboardInterrupt", run.stderr
    assert not output.exists()
    assert os.listdir(scratch) == []
    assert sorted(os.listdir(tmp_path)) == ["in.bin", "scratch"]
    assert source.stat().st_size == 8 << 22


def test_signal_handlers_of_the_caller_are_left_alone(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("x\ny\n")
    before = signal.getsignal(signal.SIGINT)
    extshuffle.shuffle(source, tmp_path / "out.txt", seed=1, progress=False)
    assert signal.getsignal(signal.SIGINT) is before


AFTER_TORCH = textwrap.dedent("""
    import sys
    import torch
    import extshuffle
    torch.set_num_threads(2)
    a = torch.rand(1500, 1500)
    (a @ a).sum()  # torch's OpenMP threads have run
    result = extshuffle.shuffle(sys.argv[1], sys.argv[2], seed=5, threads=2, progress=False)
    print(result["records"])
""")


def test_runs_after_torch_used_its_threads(binary, tmp_path):
    # A forked copy of a process whose OpenMP threads have run hangs in its
    # first parallel region: shuffle() must not depend on the caller's state.
    pytest.importorskip("torch")
    source = tmp_path / "in.txt"
    source.write_text("".join(f"{i}\n" for i in range(100000)))
    run = subprocess.run([sys.executable, "-c", AFTER_TORCH, str(source), str(tmp_path / "out.txt")],
                         capture_output=True, text=True, timeout=120, env=os.environ)
    assert run.returncode == 0 and run.stdout.strip() == "100000", run.stderr
    assert run_program(binary, source, tmp_path / "cli.txt", "--seed", 5).returncode == 0
    assert (tmp_path / "out.txt").read_bytes() == (tmp_path / "cli.txt").read_bytes()


def test_standard_input_stays_the_callers(tmp_path):
    # "-" reads the caller's standard input, not a pipe of the package's own.
    script = "import sys, extshuffle; extshuffle.shuffle('-', sys.argv[1], seed=3, progress=False)"
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path / "out.txt")], input="a\nb\nc\n",
                         capture_output=True, text=True, timeout=60, env=os.environ)
    assert run.returncode == 0, run.stderr
    assert sorted((tmp_path / "out.txt").read_text().split()) == ["a", "b", "c"]
