"""Workflows built on the engine: each module is a recipe with a `build(deps)` at the bottom."""
