"""gitleaks' vendored rules (issue 22 item 11): translated from Go RE2, checked on gitleaks'
own examples, and run beside the hand rules so no shape masked before stops being masked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.engine.secrets import gitleaks
from thinkfix.engine.secrets import rules as secrets
from thinkfix.engine.secrets.gitleaks.build import HERE, RULES_JSON, build, load_toml, translate
from thinkfix.engine.secrets.rules import mask_secrets

EXAMPLES: dict[str, dict[str, list[str]]] = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "gitleaks_examples.json").read_text("utf-8")
)
RULES = {r.id: r for r in gitleaks.rules()}


def _finds(rule_id: str, text: str) -> list[tuple[int, int, str]]:
    """What one rule finds, behind the keyword prescreen (as gitleaks validates them)."""
    found: list[tuple[int, int, str]] = []
    if RULES[rule_id] in gitleaks.candidates(text):
        RULES[rule_id].spans(text, found)
    return found


def _cases(kind: str) -> list[tuple[str, str]]:
    return [
        (rid, text)
        for rid, lists in sorted(EXAMPLES.items())
        if rid in RULES
        for text in lists[kind]
    ]


def test_examples_cover_most_rules() -> None:
    assert len(RULES) >= 200
    assert len([r for r in EXAMPLES if r in RULES]) >= 60


@pytest.mark.parametrize(("rule_id", "text"), _cases("tps"))
def test_gitleaks_true_positive_is_found(rule_id: str, text: str) -> None:
    assert _finds(rule_id, text), f"{rule_id} missed {text!r}"


@pytest.mark.parametrize(("rule_id", "text"), _cases("fps"))
def test_gitleaks_false_positive_is_not(rule_id: str, text: str) -> None:
    assert not _finds(rule_id, text), f"{rule_id} found a secret in {text!r}"


def test_every_rule_compiles_and_only_path_rules_are_skipped() -> None:
    for rule in gitleaks.rules():
        assert rule.pattern.pattern
        assert all(a.regexes for a in rule.allowlists if a.sources)
    assert gitleaks.skipped().keys() == {
        "freemius-secret-key",
        "hashicorp-tf-password",
        "kubernetes-secret-yaml",
        "nuget-config-password",
        "pkcs12-file",
    }


@pytest.mark.parametrize(
    ("go", "python"),
    [
        # RE2 applies a mid-pattern flag to the rest of its group, every alternative included.
        (r"\b(ab(?i)cd|ef)g", r"\b(ab(?i:cd)|(?i:ef))g"),
        (r"(?i)ab(?-i:CD)", r"(?i)ab(?-i:CD)"),
        (r"x(?i)y", r"x(?i:y)"),
        (r"\b(pat[[:alnum:]]{14})\b", r"\b(pat[a-zA-Z0-9]{14})\b"),
        (r"a(?:[^\w-]|\z)", r"a(?:[^\w-]|\Z)"),
        (r"[\[(]x[]a]", r"[\[(]x[\]a]"),
    ],
)
def test_go_patterns_translate(go: str, python: str) -> None:
    assert translate(go) == python
    re.compile(python)


def test_a_mid_pattern_flag_means_what_it_means_in_go() -> None:
    pattern = re.compile(translate(r"^(ab(?i)cd|ef)$"))
    assert pattern.match("abCD") and pattern.match("EF")
    assert not pattern.match("ABcd")


def test_keyword_prescreen_skips_rules_whose_keyword_is_absent() -> None:
    ids = {r.id for r in gitleaks.candidates("just prose, nothing to see")}
    assert "anthropic-api-key" in {r.id for r in gitleaks.candidates("sk-ant-api03-x")}
    assert "generic-api-key" in {r.id for r in gitleaks.candidates("sk-ant-api03-x")}
    assert ids == {r.id for r in gitleaks.rules() if not r.keywords}
    assert "github-pat" in {r.id for r in gitleaks.candidates("a GHP_ token")}


def test_entropy_floor_and_allowlists_apply() -> None:
    assert gitleaks.entropy("aaaa") == 0.0 and gitleaks.entropy("ab") == 1.0
    assert not gitleaks.find("key = AKIAXXXXXXXXXXXXXXXX")  # low entropy
    assert not gitleaks.find("api_key = ${API_KEY_VALUE}")  # global allowlist
    assert gitleaks.find("AKIAQ3EGUW7QZXB4NR5T")


def test_vendored_file_is_upstreams_with_its_licence_and_commit() -> None:
    here = HERE
    toml = (here / "gitleaks.toml").read_text("utf-8")
    assert toml.startswith("# This file has been auto-generated")
    assert "MIT License" in (here / "LICENSE").read_text("utf-8")
    upstream = (here / "UPSTREAM").read_text("utf-8").splitlines()[1]
    assert re.search(r"commit [0-9a-f]{40} ", upstream)


def test_rules_json_is_what_the_vendored_toml_translates_to() -> None:
    """rules.json is derived, never edited: rebuilding it from the TOML gives the same rules."""
    doc = json.loads(RULES_JSON.read_text("utf-8"))
    again = build(load_toml(HERE / "gitleaks.toml"), doc["upstream"])
    assert again == doc
    assert doc["upstream"] == (HERE / "UPSTREAM").read_text("utf-8").splitlines()[1]


def test_go_example_lists_are_read_literally(tmp_path: Path) -> None:
    from thinkfix.engine.secrets.gitleaks.__main__ import examples

    rules = tmp_path / "cmd" / "generate" / "config" / "rules"
    rules.mkdir(parents=True)
    (rules / "x.go").write_text(
        "package rules\n\nfunc X() *config.Rule {\n"
        '\tr := config.Rule{RuleID: "x-key"}\n'
        "\ttps := []string{\n"
        '\t\t"x = \\"a,b\\"", // a comment, with a comma\n'
        "\t\t`raw {brace}`,\n"
        '\t\tutils.GenerateSampleSecret("x", "y"),\n'
        '\t\t"joined" + "strings",\n'
        "\t}\n"
        '\tfps := []string{"no"}\n'
        "\treturn r\n}\n"
    )
    assert examples(tmp_path) == {"x-key": {"tps": ['x = "a,b"', "raw {brace}"], "fps": ["no"]}}


# Every shape the hand rules masked before gitleaks' rules joined them (issue 11 item 7 and
# tests/reporters/diff/test_redact.py): still masked, under the same kind.
OLD_CASES = [
    ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx", "api-key"),
    ("sk-proj-Zk2Lq9Wm4Xv7Tn1Rb8Yc3Hd6Fj0Gp5Ks2Mw9Qe4Ut7Iy1Oa", "api-key"),
    ("sk_live_" + "a1B2c3D4" * 3, "stripe-key"),
    ("ghp_" + "a1B2" * 9, "github-token"),
    ("github_pat_" + "a1B2c3D4e5" * 4, "github-token"),
    ("glpat-" + "a1B2c3D4e5" * 2, "gitlab-token"),
    ("hf_" + "a1B2c3D4e5" * 3, "huggingface-token"),
    ("npm_" + "a1B2c3D4e5F6" * 3, "npm-token"),
    ("AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
    ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret"),
    ("AIza" + "S" * 35, "google-api-key"),
    ("xoxb-1234567890-abcdefghij", "slack-token"),
    ("https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXX", "slack-webhook"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0", "jwt"),
    ("Bearer abcdefghijklmnop123", "bearer-token"),
    ("postgres://admin:hunter2secret@db:5432/app", "url-password"),
    ('password = "correct horse battery"', "password"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIB\n-----END RSA PRIVATE KEY-----", "private-key"),
]


@pytest.mark.parametrize(("text", "kind"), OLD_CASES)
def test_previously_masked_shapes_stay_masked(text: str, kind: str) -> None:
    for shown in (text, "\\n" + text, f"see {text} now"):
        assert f"[REDACTED:{kind}]" in mask_secrets(shown), shown


_PIECES = st.sampled_from(
    [text for text, _ in OLD_CASES]
    + [
        '"SecretAccessKey": "R3wM5F49sCh2iRmjW9wYCoef12FcOR+nq4ReyZ9I"',
        "secret_key=Zr8Qp2Lw9Xk4Tn7Bv1Mc6Hd",
        "Authorization: Basic ZGVwbG95LWJvdDpXcThacjNUazZWbTlMcDJO",
        "j4pe3RmvENaAkdHLXp2/ywyY3dotLuO2Mt3OHWR6",
        "\\n",
        '\\"',
        " ",
        "=",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=8))
def test_keyword_prescreens_change_nothing(pieces: list[str]) -> None:
    """The hand rules' keywords and gitleaks' only skip rules that could not match."""
    text = "".join(pieces)
    masked = mask_secrets(text)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(secrets, "_HAND_KEYWORDS", {})
        mp.setattr(gitleaks, "candidates", lambda *_: list(gitleaks.rules()))
        assert mask_secrets(text) == masked
