"""Who handed a cell in: ed25519 signatures over cell manifests.

A manifest (:func:`bench.results.store.manifest_for`) is a checksum, not a proof: anyone can
edit ``metrics.json`` and recompute it. A *signature* is a proof of who sealed it: a
contributor makes a key pair once (``bench keygen``), signs their results folder
(``bench sign``), and gives the maintainer their public key. The signature covers the
manifest's exact bytes, and the manifest covers ``spec.json`` and ``metrics.json`` (size and
sha256) and the provenance record, so changing any of them after signing breaks it.

Files:

* ``cells/<hash>/signature.json``: ``{"format": 1, "algorithm": "ed25519", "public_key":
  "<64 hex>", "signature": "<128 hex>"}``; the signed message is :data:`CONTEXT` followed by
  the manifest's bytes.
* a private key: PKCS#8 PEM, unencrypted, mode 0600 (the format OpenSSL reads);
* a public key: one line, ``ed25519:<64 hex>`` (the ``.pub`` file ``bench keygen`` writes);
* a keyring (``bench leaderboard --keys FILE``): one contributor per line, ``NAME
  ed25519:<64 hex>``; ``#`` starts a comment.

The cryptography is the ``cryptography`` library's (Ed25519, RFC 8032); this module only
decides what is signed and where it is kept.

Example:
    >>> generate_key("me.key")          # writes me.key and me.key.pub
    >>> sign_cell(Path("results/cells/1a2b3c4d5e6f7a8b"), load_private_key("me.key"))
    >>> verify_signature(manifest_bytes, signature_bytes)
    'ed25519:9f0c...'
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from bench.errors import InputError
from bench.results import layout
from bench.results.store import check_cell, read_regular, write_json

SIGNATURE_FORMAT = 1
"""Version of ``signature.json``."""
ALGORITHM = "ed25519"
"""The one signature algorithm."""
CONTEXT = b"bench cell manifest v1\n"
"""Prefix of every signed message: a bench signature cannot be replayed as another
protocol's, nor another protocol's as a bench signature."""
MAX_SIGNATURE_BYTES = 4096
"""Largest ``signature.json`` read (a real one has about 250 bytes)."""

_KEY = re.compile(r"ed25519:([0-9a-f]{64})")
_SIG = re.compile(r"[0-9a-f]{128}")


class SignatureError(InputError, ValueError):
    """A signature, key or keyring that cannot be used (the message says why)."""


def key_id(public_key: bytes) -> str:
    """``ed25519:<hex>`` of a raw 32-byte public key (how keys are written and shown)."""
    return f"{ALGORITHM}:{public_key.hex()}"


def short_id(kid: str) -> str:
    """The first 16 hex digits of a key id (for display; JSON records carry the whole id)."""
    return kid[: len(ALGORITHM) + 1 + 16]


def _public_bytes(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def public_id(key: Any) -> str:
    """The key id of a private key's public half."""
    return key_id(_public_bytes(key.public_key()))


