"""shuffle() is the CLI: its keywords go through the CLI's own option parser
and error mapping, so every value the tool refuses is refused with the
tool's message (the option named as the caller named it: memory=, not
--memory), and a failure of the run reads as the tool's one line. File
names are what Python allows (str, bytes, os.PathLike, undecodable ones
included), and the child's failure reaches the caller with its message."""

import os
import pathlib
import resource
import subprocess
import sys
import textwrap

import pytest

import extshuffle


def cli_failure(binary, *args, limit_bytes=None):
    """The tool's exit code and message (without "extshuffle: ") for `args`."""
    limit = None
    if limit_bytes is not None:
        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    run = subprocess.run([binary, *args], capture_output=True, preexec_fn=limit)
    assert run.returncode != 0 and run.stdout == b"", run
    line = run.stderr.rstrip(b"\n")
    assert line.startswith(b"extshuffle: ") and b"\n" not in line, line
    return run.returncode, line[len(b"extshuffle: "):]


@pytest.fixture
def lines(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("".join(f"{i}\n" for i in range(1000)))
    return source


def refused(source, output, **options):
    with pytest.raises(extshuffle.Error) as caught:
        extshuffle.shuffle(source, output, progress=False, **options)
    assert not pathlib.Path(output).exists()
    return caught.value


@pytest.mark.parametrize("keyword, value, option", [
    ("format", "npy", "--format"),
    ("format", "bogus", "--format"),
    ("device", "tpu", "--device"),
    ("memory", "", "--memory"),
    ("memory", "lots", "--memory"),
    ("threads", "many", "--threads"),
    ("shards", 0, "--shards"),
])
def test_a_value_the_tool_refuses_is_refused_with_its_message(binary, lines, tmp_path, keyword, value, option):
    code, message = cli_failure(binary, str(lines), "-o", str(tmp_path / "cli.txt"), "--seed", "1", option,
                                str(value))
    error = refused(lines, tmp_path / "out.txt", seed=1, **{keyword: value})
    assert isinstance(error, extshuffle.UsageError) and code == 2 and error.exit_code == 2
    # The tool's one line, the option named as the keyword.
    assert str(error) == message.decode().replace(option, f"{keyword}=")
    assert f"{keyword}=" in str(error) and "--" not in str(error)


def test_choices_are_named(lines, tmp_path):
    error = refused(lines, tmp_path / "out.txt", seed=1, format="npy")
    assert "expected one of auto, binary, lines, csv, tsv, jsonl, tfrecord, tar" in str(error)


@pytest.mark.parametrize("seed", [1.9, 2.0, -1, 1 << 64, "x", True, None])
def test_a_seed_that_is_not_an_unsigned_64_bit_integer_is_refused(binary, lines, tmp_path, seed):
    error = refused(lines, tmp_path / "out.txt", seed=seed)
    assert isinstance(error, extshuffle.UsageError)
    assert str(error).startswith(f"invalid seed= '{seed}': expected an unsigned 64-bit number"), str(error)
    code, message = cli_failure(binary, str(lines), str(tmp_path / "cli.txt"), "--seed", str(seed))
    assert code == 2 and str(error) == message.decode().replace("--seed", "seed=")


def test_integral_seeds_of_any_integer_type_and_the_tools_spellings(binary, lines, tmp_path):
    np = pytest.importorskip("numpy")
    assert subprocess.run([binary, lines, tmp_path / "cli.txt", "--seed", "42"]).returncode == 0
    expected = (tmp_path / "cli.txt").read_bytes()
    for k, seed in enumerate([42, np.uint64(42), np.int32(42), "42", "0x2a"]):
        extshuffle.shuffle(lines, tmp_path / f"out{k}.txt", seed=seed, progress=False)
        assert (tmp_path / f"out{k}.txt").read_bytes() == expected, seed


def test_an_empty_list_of_outputs_or_inputs_is_an_error(lines, tmp_path, capfd):
    with pytest.raises(extshuffle.UsageError, match=r"^invalid output=\[\]: an empty list names no file"):
        extshuffle.shuffle(lines, [], seed=1, progress=False)
    with pytest.raises(extshuffle.UsageError, match=r"^invalid inputs=\[\]: an empty list names no file"):
        extshuffle.shuffle([], tmp_path / "out.txt", seed=1, progress=False)
    assert capfd.readouterr().out == ""  # nothing written to standard output
    assert sorted(os.listdir(tmp_path)) == ["in.txt"]


def test_an_unknown_keyword_is_named(lines, tmp_path):
    with pytest.raises(extshuffle.UsageError, match=r"^colour=: unknown option"):
        extshuffle.shuffle(lines, tmp_path / "out.txt", seed=1, colour="blue")
    for program_only in ("stats", "verbose", "quiet", "help", "version", "echo", "output"):
        with pytest.raises((extshuffle.UsageError, TypeError)):
            extshuffle.shuffle(lines, tmp_path / "out.txt", seed=1, progress=False, **{program_only: True})
    assert sorted(os.listdir(tmp_path)) == ["in.txt"]


def test_a_runtime_message_names_the_keyword(binary, lines, tmp_path):
    # Two options that cannot be combined: the check is make_job's.
    code, message = cli_failure(binary, str(lines), "-o", str(tmp_path / "cli-{shard}.txt"), "--seed", "1",
                                "--shards", "2", "--shard-size", "1K")
    error = refused(lines, tmp_path / "out-{shard}.txt", seed=1, shards=2, shard_size=1024)
    assert code == 2 and str(error) == "command line: shards= and shard_size= cannot be combined"
    assert message == b"command line: --shards and --shard-size cannot be combined"


def test_values_that_begin_with_a_dash_stay_values(lines, tmp_path):
    error = refused(lines, tmp_path / "out.txt", seed=1, memory="-5")
    assert str(error).startswith("invalid memory= '-5'"), str(error)


TOO_MANY_THREADS = textwrap.dedent("""
    import resource, sys
    import extshuffle
    source, output = sys.argv[1:]
    try:
        extshuffle.shuffle(source, output, seed=1, threads=100000, memory="64M", progress=False)
    except extshuffle.Error as error:
        print(error.exit_code, error)
""")


def test_threads_the_process_cannot_hold_give_the_tools_out_of_memory_line(binary, tmp_path):
    # Under a 4 GiB address-space limit 100000 threads' stacks cannot be
    # mapped, on every machine: the tool says "out of memory", exit 1; the
    # child of shuffle() must say the same, not die in libgomp (SIGSEGV in
    # the first parallel region, which 200000 lines reach).
    lines = tmp_path / "in.txt"
    lines.write_text("".join(f"{i}\n" for i in range(200000)))
    limit = 4 << 30
    code, message = cli_failure(binary, str(lines), str(tmp_path / "cli.txt"), "--seed", "1", "-j", "100000",
                                "-S", "64M", limit_bytes=limit)
    assert code == 1 and message == b"out of memory: lower --memory or raise the process's memory limit"

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    run = subprocess.run([sys.executable, "-c", TOO_MANY_THREADS, str(lines), str(tmp_path / "out.txt")],
                         capture_output=True, text=True, timeout=300, env=os.environ, preexec_fn=limited)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "1 " + message.decode().replace("--memory", "memory="), run.stderr
    assert not (tmp_path / "out.txt").exists()


UNDECODABLE = b"in\xff\xfe.txt"


def test_undecodable_file_names_as_bytes_str_and_paths(binary, tmp_path):
    directory = os.fsencode(tmp_path)
    source = os.path.join(directory, UNDECODABLE)
    with open(source, "wb") as f:
        f.write(b"".join(b"%d\n" % i for i in range(5000)))
    assert subprocess.run([binary, source, os.path.join(directory, b"cli.txt"), b"--seed", b"9"]).returncode == 0
    expected = (tmp_path / "cli.txt").read_bytes()
    outputs = [os.path.join(directory, b"out\xff-bytes.txt"),
               os.fsdecode(os.path.join(directory, b"out\xff-str.txt")),
               pathlib.Path(os.fsdecode(os.path.join(directory, b"out\xff-path.txt")))]
    for source_as, output in zip([source, os.fsdecode(source), pathlib.Path(os.fsdecode(source))], outputs):
        result = extshuffle.shuffle(source_as, output, seed=9, progress=False)
        with open(output, "rb") as f:
            assert f.read() == expected
        # The result names the files as os.fsdecode does: os.fsencode gives the bytes back.
        assert os.fsencode(result["inputs"][0]["path"]) == source
        assert os.fsencode(result["outputs"][0]["path"]) == os.fsencode(output)
    # A manifest and a temporary directory by undecodable names too.
    manifest = os.path.join(directory, b"manifest\xff.json")
    scratch = os.path.join(directory, b"scratch\xfe")
    os.mkdir(scratch)
    extshuffle.shuffle([source], os.path.join(directory, b"m.txt"), seed=9, manifest=manifest, tmpdir=scratch,
                       progress=False)
    assert os.path.exists(manifest) and os.listdir(scratch) == []


def test_an_undecodable_name_in_a_failure_reaches_the_caller(binary, tmp_path):
    directory = os.fsencode(tmp_path)
    missing = os.path.join(directory, b"missing\xff.txt")
    code, message = cli_failure(binary, missing, os.path.join(directory, b"cli.txt"), b"--seed", b"1")
    with pytest.raises(extshuffle.Error) as caught:
        extshuffle.shuffle(missing, os.path.join(directory, b"out.txt"), seed=1, progress=False)
    assert caught.value.exit_code == code == 1
    # The tool's message, the name's bytes kept (as os.fsdecode holds them).
    assert os.fsencode(str(caught.value)) == message
    assert b"missing\xff.txt" in message


def test_checkpoint_writes_what_the_run_without_it_writes_and_leaves_its_directory_empty(lines, tmp_path):
    """checkpoint=DIR is the tool's --checkpoint (docs/cli.md "Resuming a
    run"): the same bytes as the run without it, DIR's files gone once the
    run succeeds, and the tool's refusals named as the keyword."""
    journal = tmp_path / "journal"
    journal.mkdir()
    plain = extshuffle.shuffle(lines, tmp_path / "plain.txt", seed=11, progress=False)
    resumable = extshuffle.shuffle(lines, tmp_path / "resumable.txt", seed=11, progress=False, checkpoint=journal)
    assert (tmp_path / "resumable.txt").read_bytes() == (tmp_path / "plain.txt").read_bytes()
    assert resumable["records"] == plain["records"] == 1000
    assert sorted(os.listdir(journal)) == []
    with pytest.raises(extshuffle.UsageError) as caught:
        extshuffle.shuffle(lines, None, seed=11, progress=False, checkpoint=journal)
    assert str(caught.value).startswith("checkpoint=: standard output cannot be continued"), caught.value
