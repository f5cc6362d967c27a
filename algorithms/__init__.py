"""dpaudit.algorithms: bandit environments and the private algorithms of the five papers, by family.

`mab/` (multi-armed), `linear/` (linear contextual), `glm/` (GLM contextual), `conse/` (adaptive
experiments): each holds its environment, algorithms, privacy declarations and `registration`.
Every algorithm has the shape of `interface.PrivateAlgorithm` (`run`, `target`, `privacy(horizon, ...)`),
the one a user's own algorithm implements too; `privacy` holds the declaration model (`Privacy`, `Guarantee`);
`shuffle_claims` holds what the linear and GLM papers state about the shuffled bit sum they share.
Importing this package registers every algorithm in `dpaudit.registry.ALGORITHMS`.
"""

from dpaudit.algorithms.conse import registration as _conse  # noqa: F401  (registration side effects)
from dpaudit.algorithms.glm import registration as _glm  # noqa: F401
from dpaudit.algorithms.linear import registration as _linear  # noqa: F401
from dpaudit.algorithms.mab import registration as _mab  # noqa: F401

__all__: list[str] = []
