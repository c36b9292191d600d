"""One package per source paper: its figures, tables and checked targets.

The registry (:mod:`fluidnet.papers.registry`) finds the packages and runs their items.
"""
