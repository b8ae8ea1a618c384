"""A short hash of bytes: a file's content (shared analyses, the cache) or a context key's parts."""

from __future__ import annotations


def content_digest(data: bytes) -> str:
    """A short hash of a file's bytes: 128 bits of BLAKE2b (fast, and _blake2 imports in well under a
    millisecond, where hashlib loads OpenSSL)."""
    try:
        from _blake2 import blake2b
    except ModuleNotFoundError:  # an interpreter built without it; any other failure (memory) is not hidden
        from hashlib import blake2b
    return blake2b(data, digest_size=16).hexdigest()
