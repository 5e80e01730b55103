#!/usr/bin/env python3
"""The symplectic benchmark suite (benchmarks/suite/): everything side by side, in one run.

    python benchmarks/run.py [--quick] [--out DIR] [--results-md FILE] [--only SECTIONS]

See benchmarks/README.md and `python benchmarks/run.py --help`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from suite.__main__ import main  # noqa: E402

if __name__ == "__main__":
    main()
