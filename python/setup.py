"""The stoker Python package: pure Python, numpy at run time, torch optional.

Installs offline with `pip install ./python` (setuptools is the only build need, and pip uses the
installed one, since there is no pyproject.toml asking for an isolated build). That is the package
alone: its server comes from STOKER_JAR, or, installed editable (`-e`), from the checkout's
./stoker. `./stoker wheel DIR` writes the wheel that carries the server and its runtime.
"""
import os

from setuptools import setup

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="stoker",
    version="0.1.0",
    description="Stoker's data loader for Python training loops: batches from the JVM through shared memory, no copy",
    long_description=long_description,
    long_description_content_type="text/markdown",
    packages=["stoker"],
    package_data={"stoker": ["_schema.json", "py.typed"]},
    python_requires=">=3.9",
    install_requires=["numpy"],
    extras_require={"torch": ["torch"]},
)
