"""A trusted CA that is not ASCII base64 is refused with the field's name, never a crash.

Found by the property test "validate implies render" at the full suite's budget
(tests/render/test_validate_implies_render.py): a certificate body holding a non-ASCII
character made binascii raise a ValueError (not binascii.Error) out of validate.
"""

from __future__ import annotations

import pytest

from scs_templates._settings import certificates
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.validate import validate_data

NON_ASCII = "-----BEGIN CERTIFICATE-----\u00a1-----END CERTIFICATE-----"


def test_a_certificate_with_a_non_ascii_character_is_not_base64() -> None:
    assert certificates.problem(NON_ASCII) == (
        "the certificate is not valid base64 (a line lost or changed in copying?)"
    )


def test_validate_refuses_a_non_ascii_trusted_ca_naming_the_field() -> None:
    data = {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": "dev"},
        "spec": {"provider": "docker", "security": {"trustedCAs": [NON_ASCII]}},
    }
    with pytest.raises(SettingsError) as raised:
        validate_data(data)
    assert "spec.security.trustedCAs[0]" in str(raised.value)
    assert "not valid base64" in str(raised.value)
