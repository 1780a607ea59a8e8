"""RE1xx: config files a directory scan could not use (``ropelaw lint DIR``).

A file named on the command line that cannot be read or parsed is bad input: one line on
stderr, exit 2. A file found while scanning a directory is reported as one of these findings
instead, so one broken file does not hide the findings of the others (exit 1).
Files that parse but hold no RoPE settings (a CI workflow, a tokenizer config) are skipped
and counted in the summary.
"""

from __future__ import annotations

from ...findings import Finding, define_rule

UNREADABLE = define_rule(
    "RE101", "unreadable-config", "error",
    "a config file could not be read as text",
    what="Reports a *.json / *.yaml / *.yml / *.toml file found in a directory scan that cannot be read: "
         "an I/O error, a binary file, text that is not UTF-8, a file over 16 MiB, or a path that is not a "
         "regular file (a FIFO, a device such as /dev/zero, a socket: refused before reading).",
    why="A config the linter cannot read is a config nobody checked.",
    example="configs/model.json containing safetensors bytes",
    fix="Fix or remove the file, or keep binary files out of the linted directory.",
    gap="file",
)
MALFORMED = define_rule(
    "RE102", "malformed-config", "error",
    "a config file is not valid JSON, YAML or TOML, or its top level is not a mapping",
    what="Reports a file found in a directory scan whose parser fails (truncated JSON, a YAML syntax error, "
         "invalid TOML) or whose top level is a list or scalar.",
    why="transformers and training launchers fail on the same file at start-up, or read only part of it.",
    example='{"hidden_size": 4096, "rope_theta": ',
    fix="Fix the syntax at the position in the message.",
    gap="file",
)


DIRECTORY_NOT_SCANNED = define_rule(
    "RE103", "config-directory-not-scanned", "warning",
    "a directory under a linted path was not entered (unreadable, too long a path, a symbolic link)",
    what="Reports a directory found while scanning for configs that was not searched: one the operating system "
         "refused to list (permissions, an I/O error), one whose path is longer than the system allows (PATH_MAX), "
         "or a symbolic link to a directory (not followed: it may point outside the tree or back into it). "
         "Hidden directories (.git, .venv) are skipped by design and not reported.",
    why="Configs in a directory that was never listed were never linted; the scan must not read as \"All checks "
        "passed\".",
    example="configs/shared -> ../../common/configs (a symlinked directory)",
    fix="Make the directory readable, or pass the symlink's target (or the directory itself) on the command line; "
        "to accept the gap, --ignore RE103.",
    gap="directory",
)


def finding_for(path: str, message: str) -> Finding:
    """RE101 or RE102 for a UsageError message from the loader."""
    low = message.lower()
    rule = MALFORMED if ("malformed" in low or "top level" in low) else UNREADABLE
    text = message[len(path) + 2:] if message.startswith(path + ": ") else message
    return Finding.of(rule, text, path=path, line=1, column=1)


INTERNAL_ERROR = define_rule(
    "RE104", "internal-error", "error",
    "ropelaw failed while reading or checking this file: a bug in ropelaw, not in the config",
    what="Reports a file on which ropelaw itself failed (an exception that is not a declared bad-input error: a "
         "KeyError in a dialect, a TypeError in a rule). The other files of the scan are still linted, and the "
         "command exits 3 at the end (docs/usage.md: exit codes). It is never reported for a config that is "
         "malformed: that is RE102.",
    why="A failure of the linter is not a finding about the config, and must not read as \"Fix the syntax\"; "
        "nothing was checked in that file.",
    example="a valid config whose preset ropelaw stores without a default (KeyError: 'scaling_factor')",
    fix="Report it to ropelaw with the file and the traceback (--debug or ROPELAW_DEBUG=1 prints it); "
        "the finding cannot be ignored with --ignore.",
    filterable=False,
)


def internal_finding(path: str, exc: BaseException) -> Finding:
    """RE104 for an exception that is ropelaw's own failure on ``path``."""
    from ...errors import internal_error_line

    return Finding.of(INTERNAL_ERROR, f"ropelaw failed on this file: {internal_error_line(exc)}",
                      path=path, line=1, column=1)
