"""Learned bet sizes (the multiplayer betting-game transformation)."""
