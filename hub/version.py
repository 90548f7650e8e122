"""verihub's version, importable without loading anything else."""

__all__ = ["__version__"]

__version__ = "0.1.0"
