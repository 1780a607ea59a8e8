"""Pinned versions of the other software whose source ropelaw's semantics were read from.

One place, so that a dialect's semantics, a rule's references and the tests that run that source
(``.ci/run`` downloads the same pins) name the same version.
"""

from __future__ import annotations

__all__ = ["LLAMACPP_PIN", "LLAMACPP", "LLAMACPP_VENDORED"]

# llama.cpp as llama-cpp-python's sdist vendors it (vendor/llama.cpp): the GGUF reader, the conversion
# and the launch flags were read there, and CI's 'llama.cpp conversion' step runs that conversion.
LLAMACPP_PIN = "llama-cpp-python==0.3.36"
LLAMACPP = f"llama.cpp ({LLAMACPP_PIN})"  # the semantics a GGUF or llama.cpp launch is read with
LLAMACPP_VENDORED = f"llama.cpp as vendored by {LLAMACPP_PIN}"  # rule references
