"""A minimal OpenID Connect issuer for the real kube-apiserver to trust: a STAND-IN for the
identity provider (Keycloak, Dex), named as one because no such provider runs here.

What kube-apiserver's JWT authenticator needs from an issuer, and nothing more: HTTPS with a
certificate from our own CA (so the rendered ``certificateAuthority`` is what makes the
connection trusted), the discovery document at ``<issuer>/.well-known/openid-configuration``
and the JSON Web Key Set it names, and ID tokens signed RS256 with that key. The code under
test is the API server and our rendered AuthenticationConfiguration, not this issuer.
Several issuers share one server under different paths.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from tests.support import serving_tls_in_thread


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _uint(number: int) -> str:
    return _b64(number.to_bytes((number.bit_length() + 7) // 8, "big"))


@dataclass
class Issuers:
    """The running server: its CA (PEM), base URL and signing key."""

    ca_pem: str
    base_url: str
    key: rsa.RSAPrivateKey

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path}"

    def token(self, path: str, claims: dict[str, Any], key: rsa.RSAPrivateKey | None = None) -> str:
        """An ID token of issuer ``path`` with ``claims`` (iss, iat, nbf, exp added)."""
        now = int(time.time())
        body = {"iss": self.url(path), "iat": now, "nbf": now - 60, "exp": now + 600, **claims}
        header = {"alg": "RS256", "typ": "JWT", "kid": "stand-in"}
        signing = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(body).encode())}"
        signature = (key or self.key).sign(signing.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing}.{_b64(signature)}"


@contextmanager
def serving(directory: Path) -> Iterator[Issuers]:
    """Issuers under ``https://127.0.0.1:<port>/<any path>`` until the block ends."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = key.public_key().public_numbers()
    jwks = {
        "keys": [
            {
                "kty": "RSA",
                "alg": "RS256",
                "use": "sig",
                "kid": "stand-in",
                "n": _uint(numbers.n),
                "e": _uint(numbers.e),
            }
        ]
    }
    base: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path.endswith("/.well-known/openid-configuration"):
                issuer = base[0] + path.removesuffix("/.well-known/openid-configuration")
                body: dict[str, Any] = {
                    "issuer": issuer,
                    "jwks_uri": f"{base[0]}/jwks",
                    "id_token_signing_alg_values_supported": ["RS256"],
                    "response_types_supported": ["id_token"],
                    "subject_types_supported": ["public"],
                }
            elif path == "/jwks":
                body = jwks
            else:
                self.send_error(404)
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with serving_tls_in_thread(server, "oidc-issuer", directory / "issuer-ca") as (url, ca):
        base.append(url)
        yield Issuers(ca.decode(), url, key)
