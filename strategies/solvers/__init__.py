"""Solvers of abstract games: the CFR family, CFR+ on Royal's public tree, the sequence-form LP,
deal pools.
"""
