"""The vocabulary every analyzer shares: findings, reports, targets and errors, with the
registry, engine, configuration, cache and settings that the verbs use to run rule families.
"""
