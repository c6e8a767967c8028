"""Config validation: every error names the file, the key, the line and what is allowed."""

from pathlib import Path

import pytest

from eemrepro.experiments import ConfigError, enumerate_units, load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"

GOOD = """name: t
datasets: [heart]
models:
  EEM: {estimator: EEM, activation: rbf, grid: {n_hidden: [10, 20]}}
protocol: {folds: 3, repeats: 1}
"""


def _write(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text,match",
    [
        (GOOD.replace("protocol:", "protocl:"), r"c\.yaml, line 5: key 'protocl': unknown key; valid keys are"),
        (GOOD.replace("repeats: 1", "repeat: 1"), r"key 'protocol.repeat': unknown key; valid keys are \[.*'repeats'"),
        (GOOD.replace("[heart]", "[hart]"), r"line 2: key 'datasets.0': unknown data set 'hart'. Did you mean 'heart'"),
        (GOOD.replace("estimator: EEM,", "estimator: EMM,"), r"line 4: key 'models.EEM.estimator': unknown estimator 'EMM'; use one of"),
        (GOOD.replace("activation: rbf", "activation: tanh"), r"key 'models.EEM.activation': .*'activation' must be one of"),
        (GOOD.replace("activation: rbf", "actvation: rbf"), r"EEM has no parameter 'actvation'; valid: \["),
        (GOOD.replace("[10, 20]", "[]"), r"key 'models.EEM.grid.n_hidden': a grid is a non-empty list"),
        (GOOD.replace("[10, 20]", "[10, -2]"), r"key 'models.EEM.grid.n_hidden': EEM: parameter 'n_hidden' must be"),
        (GOOD.replace("[10, 20]", "{log10: [3, 1]}"), r"log10 range needs integers low <= high"),
        (GOOD.replace("folds: 3", "folds: 1"), r"key 'protocol.folds': must be an integer >= 2, got 1"),
        (GOOD.replace("repeats: 1}", "repeats: 1, scaling: perfold}"), r"'protocol.scaling': must be one of \['global', 'per-fold', 'standard', 'standard-per-fold', 'none'\]"),
        (GOOD.replace("repeats: 1}", "repeats: 1, splitter: train-test}"),
         r"key 'protocol.train_size': splitter: train-test needs train_size"),
        (GOOD.replace("repeats: 1}", "repeats: 1, train_size: 0.5}"), r"key 'protocol.train_size': only for splitter: train-test"),
        (GOOD.replace("repeats: 1}", "repeats: 1, select_metric: acc}"), r"key 'protocol.select_metric': must be one of"),
        (GOOD.replace("repeats: 1}", "repeats: 1, splitter: loo}"), r"key 'protocol.splitter': must be one of"),
        (GOOD + "jobs: 0\n", r"key 'jobs': a positive integer or -1"),
        ("name: t\n", r"key 'datasets': missing \(required\)"),
        ("name: t\ndatasets: [heart\n", r"not valid YAML"),
    ],
)
def test_config_errors(tmp_path, text, match):
    with pytest.raises(ConfigError, match=match) as info:
        load_config(_write(tmp_path, text))
    assert str(tmp_path / "c.yaml") in str(info.value)


def test_good_config_and_grid_ranges(tmp_path):
    text = GOOD.replace("grid: {n_hidden: [10, 20]}", "grid: {n_hidden: [10, 20]}}\n  S: {estimator: SVM, grid: {C: {log10: [-1, 1]}, gamma: [1e-2, 1]}")
    cfg = load_config(_write(tmp_path, text))
    svm = cfg.models[1]
    # YAML 1.1 reads 1e-2 as a string; the config turns it into the number.
    assert svm.grid == {"C": [0.1, 1.0, 10.0], "gamma": [0.01, 1]}
    assert cfg.models[0].path_param == "n_hidden" and svm.path_param == "C"
    units = enumerate_units(cfg)
    # EEM: 1 unit per fold covering both h; SVM: a path over C for each of the 2 gamma values, per fold.
    assert len(units) == 3 * 1 + 3 * 2
    assert load_config(_write(tmp_path, GOOD)).protocol.fit_timeout == 600.0


def test_missing_file():
    with pytest.raises(ConfigError, match=r"c.yaml: cannot be read \(No such file or directory\)"):
        load_config("/nonexistent/c.yaml")


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_configs_validate(path):
    cfg = load_config(path)
    assert cfg.name == path.stem and (cfg.models or cfg.kind == "dcs-correlation")


