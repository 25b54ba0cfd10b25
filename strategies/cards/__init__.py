"""Card-abstraction builders: the potential-aware hold'em buckets and the hand-strength tables."""
