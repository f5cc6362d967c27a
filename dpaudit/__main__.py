import sys

from dpaudit.cli import main

__all__: list[str] = []

sys.exit(main())
