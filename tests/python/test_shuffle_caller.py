"""The child that runs shuffle()'s Job dies with its caller: a caller killed
(SIGKILL, SIGTERM) while the child writes the output leaves no process
running and no output, and a child whose caller ended before it could ask
to die with it ends at once without running the Job.

The child is held inside its first write of the output's temporary file by
the fault shim (tests/reliability/fault_shim.c, pause-write), whose marker
says it is there: the caller is killed while the run is certainly under way,
and the child's end is awaited on a pidfd, never timed."""

import os
import pickle
import select
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import extshuffle

CALLER = textwrap.dedent("""
    import sys
    import extshuffle
    extshuffle.shuffle(sys.argv[1], sys.argv[2], seed=1, progress=False)
""")


def wait_for_file(path, process, seconds=120):
    """Until `path` exists (the shim's marker), or `process` ends first."""
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"no {path} after {seconds} s"
        time.sleep(0.01)


def children_of(pid):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def ended_within(pidfd, seconds):
    return bool(select.select([pidfd], [], [], seconds)[0])


@pytest.fixture
def fault_shim():
    path = os.environ.get("EXTSHUFFLE_FAULT_SHIM")
    if not path or not os.path.exists(path):
        pytest.skip("the fault shim is not built (EXTSHUFFLE_FAULT_SHIM)")
    return path


@pytest.mark.parametrize("caller_signal", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_caller_leaves_no_run_and_no_output(fault_shim, tmp_path, caller_signal):
    source = tmp_path / "in.txt"
    source.write_text("".join(f"{i}\n" for i in range(200000)))
    destination = tmp_path / "dest"
    destination.mkdir()
    output = destination / "out.txt"
    marker, release = tmp_path / "paused", tmp_path / "release"
    # Every write into the destination's directory (the output's anonymous
    # or hidden temporary file) pauses.
    env = dict(os.environ, LD_PRELOAD=fault_shim, EXTSHUFFLE_FAULT="pause-write",
               EXTSHUFFLE_FAULT_PATH=f"{destination}/", EXTSHUFFLE_FAULT_MARKER=str(marker),
               EXTSHUFFLE_FAULT_RELEASE=str(release))
    caller = subprocess.Popen([sys.executable, "-c", CALLER, str(source), str(output)], env=env,
                              stderr=subprocess.PIPE)
    child_pid = None
    try:
        wait_for_file(marker, caller)  # the child is inside its first write of the output
        (child_pid,) = children_of(caller.pid)
        pidfd = os.pidfd_open(child_pid)
        caller.send_signal(caller_signal)
        caller.wait()
        assert ended_within(pidfd, 60), "the child still runs 60 s after its caller was killed"
        os.close(pidfd)
        child_pid = None
    finally:
        release.touch()  # a child that outlived its caller (the defect) may go on, and is then ended
        if child_pid is not None:
            os.kill(child_pid, signal.SIGKILL)
        if caller.poll() is None:
            caller.kill()
            caller.wait()
    # No output, and no temporary left (the tool's SIGTERM cleanup).
    assert os.listdir(destination) == []


def run_child(words, caller):
    """The child as shuffle() starts it, told that `caller` started it;
    returns its CompletedProcess and the outcome it wrote (b"" for none)."""
    outcome_read, outcome_write = os.pipe()
    arguments_read, arguments_write = os.pipe()
    with os.fdopen(arguments_write, "wb") as arguments:
        arguments.write(pickle.dumps(words))
    package = os.path.dirname(os.path.dirname(extshuffle.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([package, os.environ.get("PYTHONPATH", "")]))
    try:
        child = subprocess.run(
            [sys.executable, "-c", "from extshuffle._shuffle import _child_main; _child_main()",
             str(outcome_write), str(arguments_read), str(caller)],
            pass_fds=(outcome_write, arguments_read), env=env, capture_output=True, timeout=60)
    finally:
        os.close(outcome_write)
        os.close(arguments_read)
    with os.fdopen(outcome_read, "rb") as outcomes:
        return child, outcomes.read()


def test_a_child_whose_caller_already_ended_runs_nothing(tmp_path):
    # Told of a caller that is not its parent, the child sees what it sees
    # when the caller died before its request to die with it took hold (it
    # was adopted by another process): it runs nothing.
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n")
    output = tmp_path / "out.txt"
    words = [b"--seed=1", b"--output=" + os.fsencode(output), b"--", os.fsencode(source)]
    child, outcome = run_child(words, os.getppid())
    assert child.returncode == 1 and child.stderr == b"" and outcome == b"", child
    assert not output.exists()
    # Told of its real parent, the same child runs the Job.
    child, outcome = run_child(words, os.getpid())
    assert child.returncode == 0 and outcome != b"", child
    assert sorted(output.read_text().split()) == ["a", "b"]
