"""The wheel's platform tag is the one its ELF files need (bin/manylinux.py), and the wheel
answers for itself: one version, help without a build."""

import glob
import os
import re
import shutil
import subprocess
import sys

import pytest

import stoker
from conftest import PACKAGE_PARENT, ROOT

sys.path.insert(0, os.path.join(ROOT, "bin"))
import manylinux  # noqa: E402

needs_tools = pytest.mark.skipif(not (shutil.which("gcc") and shutil.which("readelf")), reason="gcc and readelf (binutils) are needed")


@needs_tools
@pytest.mark.parametrize("path", [sys.executable, "/usr/lib/x86_64-linux-gnu/libturbojpeg.so.0",
                                  "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"])
def test_elf_needs_read_as_readelf_reads_them(path):
    path = os.path.realpath(path)
    if not os.path.exists(path):
        pytest.skip(f"{path} is not installed")
    out = subprocess.run(["readelf", "-V", "-d", "-W", path], capture_output=True, text=True, check=True).stdout
    elf = manylinux.Elf(path)
    assert elf.needed == re.findall(r"\(NEEDED\).*\[(.*)\]", out)
    needs = out.split("Version needs section", 1)[1] if "Version needs section" in out else ""
    assert {n for names in elf.versions.values() for n in names} == set(re.findall(r"Name: (\S+)\s+Flags", needs))
    assert elf.glibc() == max(tuple(map(int, v.split("."))) for v in re.findall(r"Name: GLIBC_([0-9.]+)\s", needs))


def compile_library(tmp_path, name, code, *libs):
    src = tmp_path / f"{name}.c"
    src.write_text(code)
    out = tmp_path / "runtime" / f"lib{name}.so"
    out.parent.mkdir(exist_ok=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(out), str(src), *libs], check=True, capture_output=True)
    return out


@needs_tools
def test_tag_is_the_highest_glibc_the_files_import(tmp_path):
    compile_library(tmp_path, "old", "#include <string.h>\nvoid *f(void *a, const void *b, size_t n) { return memcpy(a, b, n); }\n")
    assert manylinux.platform_tag(tmp_path / "runtime") == "manylinux_2_17_x86_64", "older needs still get the oldest tag pip knows"
    # getrandom came with glibc 2.25
    compile_library(tmp_path, "new", "#include <sys/random.h>\nlong f(void *b) { return getrandom(b, 8, 0); }\n")
    assert manylinux.platform_tag(tmp_path / "runtime") == "manylinux_2_25_x86_64"


@needs_tools
def test_a_library_linked_from_the_system_outside_the_policy_fails_the_build(tmp_path):
    lib = compile_library(tmp_path, "decoder", "#include <stdio.h>\n#include <jpeglib.h>\nvoid *f(void) { return jpeg_std_error(0); }\n", "-ljpeg")
    with pytest.raises(ValueError, match=r"libdecoder\.so: links libjpeg\.so\.62, which is neither bundled"):
        manylinux.platform_tag(lib.parent)
    shutil.copy(os.path.realpath("/usr/lib/x86_64-linux-gnu/libjpeg.so.62"), lib.parent / "libjpeg.so.62")
    assert manylinux.platform_tag(lib.parent) == "manylinux_2_17_x86_64", "bundled beside it, it is the wheel's own"


def test_an_installed_wheel_needs_no_more_than_its_tag():
    runtime = os.path.join(os.path.dirname(stoker.__file__), "_runtime")
    wheel = glob.glob(os.path.join(PACKAGE_PARENT, f"stoker-{stoker.__version__}.dist-info", "WHEEL"))
    if not os.path.isdir(runtime) or not wheel:
        pytest.skip("not an installed wheel")
    with open(wheel[0]) as f:
        tag = re.search(r"^Tag: py3-none-(\S+)$", f.read(), re.M).group(1)
    assert manylinux.platform_tag(runtime) == tag
    glibc = tuple(int(p) for p in tag.split("_")[1:3])
    for elf in manylinux.elf_files(runtime):
        assert (elf.glibc() or (0,)) <= glibc, f"{elf.path} needs glibc {elf.glibc()}"


def test_one_version_everywhere():
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT)
    r = subprocess.run([sys.executable, "-m", "stoker", "--version"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"stoker {stoker.__version__}"
    setup = os.path.join(ROOT, "python", "setup.py")
    with open(setup) as f:
        assert f'version="{stoker.__version__}"' in f.read()


def test_stoker_help_lists_wheel_and_wheel_help_answers_without_a_build():
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT)
    r = subprocess.run([sys.executable, "-m", "stoker", "--help"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and re.search(r"^\s+wheel\s", r.stdout, re.M), r.stdout
    launcher = os.path.join(ROOT, "stoker")
    # the launcher answers before it looks for a JDK or a build: no JDK on the PATH, an empty JAVA_HOME
    bare = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "JAVA_HOME": "/nonexistent"}
    w = subprocess.run([launcher, "wheel", "--help"], capture_output=True, text=True, env=bare, timeout=10)
    assert w.returncode == 0 and w.stdout.startswith("usage: stoker wheel OUT_DIR") and w.stderr == "", w.stderr
    bad = subprocess.run([launcher, "wheel", "--bogus"], capture_output=True, text=True, env=bare, timeout=10)
    assert bad.returncode == 2 and "unknown option --bogus" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("glibc", [17, 28, 34, 35])
def test_pip_takes_the_wheel_on_the_clusters_systems(glibc, tmp_path):
    """RHEL/Rocky 8 (glibc 2.28), 9 (2.34), Ubuntu 22.04 (2.35) and the oldest manylinux systems
    (2.17): pip there takes every manylinux_2_N tag up to its glibc, as it is asked here."""
    wheel = os.environ.get("STOKER_TEST_WHEEL")
    if not wheel:
        pytest.skip("STOKER_TEST_WHEEL names no built wheel (.ci/run sets it)")
    arch = re.search(r"_(x86_64|aarch64)\.whl$", wheel).group(1)
    platforms = [a for n in range(glibc, 16, -1) for a in ("--platform", f"manylinux_2_{n}_{arch}")]
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-", "--target", str(tmp_path / "t"),
                        "--no-index", "--no-deps", "--only-binary=:all:", *platforms, "--find-links", os.path.dirname(wheel), "stoker"],
                       capture_output=True, text=True)
    if "No module named pip" in r.stderr:
        pytest.skip("pip is not installed")
    assert r.returncode == 0, r.stderr
    import json
    chosen = [i["download_info"]["url"].rsplit("/", 1)[-1] for i in json.loads(r.stdout)["install"]]
    assert chosen == [os.path.basename(wheel)]


def test_the_installed_package_carries_its_description_and_help():
    metadata = glob.glob(os.path.join(PACKAGE_PARENT, f"stoker-{stoker.__version__}.dist-info", "METADATA"))
    if not metadata or not os.path.isdir(os.path.join(os.path.dirname(stoker.__file__), "_runtime")):
        pytest.skip("not an installed wheel")
    with open(metadata[0], encoding="utf-8") as f:
        text = f.read()
    assert "Description-Content-Type: text/markdown" in text and "help(stoker.Loader)" in text
    assert os.path.isfile(os.path.join(os.path.dirname(stoker.__file__), "_schema.json"))
