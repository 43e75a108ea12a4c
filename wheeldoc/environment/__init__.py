"""An installed Python environment and its machine: distributions, the torch build, shared
objects and their GPU code (the library scan), the driver, and the WD5xx rules.
"""
