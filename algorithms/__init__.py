"""dpaudit.algorithms: bandit environments and the private algorithms of the five papers.

Importing this package registers every algorithm in `dpaudit.registry.ALGORITHMS`.
"""
