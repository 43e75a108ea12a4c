"""Commands: each reads its inputs through sources, runs a rule family, returns a Report."""

from __future__ import annotations

import importlib
from typing import Callable

COMMANDS = {
    "check": "wheeldoc.commands.check",
    "abi": "wheeldoc.commands.abi",
    "kernels": "wheeldoc.commands.kernels",
    "doctor": "wheeldoc.commands.doctor",
    "image": "wheeldoc.commands.image",
}


def dispatch(name: str) -> Callable:
    try:
        module = importlib.import_module(COMMANDS[name])
    except ModuleNotFoundError as e:
        if e.name != COMMANDS[name]:
            raise
        from wheeldoc.commands.common import not_yet

        return not_yet(name)
    return module.run
