"""Minimal Kubernetes protobuf decoding for the FAKE API server (test double).

helm 4 writes its release storage Secrets with ``Content-Type:
application/vnd.kubernetes.protobuf`` and does not fall back to JSON on 415, so the fake must
read that encoding. Only what the typed clients send is decoded: the ``k8s\\x00`` envelope
(``runtime.Unknown``), ``ObjectMeta``, and the bodies of Secret, ConfigMap and Namespace.
Answers are always JSON (client-go accepts JSON answers to protobuf requests).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

MAGIC = b"k8s\x00"


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """Yield (field number, wire type, value) of one message; value is int or bytes."""
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield number, wire, value
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated length-delimited field")
            yield number, wire, data[pos : pos + length]
            pos += length
        elif wire == 1:
            yield number, wire, data[pos : pos + 8]
            pos += 8
        elif wire == 5:
            yield number, wire, data[pos : pos + 4]
            pos += 4
        else:
            raise ValueError(f"unsupported wire type {wire}")


def _map_entry(data: bytes) -> tuple[str, bytes]:
    key, value = "", b""
    for number, _, raw in fields(data):
        if number == 1:
            key = raw.decode()
        elif number == 2:
            value = raw
    return key, value


def _time(data: bytes) -> str:
    from datetime import UTC, datetime

    seconds = 0
    for number, _, raw in fields(data):
        if number == 1:
            seconds = raw
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def object_meta(data: bytes) -> dict[str, Any]:
    """Decode the ObjectMeta fields a client sets (name, namespace, labels, annotations...)."""
    meta: dict[str, Any] = {}
    strings = {1: "name", 2: "generateName", 3: "namespace", 5: "uid", 6: "resourceVersion"}
    for number, _, raw in fields(data):
        if number in strings:
            if raw:
                meta[strings[number]] = raw.decode()
        elif number == 7:
            meta["generation"] = raw
        elif number == 8:
            meta["creationTimestamp"] = _time(raw)
        elif number == 11:
            key, value = _map_entry(raw)
            meta.setdefault("labels", {})[key] = value.decode()
        elif number == 12:
            key, value = _map_entry(raw)
            meta.setdefault("annotations", {})[key] = value.decode()
        elif number == 14:
            meta.setdefault("finalizers", []).append(raw.decode())
    return meta


def _secret(raw: bytes) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {}}
    for number, _, value in fields(raw):
        if number == 1:
            obj["metadata"] = object_meta(value)
        elif number == 2:
            key, data = _map_entry(value)
            obj.setdefault("data", {})[key] = base64.b64encode(data).decode()
        elif number == 3:
            obj["type"] = value.decode()
        elif number == 4:
            key, data = _map_entry(value)
            obj.setdefault("stringData", {})[key] = data.decode()
        elif number == 5:
            obj["immutable"] = bool(value)
    return obj


def _configmap(raw: bytes) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {}}
    for number, _, value in fields(raw):
        if number == 1:
            obj["metadata"] = object_meta(value)
        elif number == 2:
            key, data = _map_entry(value)
            obj.setdefault("data", {})[key] = data.decode()
        elif number == 3:
            key, data = _map_entry(value)
            obj.setdefault("binaryData", {})[key] = base64.b64encode(data).decode()
        elif number == 4:
            obj["immutable"] = bool(value)
    return obj


def _metadata_only(raw: bytes) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {}}
    for number, _, value in fields(raw):
        if number == 1:
            obj["metadata"] = object_meta(value)
    return obj


_DECODERS = {"Secret": _secret, "ConfigMap": _configmap, "Namespace": _metadata_only}


def decode_object(data: bytes) -> dict[str, Any]:
    """Decode a ``k8s\\x00``-framed protobuf object into its JSON form.

    Raises ValueError for anything but a Secret, ConfigMap or Namespace.
    """
    if not data.startswith(MAGIC):
        raise ValueError("missing the k8s protobuf envelope")
    api_version, kind, raw = "", "", b""
    for number, _, value in fields(data[len(MAGIC) :]):
        if number == 1:
            for sub, _, text in fields(value):
                if sub == 1:
                    api_version = text.decode()
                elif sub == 2:
                    kind = text.decode()
        elif number == 2:
            raw = value
    decoder = _DECODERS.get(kind)
    if decoder is None:
        raise ValueError(f"protobuf bodies of kind {kind!r} are not supported")
    obj = decoder(raw)
    return {"apiVersion": api_version or "v1", "kind": kind, **obj}
