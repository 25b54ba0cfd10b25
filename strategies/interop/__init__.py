"""Strategies to and from other tools' formats (:mod:`strategies.interop.openspiel`)."""
