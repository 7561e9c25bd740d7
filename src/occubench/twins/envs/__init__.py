"""The package's twins, one module per environment (``occubench.twins`` finds them)."""
