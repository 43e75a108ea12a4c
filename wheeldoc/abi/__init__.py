"""`wheeldoc abi`: an extension's binaries against a torch build through a model of ld.so,
the torch sides (wheel, requirement, index), the WD2xx rules, the verb and its view.
"""
