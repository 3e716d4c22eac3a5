"""docs/rules.md is the project's rules reference: it names every knob, preset and house overlay,
and code and configs cite it instead of the external RULES.md (issue 37 item 7)."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

from kalooki_sim.core.rules import ENUMS, Rules

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "rules.md"
VARIANTS = ROOT / "configs" / "variants"
PRESETS = sorted(p.stem for p in VARIANTS.glob("*.toml"))
OVERLAYS = sorted(p.stem for p in (VARIANTS / "house").glob("*.toml"))

EXCLUDED_FROM_CITATION_CHECK = ()


def _doc() -> str:
    return DOC.read_text(encoding="utf-8")


def _config_keys() -> list[str]:
    keys = set()
    for path in VARIANTS.rglob("*.toml"):
        keys |= set(tomllib.loads(path.read_text(encoding="utf-8")))
    return sorted(keys)


def test_presets_and_overlays_found():
    assert {"caribbean", "k40", "k51", "k101", "na15", "american"} <= set(PRESETS)
    assert [f"v{i}" for i in range(1, 8)] == OVERLAYS


@pytest.mark.parametrize("key", _config_keys())
def test_every_config_key_is_documented(key):
    assert f"`{key}`" in _doc(), f"docs/rules.md does not document `{key}`"


@pytest.mark.parametrize("knob", [f.name for f in dataclasses.fields(Rules) if f.name != "name"])
def test_every_rules_field_is_documented(knob):
    assert f"`{knob}`" in _doc(), f"docs/rules.md does not document `{knob}`"


@pytest.mark.parametrize("knob,value", [(k, v) for k, vs in ENUMS.items() for v in vs])
def test_every_enum_value_the_loader_accepts_is_listed(knob, value):
    assert f'"{value}"' in _doc(), f'docs/rules.md does not list "{value}" ({knob})'


@pytest.mark.parametrize("name", PRESETS + OVERLAYS)
def test_every_preset_and_overlay_is_named(name):
    assert f"`{name}`" in _doc(), f"docs/rules.md does not name `{name}`"


def test_house_variations_and_sections_keep_their_ids():
    doc = _doc()
    for v in range(1, 8):
        assert f"| V{v} (`v{v}`)" in doc
    heads = ["## 1.", "### 1.1", "### 1.4", "## 2.", "### 2.7", "## 3.", "## 4.", "### 4.1", "### 4.9",
             "## 5.", "## 6.", "### 6.1", "### 6.10"]
    heads += [f"### 2.{i} " for i in range(1, 7)] + [f"### 4.{i} " for i in range(1, 9)]
    for h in heads:
        assert h in doc, h
    assert "rules-decisions.md" in doc


def _cited_files():
    for top in (ROOT / "kalooki_sim", ROOT / "configs"):
        for path in sorted(top.rglob("*")):
            if not path.is_file() or path.suffix not in (".py", ".toml", ".md", ".txt", ".json"):
                continue
            if any(path.is_relative_to(x) for x in EXCLUDED_FROM_CITATION_CHECK):
                continue
            yield path


def test_code_and_configs_cite_docs_rules_md_not_the_external_spec():
    offenders = [str(p.relative_to(ROOT)) for p in _cited_files()
                 if "RULES.md" in p.read_text(encoding="utf-8", errors="replace")]
    assert not offenders, f"cite docs/rules.md instead of RULES.md in: {offenders}"
