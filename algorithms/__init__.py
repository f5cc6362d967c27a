"""dpaudit.algorithms: bandit environments and the private algorithms of the five papers.

Importing this package registers every algorithm in `dpaudit.registry.ALGORITHMS`
(multi-armed ones in `register_mab`, contextual ones in `register_contextual`).
"""

from dpaudit.algorithms import register_contextual, register_mab  # noqa: F401  (registration side effects)
