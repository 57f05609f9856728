"""The package installs offline with pip and needs nothing but numpy at run time."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT


def test_pip_installs_the_package_offline(tmp_path):
    venv = tmp_path / "venv"
    r = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("no venv module here: " + r.stderr.strip().splitlines()[-1])
    python = str(venv / "bin" / "python")
    pip = subprocess.run([python, "-m", "pip", "install", "--no-index", "--no-build-isolation", os.path.join(ROOT, "python")],
                         capture_output=True, text=True, cwd=tmp_path)
    if "No module named pip" in pip.stderr:
        pytest.skip("pip is not installed")
    assert pip.returncode == 0, pip.stdout + pip.stderr
    # numpy alone at run time: torch made unimportable
    code = "import sys; sys.modules['torch'] = None; import stoker; print(stoker.__file__)"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(str(venv))


def test_python_m_stoker_runs_the_command_line(tmp_path):
    from conftest import PACKAGE_PARENT
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT)
    r = subprocess.run([sys.executable, "-m", "stoker", "bench", "synthetic", "--samples", "5000", "--batch", "100", "--json"],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", "nothing on stderr for a success (the JVM's notice left out)"
    assert '"samples":5000' in r.stdout.replace(" ", ""), r.stdout
    bad = subprocess.run([sys.executable, "-m", "stoker", "bench", "tokens", str(tmp_path / "missing.bin")],
                         capture_output=True, text=True, cwd=tmp_path, env=env)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "missing.bin" in bad.stderr, bad.stderr
