"""Measuring strategies: exact and sampled best responses, LBR, cross-play, the translation lab."""
