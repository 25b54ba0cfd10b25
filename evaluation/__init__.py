"""Evaluating agents: duplicate matches (``acpc-match``), the estimators, log tools and ``acpc-
arena``.
"""
