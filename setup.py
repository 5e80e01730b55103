"""Build the C extension symplectic._core from csrc/core/*.c (the C core) and csrc/binding/*.c (its
CPython/NumPy binding, which includes the core's headers); all metadata is in pyproject.toml."""
import glob
import os

import numpy
from setuptools import Extension, setup

CORE, BINDING = os.path.join("csrc", "core"), os.path.join("csrc", "binding")
# the binding's objects first, then the core's: the link order of the one flat csrc/ before
sources = sorted(glob.glob(os.path.join(BINDING, "*.c"))) + sorted(glob.glob(os.path.join(CORE, "*.c")))
# the headers: an in-place rebuild after a change to one of them recompiles (setuptools does
# not scan #include; without this a worker header such as sym_gtree_kernel.h went stale)
headers = sorted(glob.glob(os.path.join(BINDING, "*.h"))) + sorted(glob.glob(os.path.join(CORE, "*.h")))
# -falign-loops=32: the small dense LU kernels ran up to 1.6x slower when an unrelated change
# moved their inner loops across a 32-byte boundary (measured on AMD EPYC, gcc 12).
extra = ["-std=c99", "-O3", "-falign-loops=32", "-Wall", "-Wextra"]
if os.environ.get("SYMPLECTIC_SANITIZE"):
    # Debug build for the sanitizer run (.ci/sanitize): ASan + UBSan.
    extra = ["-std=c99", "-O1", "-g", "-fno-omit-frame-pointer", "-Wall", "-Wextra",
             "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]

setup(
    ext_modules=[
        Extension(
            "symplectic._core",
            sources=sources,
            depends=headers,
            include_dirs=[BINDING, CORE, numpy.get_include()],
            extra_compile_args=extra,
            extra_link_args=["-fsanitize=address,undefined"] if os.environ.get("SYMPLECTIC_SANITIZE") else [],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        )
    ]
)