def generate_key(path: str | Path) -> str:
    """Write a new private key to ``path`` (mode 0600) and its public key to ``path.pub``;
    returns the key id. Refuses to overwrite either file."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = Path(path)
    pub = path.with_name(path.name + ".pub")
    for p in (path, pub):
        if p.exists() or p.is_symlink():
            raise SignatureError(f"{p}: exists; not overwritten (a lost key cannot be "
                                 "recovered, choose another file)")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    kid = public_id(key)
    pub.write_text(kid + "\n", encoding="utf-8")
    return kid


def load_private_key(path: str | Path) -> Any:
    """The Ed25519 private key in a PEM file (as :func:`generate_key` writes it)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(read_regular(Path(path), 64 * 1024),
                                                 password=None)
    except FileNotFoundError:
        raise SignatureError(f"{path}: no such key file (`bench keygen {path}` makes one)"
                             ) from None
    except (OSError, ValueError, TypeError) as e:
        raise SignatureError(f"{path}: not an unencrypted PEM private key ({e})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SignatureError(f"{path}: a {type(key).__name__}, not an Ed25519 key")
    return key


def parse_key_id(text: str, where: str = "key") -> str:
    """A key id from its text form ``ed25519:<64 hex>`` (SignatureError otherwise)."""
    m = _KEY.fullmatch(text.strip().lower())
    if not m:
        raise SignatureError(f"{where}: expected 'ed25519:' and 64 hex digits, got "
                             f"{text.strip()[:40]!r}")
    return key_id(bytes.fromhex(m.group(1)))


def read_keyring(path: str | Path) -> dict[str, str]:
    """``{key id: name}`` from a keyring file: ``NAME ed25519:<hex>`` per line (``#``
    comments). A name is one or more words; the key is the line's last field. A key listed
    twice under different names is refused, and so is a name listed for two keys (issue 48: a
    page showing one contributor's name for two keys cannot say which signed; give each key
    its own name, e.g. ``Ada Lovelace (laptop)``)."""
    try:
        text = read_regular(Path(path), 1024 * 1024).decode("utf-8")
    except FileNotFoundError:
        raise SignatureError(f"{path}: no such keyring file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SignatureError(f"{path}: cannot read the keyring ({e})") from None
    out: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, key = line.rpartition(" ")
        name = " ".join(name.split())
        if not name:
            raise SignatureError(f"{path}:{n}: expected 'NAME ed25519:<64 hex>'")
        kid = parse_key_id(key, f"{path}:{n}")
        if out.get(kid, name) != name:
            raise SignatureError(f"{path}:{n}: key listed for both {out[kid]!r} and {name!r}")
        other = next((k for k, v in out.items() if v == name and k != kid), None)
        if other is not None:
            raise SignatureError(f"{path}:{n}: the name {name!r} is already given to the key "
                                 f"{other}; one name per key")
        out[kid] = name
    return out


def sign_manifest(manifest: bytes, key: Any) -> dict[str, Any]:
    """The ``signature.json`` record of a manifest's bytes signed with ``key``."""
    return {"format": SIGNATURE_FORMAT, "algorithm": ALGORITHM,
            "public_key": _public_bytes(key.public_key()).hex(),
            "signature": key.sign(CONTEXT + manifest).hex()}


def verify_signature(manifest: bytes, signature: bytes) -> str:
    """The key id that signed ``manifest`` (the bytes of a ``signature.json``).

    Raises:
        SignatureError: the record is malformed, of another format or algorithm, or the
            signature does not verify (the manifest changed after signing, or the record names
            a key that did not sign it).
    """
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        rec = json.loads(signature.decode("utf-8"))
    except (RecursionError, UnicodeDecodeError, ValueError):
        raise SignatureError(f"{layout.SIGNATURE} does not parse") from None
    if not isinstance(rec, dict) or rec.get("format") != SIGNATURE_FORMAT \
            or rec.get("algorithm") != ALGORITHM:
        raise SignatureError(f"{layout.SIGNATURE} is not an {ALGORITHM} signature of format "
                             f"{SIGNATURE_FORMAT}")
    pub, sig = rec.get("public_key"), rec.get("signature")
    if not (isinstance(pub, str) and _KEY.fullmatch(f"{ALGORITHM}:{pub}")
            and isinstance(sig, str) and _SIG.fullmatch(sig)):
        raise SignatureError(f"{layout.SIGNATURE}: malformed key or signature")
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(pub)).verify(
            bytes.fromhex(sig), CONTEXT + manifest)
    except (InvalidSignature, ValueError):
        raise SignatureError(f"{layout.SIGNATURE} does not verify (the manifest changed after "
                             "signing, or another key signed it)") from None
    return key_id(bytes.fromhex(pub))


def cell_signer(folder: Path) -> str | None:
    """The key id that signed a sealed cell's manifest, or None (no ``signature.json``).

    Raises:
        SignatureError: there is a signature and it does not verify, or it cannot be read.
    """
    sig = layout.signature_file(folder)
    if not (sig.exists() or sig.is_symlink()):
        return None
    try:
        return verify_signature(read_regular(layout.manifest_file(folder)),
                                read_regular(sig, MAX_SIGNATURE_BYTES))
    except OSError as e:
        raise SignatureError(f"{layout.SIGNATURE} not readable ({e})") from None


def sign_cell(folder: Path, key: Any) -> None:
    """Sign a sound, sealed cell (:func:`bench.results.store.check_cell`): write its
    ``signature.json`` (replacing an earlier one).

    Raises:
        SignatureError: the cell is not sound (nothing is written).
    """
    problem = check_cell(folder)
    if problem:
        raise SignatureError(f"{layout.CELLS}/{folder.name}: {problem}; not signed")
    write_json(layout.signature_file(folder),
               sign_manifest(read_regular(layout.manifest_file(folder)), key))


def sign_results(results: str | Path, key: Any) -> tuple[int, list[str]]:
    """Sign every sound, sealed cell under ``results``; returns (cells signed, one line per
    cell not signed and why)."""
    signed, skipped = 0, []
    for folder in layout.cell_folders(results):
        if not layout.manifest_file(folder).exists() and layout.error_file(folder).exists():
            continue  # a failed cell: nothing to sign
        try:
            sign_cell(folder, key)
            signed += 1
        except SignatureError as e:
            skipped.append(str(e))
    return signed, skipped