def test_paper_grids_in_shipped_configs():
    # SPEC section 2: h in {50, ..., 1000}; gamma in {1e-10, ..., 1}; C in {1e-1, ..., 1e10}.
    cfg = load_config(CONFIGS / "uci.yaml")
    models = {m.name: m for m in cfg.models}
    assert [m for m in models] == ["WELMsig", "EEMsig", "WELMnsig", "EEMnsig", "WELMrbf", "EEMrbf",
                                   "LS-SVMrbf", "EEKMrbf", "SVMrbf"]
    assert models["EEMrbf"].grid["n_hidden"] == [50, 100, 250, 500, 1000]
    assert models["SVMrbf"].grid["gamma"] == [10.0**k for k in range(-10, 1)]
    assert models["LS-SVMrbf"].grid["C"] == [10.0**k for k in range(-1, 11)]


def test_correlation_config(tmp_path):
    cfg = load_config(CONFIGS / "dcs_correlation.yaml")
    # SPEC section 3: h in {1, 10, 100, 200, 500}, 100 layers x 100 betas, on all 24 data sets.
    assert cfg.analysis.n_hidden == (1, 10, 100, 200, 500) and cfg.analysis.layers == cfg.analysis.betas == 100
    assert len(cfg.datasets) == 24 and len(enumerate_units(cfg)) == 24 * 5 * 100
    bad = "name: c\nkind: dcs-correlation\ndatasets: [heart]\nanalysis: {n_hidden: [0]}\n"
    with pytest.raises(ConfigError, match="'analysis.n_hidden': a list of integers >= 1"):
        load_config(_write(tmp_path, bad))
    with pytest.raises(ConfigError, match="'kind': must be one of"):
        load_config(_write(tmp_path, bad.replace("dcs-correlation", "correlation")))


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_stored_config_round_trips(path):
    # run writes config.to_dict() as results/<name>/config.yaml; status reads it back.
    import yaml

    from eemrepro.experiments import parse_config

    cfg = load_config(path)
    again = parse_config(yaml.safe_load(yaml.safe_dump(cfg.to_dict())))
    assert again.to_dict() == cfg.to_dict()


# -- hostile or mistyped documents: bounded, one clear error ---------------------------


def _bomb(levels):
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [{', '.join(['*a' + str(i - 1)] * 10)}]" for i in range(1, levels)]
    return "\n".join(lines) + f"\nname: *a{levels - 1}\n"


@pytest.mark.parametrize("levels", [7, 9])
def test_an_alias_bomb_is_refused_at_once_in_little_memory(tmp_path, levels):
    import resource
    import time

    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb(levels))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    with pytest.raises(ConfigError, match=r"bomb.yaml: its aliases expand to more than 200000 values"):
        load_config(path)
    # 10**9 strings if expanded; refused from the node graph (a few hundred nodes).
    assert time.perf_counter() - start < 2.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KB


