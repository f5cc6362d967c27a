"""dpaudit.mechanisms: exact noise samplers, randomizers, shuffler, secure aggregation, trees."""

from dpaudit.mechanisms.discrete import discrete_gaussian, discrete_laplace, geometric
from dpaudit.mechanisms.mechanism import (
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponseMechanism,
    SkellamMechanism,
)
from dpaudit.mechanisms.samplers import (
    binomial,
    gaussian,
    k_randomized_response,
    laplace,
    poisson,
    polya,
    randomized_response,
    skellam,
)
from dpaudit.mechanisms.secagg import (
    BUGS as SECAGG_BUGS,
)
from dpaudit.mechanisms.secagg import (
    CentralSecAgg,
    DiscreteGaussianSecAgg,
    LocalSecAgg,
    PolyaSecAgg,
    SecAggParameters,
    SecAggRelease,
    SkellamSecAgg,
)
from dpaudit.mechanisms.shuffle import (
    GaussianShuffleProtocol,
    fmt20_amplification,
    fmt21_local_delta_term,
    gaussian_ldp_sigma,
    permutations,
    shuffle,
)
from dpaudit.mechanisms.shuffle_gd import (
    PgdRelease,
    ShuffleGradientDescent,
    advanced_composition,
    glm_gradients,
    pgd_iterations,
    pgd_round_privacy,
    pgd_step_size,
)
from dpaudit.mechanisms.shuffle_sum import ShuffleSum, ShuffleSumRelease
from dpaudit.mechanisms.tree import (
    BinaryTree,
    TreeRelease,
    TreeStream,
    nodes_containing_leaf,
    paper_tree_depth,
    prefix_cover,
    tree_depth,
)
from dpaudit.mechanisms.vector_sum import (
    BitSumProtocol,
    binomial_count_pld,
)

__all__ = [
    "SECAGG_BUGS",
    "BinaryTree",
    "BitSumProtocol",
    "CentralSecAgg",
    "DiscreteGaussianMechanism",
    "DiscreteGaussianSecAgg",
    "DiscreteLaplaceMechanism",
    "GaussianMechanism",
    "GaussianShuffleProtocol",
    "LaplaceMechanism",
    "LocalSecAgg",
    "PgdRelease",
    "PolyaSecAgg",
    "RandomizedResponseMechanism",
    "SecAggParameters",
    "SecAggRelease",
    "ShuffleGradientDescent",
    "ShuffleSum",
    "ShuffleSumRelease",
    "SkellamMechanism",
    "SkellamSecAgg",
    "TreeRelease",
    "TreeStream",
    "advanced_composition",
    "binomial",
    "binomial_count_pld",
    "discrete_gaussian",
    "discrete_laplace",
    "fmt20_amplification",
    "fmt21_local_delta_term",
    "gaussian",
    "gaussian_ldp_sigma",
    "geometric",
    "glm_gradients",
    "k_randomized_response",
    "laplace",
    "nodes_containing_leaf",
    "paper_tree_depth",
    "permutations",
    "pgd_iterations",
    "pgd_round_privacy",
    "pgd_step_size",
    "poisson",
    "polya",
    "prefix_cover",
    "randomized_response",
    "shuffle",
    "skellam",
    "tree_depth",
]
