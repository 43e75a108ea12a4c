"""wheeldoc: a build-and-environment doctor for CUDA wheel installs."""

__version__ = "0.1.0"
