"""Is a PEM text really X.509 certificates? A structural check of the DER inside.

The settings take PEM CA certificates in three places (``security.trustedCAs``,
``security.oidc[].certificateAuthority``, ``registryMirrors[].caCertificate``). A block that
only looks like one (made up, truncated, a line lost in copying) passes a pattern, validates,
renders, and then fails on the node: the real kube-apiserver refuses an
AuthenticationConfiguration whose certificateAuthority does not parse (client-go's
ParseCertsPEM, so the control plane never starts), containerd fails every pull through the
mirror, update-ca-certificates skips the file. So each block is decoded (strict base64) and
its DER walked as far as the outline of RFC 5280's Certificate: SEQUENCE { tbsCertificate
SEQUENCE { [0] version?, serialNumber INTEGER, signature, issuer, validity, subject,
subjectPublicKeyInfo (SEQUENCEs), extensions... }, signatureAlgorithm SEQUENCE,
signatureValue BIT STRING }, every length exact, nothing left over. The contents (keys,
dates, names) are the consumers' to judge; ``tests/plane/test_plane_cluster_features.py`` has the
real kube-apiserver load what this accepts and refuse what it refuses. Pure Python: no
cryptography import on the validate path.
"""

from __future__ import annotations

import binascii
import re

_BLOCK = re.compile(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", re.DOTALL)

_SEQUENCE, _INTEGER, _BIT_STRING, _VERSION = 0x30, 0x02, 0x03, 0xA0


class _NotDer(ValueError):
    """The bytes are not the DER outline of a certificate."""


def _element(data: bytes, offset: int, end: int) -> tuple[int, int, int]:
    """(tag, content start, content end) of the DER element at ``offset`` (definite,
    minimally encoded length within ``end``)."""
    if offset + 2 > end:
        raise _NotDer("truncated")
    tag, first = data[offset], data[offset + 1]
    start = offset + 2
    if first < 0x80:
        length = first
    else:
        count = first & 0x7F
        if count == 0 or count > 4 or start + count > end:
            raise _NotDer("bad length")
        length = int.from_bytes(data[start : start + count], "big")
        if length < 0x80 or data[start] == 0:
            raise _NotDer("length not minimally encoded")
        start += count
    if start + length > end:
        raise _NotDer("truncated")
    return tag, start, start + length


def _children(data: bytes, start: int, end: int) -> list[int]:
    """The tags of the elements filling ``data[start:end]`` exactly."""
    tags = []
    while start < end:
        tag, _, start = _element(data, start, end)
        tags.append(tag)
    return tags


def _check_der(der: bytes) -> None:
    tag, start, end = _element(der, 0, len(der))
    if tag != _SEQUENCE or end != len(der):
        raise _NotDer("not one SEQUENCE")
    tbs_tag, tbs_start, tbs_end = _element(der, start, end)
    if tbs_tag != _SEQUENCE or _children(der, tbs_end, end) != [_SEQUENCE, _BIT_STRING]:
        raise _NotDer("not tbsCertificate, signatureAlgorithm, signatureValue")
    fields = _children(der, tbs_start, tbs_end)
    if fields[:1] == [_VERSION]:
        fields = fields[1:]
    if fields[:6] != [_INTEGER] + [_SEQUENCE] * 5:
        raise _NotDer("tbsCertificate lacks serial, signature, issuer, validity, subject, key")


def problem(text: str) -> str | None:
    """Why ``text`` is not PEM X.509 certificates, or None. Text outside the blocks is
    allowed (bundles carry comments), as client-go's ParseCertsPEM skips it."""
    blocks = _BLOCK.findall(text)
    if not blocks:
        return "no -----BEGIN CERTIFICATE----- ... -----END CERTIFICATE----- block"
    for number, body in enumerate(blocks, start=1):
        where = f"certificate {number} of {len(blocks)}" if len(blocks) > 1 else "the certificate"
        try:
            # ValueError: a character outside ASCII, which binascii refuses before decoding.
            der = binascii.a2b_base64("".join(body.split()), strict_mode=True)
        except ValueError:  # binascii.Error is one
            return f"{where} is not valid base64 (a line lost or changed in copying?)"
        try:
            _check_der(der)
        except _NotDer as error:
            return f"{where} is not an X.509 certificate ({error}; made up or cut short?)"
    return None
