"""Numerics auditor: static scan of model code, runtime audit of modules, checkpoint audit."""
