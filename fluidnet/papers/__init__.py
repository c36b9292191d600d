"""One module per source paper: its figures, tables and checked targets (see fluidnet.registry)."""
