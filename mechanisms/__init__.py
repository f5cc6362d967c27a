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
    CentralSecAgg,
    DiscreteGaussianSecAgg,
    LocalSecAgg,
    PolyaSecAgg,
    SecAggParameters,
    SecAggRelease,
    SkellamSecAgg,
)
from dpaudit.mechanisms.tree import (
    BinaryTree,
    TreeRelease,
    TreeStream,
    nodes_containing_leaf,
    paper_tree_depth,
    prefix_cover,
    tree_depth,
)
from dpaudit.mechanisms.shuffle import (
    GaussianShuffleProtocol,
    fmt20_amplification,
    fmt21_local_delta_term,
    gaussian_ldp_sigma,
    permutations,
    shuffle,
)
from dpaudit.mechanisms.shuffle_sum import ShuffleSum, ShuffleSumRelease
from dpaudit.mechanisms.vector_sum import (
    BitSumProtocol,
    binomial_count_pld,
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

__all__ = ["discrete_gaussian", "discrete_laplace", "geometric", "DiscreteGaussianMechanism", "DiscreteLaplaceMechanism", "GaussianMechanism", "LaplaceMechanism", "RandomizedResponseMechanism", "SkellamMechanism", "binomial", "gaussian", "k_randomized_response", "laplace", "poisson", "polya", "randomized_response", "skellam", "SECAGG_BUGS", "CentralSecAgg", "DiscreteGaussianSecAgg", "LocalSecAgg", "PolyaSecAgg", "SecAggParameters", "SecAggRelease", "SkellamSecAgg", "BinaryTree", "TreeRelease", "TreeStream", "nodes_containing_leaf", "paper_tree_depth", "prefix_cover", "tree_depth", "GaussianShuffleProtocol", "fmt20_amplification", "fmt21_local_delta_term", "gaussian_ldp_sigma", "permutations", "shuffle", "ShuffleSum", "ShuffleSumRelease", "BitSumProtocol", "binomial_count_pld", "PgdRelease", "ShuffleGradientDescent", "advanced_composition", "glm_gradients", "pgd_iterations", "pgd_round_privacy", "pgd_step_size"]
