"""Abstract games as flat arrays, the testbeds (N-card Kuhn, the half-street games) and game size.
"""
