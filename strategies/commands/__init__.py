"""The work behind ``acpc-strategy``'s sub-commands (:mod:`strategies.cli` parses and dispatches).
"""
