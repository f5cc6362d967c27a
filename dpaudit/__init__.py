"""dpaudit: differential-privacy claims of bandit algorithms, made checkable.

Core package: privacy notions and accountants (`dpaudit.accounting`), the empirical
auditor (`dpaudit.audit`), regret statistics (`dpaudit.regret`), reports and the CLI.
The sub-packages `dpaudit.mechanisms`, `dpaudit.algorithms` and `dpaudit.audits` live in
the top-level folders `mechanisms/`, `algorithms/` and `audits/`; core never imports them.
"""

__version__ = "0.1.0"

__all__ = ["__version__", "register_audit"]


def __getattr__(name: str):
    """`dpaudit.register_audit` (from `dpaudit.user_audits`), imported on first use so `import dpaudit` stays cheap."""
    if name == "register_audit":
        from dpaudit.user_audits import register_audit

        return register_audit
    raise AttributeError(f"module 'dpaudit' has no attribute {name!r}")
