"""The verbs that belong to no single family (`check`, `rule`, `cache`) and the table that maps each verb
name to the module that runs it.
"""

from __future__ import annotations

import importlib
from typing import Callable

COMMANDS = {
    "check": "wheeldoc.verbs.check",
    "abi": "wheeldoc.abi.command",
    "kernels": "wheeldoc.kernels.command",
    "doctor": "wheeldoc.doctor.command",
    "image": "wheeldoc.doctor.command_image",
    "cache": "wheeldoc.verbs.cache",
    "index": "wheeldoc.abi.command_index",
}


def dispatch(name: str) -> Callable:
    try:
        module = importlib.import_module(COMMANDS[name])
    except ModuleNotFoundError as e:
        if e.name != COMMANDS[name]:
            raise
        from wheeldoc.core.settings import not_yet

        return not_yet(name)
    return module.run
