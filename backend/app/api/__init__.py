"""HTTP layer: dependency aliases and routers."""
