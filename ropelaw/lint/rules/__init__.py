"""Lint rules: one file per family (RV values, RL lengths, RS schemes, RP2xx dtype)."""
