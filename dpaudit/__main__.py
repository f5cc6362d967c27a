import sys

from dpaudit.cli import main

sys.exit(main())
