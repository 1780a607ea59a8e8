"""Static-scan input rules (RE001-RE004): files that could not be read, parsed or fully analysed.

Raised by :mod:`ropelaw.audit.static`; such a file is reported and skipped, never a crash.
"""

from __future__ import annotations

from ...findings import define_rule

SYNTAX_ERROR = define_rule(
    "RE001", "syntax-error", "error",
    "the file is not valid Python for this interpreter and was skipped",
    what="Reports a file that `ast.parse` rejects (the message carries the parser's own words and position).",
    why="A file that cannot be parsed cannot be checked: a rotary bug in it would go unseen.",
    example="def forward(self, x:\n    return x",
    fix="Fix the syntax error, or exclude the file from the scan (pass only the files you mean).",
    references=("Python language reference: https://docs.python.org/3/reference/grammar.html",),
    gap="file",
)

UNDECODABLE_FILE = define_rule(
    "RE002", "undecodable-file", "error",
    "the file's bytes are not text in its declared encoding (UTF-8 by default) and it was skipped",
    what="Reports a .py file whose bytes cannot be decoded (PEP 263 coding cookie, else UTF-8).",
    why="Undecodable source cannot be parsed, so it cannot be checked.",
    example="a .py file saved as Latin-1 with no `# -*- coding: latin-1 -*-` line",
    fix="Save the file as UTF-8, or declare its encoding on the first or second line (PEP 263).",
    references=("PEP 263, Defining Python Source Code Encodings",),
    gap="file",
)

UNREADABLE_FILE = define_rule(
    "RE003", "unreadable-file", "error",
    "the file could not be read (permissions, a broken link, an I/O error) and was skipped",
    what="Reports a file found while scanning a directory that the operating system refused to read.",
    why="A file that cannot be read cannot be checked.",
    example="src/model/rotary.py with mode 000, or a dangling symbolic link",
    fix="Make the file readable (chmod u+r), or remove the broken link.",
    references=(),
    gap="file",
)

INCOMPLETE_ANALYSIS = define_rule(
    "RE004", "incomplete-analysis", "error",
    "the file could not be fully analysed (too large, or nested too deeply) and may hide findings",
    what="Reports a .py file the checker did not analyse to the end: larger than --max-file-size (default "
         "4 MiB; not read), holding more than 400,000 names and numbers (its syntax tree would take gigabytes; "
         "counted before parsing), or an expression nested so deeply (a sum of thousands of terms) that even "
         "the deep-recursion walk stopped; findings before that point are still reported.",
    why="A partial analysis must never read as \"All checks passed\": a rotary bug after the deep expression "
        "would go unseen.",
    example="weights = w0 + w1 + ... + w2899  # 2,900 terms: a 2,900-deep expression tree",
    fix="Split the expression (sum(...) over a list), raise --max-file-size for a genuinely large file, or "
        "exclude generated files from the scan.",
    references=(),
    gap="file",
)

DIRECTORY_NOT_SCANNED = define_rule(
    "RE005", "directory-not-scanned", "warning",
    "a directory under a scanned path was not entered (unreadable, too long a path, a symbolic link)",
    what="Reports a directory found while scanning that was not searched for .py files: one the operating "
         "system refused to list (permissions, an I/O error), one whose path is longer than the system "
         "allows (PATH_MAX), or a symbolic link to a directory (not followed: it may point outside the tree "
         "or back into it).",
    why="Files in a directory that was never listed were never checked; a scan that skipped them must not "
        "read as \"All checks passed\".",
    example="src/vendor -> /opt/vendor (a symlinked directory), or src/private with mode 000",
    fix="Make the directory readable, or pass the symlink's target (or the directory itself) on the command "
        "line; to accept the gap, --ignore RE005.",
    references=(),
    gap="directory",
)