def test_a_small_shared_grid_through_an_anchor_is_still_fine(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("""name: anchors
datasets: [heart]
models:
  A: {estimator: EEM, activation: rbf, grid: &g {n_hidden: [5, 10]}}
  B: {estimator: WELM, activation: rbf, grid: *g}
protocol: {folds: 2, repeats: 1}
""")
    cfg = load_config(path)
    assert [m.grid for m in cfg.models] == [{"n_hidden": [5, 10]}] * 2


@pytest.mark.parametrize("text, line, key", [
    ("name: a\nname: b\n", 2, "name"),
    ("name: x\ndatasets: [heart]\nmodels:\n  EEMrbf: {estimator: EEM}\n  EEMrbf: {estimator: WELM}\n", 5, "models.EEMrbf"),
    ("name: x\nprotocol:\n  folds: 10\n  seed: 1\n  folds: 3\n", 5, "protocol.folds"),
])
def test_a_duplicate_key_is_refused_naming_both_lines(tmp_path, text, line, key):
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    first = text.splitlines().index(next(ln for ln in text.splitlines() if ln.strip().startswith(key.split(".")[-1] + ":"))) + 1
    with pytest.raises(ConfigError, match=rf"dup.yaml, line {line}: key '{key}': duplicate key \(first at line {first}\)"):
        load_config(path)


@pytest.mark.parametrize("content, message", [
    (b"name: [unclosed\n", r"x.yaml, line \d+: not valid YAML"),
    (b"name: !!python/object:os.system ls\n", r"x.yaml, line 1: not valid YAML"),
    (b"\xff\xfe\x00binary", r"x.yaml: not UTF-8 text"),
    (b"a: " + b"x" * 1_000_001, r"x.yaml: \d+ bytes; a document is at most 1000000 bytes"),
])
def test_invalid_documents_are_one_line_errors(tmp_path, content, message):
    path = tmp_path / "x.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_tolerance_files_use_the_same_bounded_loader(tmp_path):
    from eemrepro.reports import ToleranceError, load_tolerance

    path = tmp_path / "tol.yaml"
    path.write_text("missing: skip\nmissing: fail\n")
    with pytest.raises(ToleranceError, match=r"tol.yaml, line 2: key 'missing': duplicate key \(first at line 1\)"):
        load_tolerance(path)
    path.write_text(_bomb(9))
    with pytest.raises(ToleranceError, match="aliases expand"):
        load_tolerance(path)
    path.write_text("- a\n- b\n")
    with pytest.raises(ToleranceError, match="a tolerance file is a mapping"):
        load_tolerance(path)


@pytest.mark.parametrize("key, value", [("repeats", '"2"'), ("folds", '"ten"'), ("seed", '"0"')])
def test_a_quoted_number_is_refused_where_an_integer_is_due_like_a_word(tmp_path, key, value):
    path = tmp_path / "q.yaml"
    path.write_text(f"name: q\ndatasets: [heart]\nmodels:\n  E: {{estimator: EEM}}\nprotocol:\n  {key}: {value}\n")
    with pytest.raises(ConfigError, match=rf"q.yaml, line 6: key 'protocol.{key}': must be an integer"):
        load_config(path)


def test_yaml11_exponents_without_a_dot_are_still_numbers(tmp_path):
    # PyYAML reads 1e-3 as a string (YAML 1.1); a grid written that way means the number.
    path = tmp_path / "e.yaml"
    path.write_text("name: e\ndatasets: [heart]\nmodels:\n  S: {estimator: SVM, grid: {C: [1e-3, 1E2], gamma: [1]}}\n")
    assert load_config(path).models[0].grid["C"] == [0.001, 100.0]


def test_a_document_read_twice_is_parsed_once_and_each_reader_gets_its_own_copy(monkeypatch):
    # A report reads each folder's config.yaml several times: the second read is not parsed again, and a reader
    # that changes what it got (the config parser fills defaults in) changes nothing for the next one.
    from eemrepro import _yaml

    text = "name: t\nmodels:\n  E: {estimator: EEM, grid: {h: [10, 20]}}\n"
    _yaml._parse.cache_clear()
    first, lines = _yaml.load_yaml(text, "c.yaml")
    first["models"]["E"]["grid"]["h"].append(30)
    lines[("name",)] = 99
    second, again = _yaml.load_yaml(text, "c.yaml")
    assert second == {"name": "t", "models": {"E": {"estimator": "EEM", "grid": {"h": [10, 20]}}}}
    assert again[("name",)] == 1 and again[("models", "E", "grid", "h", 1)] == 3
    assert _yaml._parse.cache_info().hits == 1 and _yaml._parse.cache_info().misses == 1


# -- names the store's record keys and the command line's lists can carry -----------------------------------------


@pytest.mark.parametrize("name, char", [("NC|x", "|"), ("NC\tx", "\t"), ("NC\x1fx", "\x1f")])
def test_a_model_name_the_record_keys_cannot_carry_is_refused_when_the_config_is_read(tmp_path, name, char):
    """A record's key joins the data set, the model and the point with '|' (the audit split a model 'NC|x' in two
    and crashed; a data set 'a|b' with model 'c' and a data set 'a' with model 'b|c' would share keys and seeds):
    refused at once, in one line naming the file, the key and the character, as a control character is."""
    from typer.testing import CliRunner

    from eemrepro.cli import app

    import json

    cfg = _write(tmp_path, GOOD.replace("  EEM:", f"  {json.dumps(name)}:"))  # YAML's double quotes: \\t, \\u001f
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    message = f"{cfg}, line 4: key 'models.{name}': a model's name may not hold {char!r} (a record's key joins " \
              "names with '|'; a control character breaks messages and tables): rename it"
    assert str(info.value) == message
    result = CliRunner().invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o"), "--dry-run"])
    assert result.exit_code != 0 and result.output == f"error: {message}\n", result.output
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name, char", [("my|set", "|")])
def test_a_local_data_set_name_the_record_keys_cannot_carry_is_refused(tmp_path, name, char):
    import pandas as pd

    pd.DataFrame({"x": [0.0, 1.0] * 10, "y": [0, 1] * 10}).to_csv(tmp_path / "mine.csv", index=False)
    cfg = _write(tmp_path, f"name: t\ndatasets: ['{name}']\nlocal_datasets:\n"
                           f"  '{name}': {{file: mine.csv, target: y}}\n"
                           "models:\n  EEM: {estimator: EEM, grid: {n_hidden: [10]}}\n")
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert str(info.value) == f"{cfg}, line 2: key 'datasets.0': a data set's name may not hold {char!r} (a " \
                              "record's key joins names with '|'; a control character breaks messages and tables): " \
                              "rename it"


def test_two_names_one_text_in_two_unicode_forms_are_refused_naming_both(tmp_path):
    """'modèle' typed with one character for the accent and pasted with two (NFC and NFD) are two models to the
    store and one to every reader of the tables (they print alike): refused in one line naming both by their code
    points, for models and for data sets (found by a re-probe of issue 65's finding 16)."""
    import pandas as pd

    nfc, nfd = "mod\u00e8le", "mode\u0300le"
    cfg = _write(tmp_path, GOOD.replace("  EEM:", f'  "{nfc}": {{estimator: EEM}}\n  "{nfd}":'))
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert str(info.value) == f"{cfg}, line 5: key 'models.{nfd}': model 'mode\\u0300le' is 'mod\\xe8le' in another " \
                              "Unicode form: they print alike in every table; rename one"
    pd.DataFrame({"x": [0.0, 1.0] * 10, "y": [0, 1] * 10}).to_csv(tmp_path / "mine.csv", index=False)
    cfg = _write(tmp_path, f"name: t\ndatasets: ['{nfc}', '{nfd}']\nlocal_datasets:\n"
                           f"  '{nfc}': {{file: mine.csv, target: y}}\n  '{nfd}': {{file: mine.csv, target: y}}\n"
                           "models:\n  EEM: {estimator: EEM, grid: {n_hidden: [10]}}\n")
    with pytest.raises(ConfigError, match=r"key 'datasets.1': data set 'mode\\u0300le' is 'mod\\xe8le' in another "
                                          r"Unicode form"):
        load_config(cfg)
    # The same name in 'datasets' and, in the other form, as a local_datasets key (a review found "not in the
    # config's 'datasets' ['modèle']" beside a name that prints the same).
    cfg = _write(tmp_path, f"name: t\ndatasets: ['{nfc}']\nlocal_datasets:\n  '{nfd}': {{file: mine.csv, target: y}}\n"
                           "models:\n  EEM: {estimator: EEM, grid: {n_hidden: [10]}}\n")
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert str(info.value) == f"{cfg}, line 4: key 'local_datasets.{nfd}': 'mode\\u0300le' is 'mod\\xe8le' of " \
                              "'datasets' in another Unicode form: they print alike; write both the same way"


def test_every_registered_data_set_and_paper_model_set_has_names_the_keys_can_carry():
    """The names the package brings itself (the registry's data sets, the papers' model sets) pass the same rule."""
    from eemrepro.datasets import list_datasets
    from eemrepro.experiments._config import key_breaking
    from eemrepro.experiments._model_sets import model_set, model_set_names

    names = list(list_datasets()) + [m for s in model_set_names() for m in model_set(s)[0]]
    assert len(names) > 20 and [n for n in names if key_breaking(n)] == []


def _committed_stores():
    """(config file, its store's folder) of every configs/*.yaml whose results/<name>/ is committed."""
    from eemrepro.experiments._run_folder import default_out

    root = Path(__file__).resolve().parents[2]
    pairs = [(p, root / default_out(load_config(p, import_estimators=False)))
             for p in sorted((root / "configs").glob("*.yaml"))]
    return [(p, folder) for p, folder in pairs if (folder / "config.yaml").is_file()]


@pytest.mark.parametrize("path, folder", _committed_stores(), ids=lambda v: getattr(v, "name", ""))
def test_each_committed_config_says_what_its_committed_store_holds(path, folder):
    # configs/extreme.yaml said repeats: 1 where results/extreme holds 5: its run over the store would have
    # lowered what the tables read (refused now); esmm_fuzzy_weights said 10 inner folds over a store of 5.
    import dataclasses

    config = load_config(path, import_estimators=False)
    stored = load_config(folder / "config.yaml", import_estimators=False)
    assert config.protocol.repeats == stored.protocol.repeats
    assert config.protocol == stored.protocol
    assert (config.kind, config.datasets, config.analysis) == (stored.kind, stored.datasets, stored.analysis)
    assert [dataclasses.replace(m, home=None) for m in config.models] == \
        [dataclasses.replace(m, home=None) for m in stored.models]


def test_the_committed_stores_are_compared_with_their_configs():
    # Every paper's store has its config (quick.yaml alone runs into a scratch folder).
    assert len(_committed_stores()) == len(list((Path(__file__).resolve().parents[2] / "configs").glob("*.yaml"))) - 1
