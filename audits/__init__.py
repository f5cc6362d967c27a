"""dpaudit.audits: the catalog pairing each algorithm with accountants, neighbours and an auditor.

Importing this package registers every catalog entry in `dpaudit.registry.AUDITS`
(`catalog` holds the data model, `run` executes an entry, `build` has shared building blocks;
`mab` the multi-armed entries, `experiment` seed 000's, `contextual` the linear contextual ones, `glm` seed 002's).
"""

from dpaudit.audits import mab  # noqa: F401  (registration side effects)
from dpaudit.audits import experiment  # noqa: F401,E402
from dpaudit.audits import contextual  # noqa: F401,E402
from dpaudit.audits import glm  # noqa: F401,E402
