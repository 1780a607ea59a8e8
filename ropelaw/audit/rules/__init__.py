"""Static-audit rules (RP1xx) and runtime/checkpoint rules (RP3xx): one file per family."""
