"""Case declarations, one module per family (each exposes `declare() -> list[core.Decl]`)."""
