"""`jostle train --all --only LABEL`: retrain some standard ChoiceMakers, leave the others."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from jostle.build import build_all


def test_an_unknown_label_trains_nothing_and_names_the_known_ones():
    with pytest.raises(ValueError, match=r"no standard ChoiceMaker nope\.chooser.*trees\.chooser"):
        build_all(progress=False, only=["nope.chooser"], out=lambda line: pytest.fail(f"trained: {line}"))


def test_the_command_line_refuses_an_unknown_label_with_status_2():
    done = subprocess.run([sys.executable, "-m", "jostle", "train", "--all", "--only", "nope.chooser"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "jostle train: no standard ChoiceMaker nope.chooser" in done.stderr


def test_only_trains_the_named_one_and_removes_only_files_nobody_requests(tmp_path, monkeypatch):
    import jostle.build as build
    from jostle.choicemaker.pretrained import shipped_folder
    from jostle.choicemaker import families

    trained: list[str] = []
    def train(family, *args, **kwargs):
        trained.append(family.name)
        return SimpleNamespace(modes={None: "public"})

    monkeypatch.setattr(build.engine, "train", train)

    def save(result, key, corpus_name, seconds):
        path = tmp_path / f"{key}.joblib"
        path.write_bytes(b"model")
        return path

    monkeypatch.setattr(build, "save_shipped", save)
    requested_elsewhere = sorted(shipped_folder(families.get("histograms")).glob("*.joblib"))[0].name
    (tmp_path / requested_elsewhere).write_bytes(b"another standard ChoiceMaker's model")
    (tmp_path / "0123456789abcdef01234567.joblib").write_bytes(b"nobody requests this")
    lines: list[str] = []
    written = build_all(progress=False, only=["ilp.chooser"], out=lines.append)
    assert trained == ["ilp"] and len(written) == 1 and written[0].exists()
    assert (tmp_path / requested_elsewhere).exists()
    assert not (tmp_path / "0123456789abcdef01234567.joblib").exists()
    assert lines[0].startswith("ilp.chooser: ilp") and lines[1].startswith("removed stale")


def test_only_names_the_others_whose_model_is_not_shipped(tmp_path, monkeypatch):
    import jostle.build as build

    monkeypatch.setattr(build.engine, "train", lambda family, *a, **k: SimpleNamespace(modes={None: "public"}))

    def save(result, key, corpus_name, seconds):
        path = tmp_path / "shipped" / f"{key}.joblib"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"model")
        return path

    monkeypatch.setattr(build, "save_shipped", save)
    monkeypatch.setattr(build, "shipped_folder", lambda family: tmp_path / "empty")
    lines: list[str] = []
    build_all(progress=False, only=["ilp.chooser"], out=lines.append)
    others = [label for label, _ in build.standard_choicemakers() if label != "ilp.chooser"]
    assert lines[-1].startswith("not shipped, and not retrained by --only: ")
    assert all(label in lines[-1] for label in others) and "ilp.chooser" not in lines[-1]


def test_only_says_nothing_more_when_every_other_model_is_shipped(tmp_path, monkeypatch):
    import jostle.build as build

    monkeypatch.setattr(build.engine, "train", lambda family, *a, **k: SimpleNamespace(modes={None: "public"}))
    monkeypatch.setattr(build, "save_shipped", lambda result, key, name, seconds: _written(tmp_path, key))
    lines: list[str] = []
    build_all(progress=False, only=["ilp.chooser"], out=lines.append)
    assert not any(line.startswith("not shipped") for line in lines)


def _written(folder, key):
    path = folder / f"{key}.joblib"
    path.write_bytes(b"model")
    return path
