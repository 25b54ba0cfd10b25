"""Strategy tables: the file format, purification and hot-swap."""
