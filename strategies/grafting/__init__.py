"""Strategy grafting: enumerated games, hold'em over a deal pool, the Leduc experiment."""
