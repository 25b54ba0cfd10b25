"""Where work runs: in this process, a local process pool, or Ray (matches and grafts alike)."""
