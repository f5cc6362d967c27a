"""dpaudit.mechanisms: exact noise samplers, randomizers, shuffler, secure aggregation, trees."""
