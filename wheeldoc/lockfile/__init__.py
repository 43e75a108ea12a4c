"""Resolved lockfiles (uv.lock, pylock.toml, requirements files): readers, the facts per target,
the WD1xx rules and the fixes written for the tool that made the lock.
"""
