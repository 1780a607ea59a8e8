"""One module per ``ropelaw`` subcommand; see :mod:`ropelaw.cli`."""
