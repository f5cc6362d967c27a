"""The empirical auditor: a confidence lower bound on epsilon for a black-box mechanism."""
