"""Estimators of duplicate results: exact and sampled agents, the numba fast walk, all-in EV, exact
matches.
"""
