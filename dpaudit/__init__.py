"""dpaudit: differential-privacy claims of bandit algorithms, made checkable.

Core package: privacy notions and accountants (`dpaudit.accounting`), the empirical
auditor (`dpaudit.audit`), regret statistics (`dpaudit.regret`), reports and the CLI.
The sub-packages `dpaudit.mechanisms`, `dpaudit.algorithms` and `dpaudit.audits` live in
the top-level folders `mechanisms/`, `algorithms/` and `audits/`; core never imports them.
"""

__version__ = "0.1.0"
