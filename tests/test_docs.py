"""The docs that cannot drift: the config reference is generated from the validator (``make docs``)."""

import dataclasses
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_config_key_and_kind_has_a_line_in_the_reference():
    from eemrepro.experiments._config import _TOP_KEYS, Protocol, protocol_rules
    from eemrepro.experiments._kinds import kind_names
    from eemrepro.experiments._reference import KINDS, PROTOCOL_KEYS, TOP_KEYS

    assert set(TOP_KEYS) == set(_TOP_KEYS)
    assert set(PROTOCOL_KEYS) == {f.name for f in dataclasses.fields(Protocol)}
    assert set(protocol_rules()) <= set(PROTOCOL_KEYS)
    assert set(KINDS) == set(kind_names())


def test_the_committed_config_reference_is_what_the_validator_makes():
    from eemrepro.experiments._reference import config_reference

    committed = (ROOT / "docs" / "config-reference.md").read_text()
    assert committed == config_reference(), "docs/config-reference.md is stale: run `make docs`"


def test_the_reference_prints_the_rules_the_validator_enforces():
    """A rule changed in ``protocol_rules`` changes both the error and the page (one table, two readers)."""
    import pytest

    from eemrepro.experiments import ConfigError, parse_config
    from eemrepro.experiments._config import protocol_rules
    from eemrepro.experiments._reference import config_reference

    base = {"name": "x", "datasets": ["heart"], "models": {"M": {"estimator": "EEM"}}}
    text = config_reference()
    for key, (_, want) in protocol_rules().items():
        assert f"| `{key}` |" in text and want in text
    with pytest.raises(ConfigError, match=r"key 'protocol\.folds': must be an integer >= 2, got 1"):
        parse_config({**base, "protocol": {"folds": 1}})
    with pytest.raises(ConfigError, match=r"key 'protocol\.scaling': must be one of \['global', 'per-fold'"):
        parse_config({**base, "protocol": {"scaling": "minmax"}})
    with pytest.raises(ConfigError, match=r"key 'protocol\.repeats': must be an integer >= 1, got True"):
        parse_config({**base, "protocol": {"repeats": True}})  # a YAML boolean is no count
