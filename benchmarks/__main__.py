"""`python -m benchmarks list` and `python -m benchmarks run NAME [ARGS]` (benchmarks.runner)."""

import sys

from benchmarks.runner import main

sys.exit(main())
