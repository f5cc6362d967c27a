"""dpaudit.audits: the catalog pairing each algorithm with accountants, neighbours and an auditor.

Importing this package registers every catalog entry in `dpaudit.registry.AUDITS`.
"""
