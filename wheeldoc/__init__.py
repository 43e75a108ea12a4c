"""wheeldoc: a build-and-environment doctor for CUDA wheel installs."""

__version__ = "0.2.0"

# Where the project lives; README.md links to files as f"{REPOSITORY}/blob/main/<path>" so they
# work on the package index's page (tests/test_packaging.py checks every link).
REPOSITORY = "https://github.com/wheeldoc/wheeldoc"
