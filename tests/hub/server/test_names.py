"""Names: an id is unique only within its owner. Another owner's same id is flagged for a person,
look-alike checks never name what the pusher cannot see, a bare id in the hub's catalogue is
listed only when one owner offers it, and an id the catalogue schema refuses is refused at push."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hub.registry.catalogue import parse_catalogue
from hub.server.core.models import PASSED, EnvFile, Environment, Version
from hub.server.core.problems import Problem
from hub.server.packages.publish import PublishError, check_entry_points, check_env_id


def _env(
    hub: Any, owner: str, env_id: str, project: str, *, private: bool = False, offered: bool = False
) -> None:
    """An environment of ``owner`` straight in the database (with one passed version if ``offered``)."""
    from hub.server.accounts.users import get_owner

    with hub.sessions()() as s, s.begin():
        o = get_owner(s, owner)
        assert o is not None
        env = Environment(
            owner_id=o.id, env_id=env_id, distribution=project, project=project, private=private
        )
        s.add(env)
        if offered:
            v = Version(
                environment=env, version="1.0", manifest_sha256="0" * 64, content_hash="sha256:" + "1" * 64
            )
            v.state = PASSED
            s.add(v)
            name = f"{project.replace('-', '_')}-1.0-py3-none-any.whl"
            s.add(EnvFile(version=v, kind="wheel", filename=name, sha256="2" * 64, size=1))


def _ids(hub: Any) -> list[tuple[str, str]]:
    cat = hub.client.get("/api/v1/catalogue.json")
    assert cat.status_code == 200
    parse_catalogue(cat.text, origin="hub")  # still a valid catalogue
    return sorted((e["author"], e["id"]) for e in cat.json()["environments"])


def test_a_bare_id_two_owners_offer_is_not_in_the_catalogue(hub: Any) -> None:
    _env(hub, "alice", "arith", "alice-arith", offered=True)
    _env(hub, "bob", "textops", "bob-textops", offered=True)
    assert _ids(hub) == [("alice", "arith"), ("bob", "textops")]
    _env(hub, "bob", "arith", "bob-arith", offered=True)
    assert _ids(hub) == [("bob", "textops")]


def test_entry_point_names_follow_the_catalogue_schema() -> None:
    check_env_id("arith_2", "0.1.0")
    for bad in ("Arith", "arith-x", "2arith", ""):
        with pytest.raises(PublishError) as err:
            check_env_id(bad, "0.1.0")
        assert err.value.problem is Problem.UNPROCESSABLE


def test_entry_point_names_in_the_wheel_are_checked(tmp_path: Path) -> None:
    import zipfile

    def wheel(entry_points: str) -> Path:
        path = tmp_path / f"w{len(list(tmp_path.iterdir()))}-0.1.0-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("w-0.1.0.dist-info/entry_points.txt", entry_points)
        return path

    check_entry_points(wheel("[verihub.environments]\narith = arith.env:load\n"), "0.1.0")
    check_entry_points(wheel("[console_scripts]\nArith = arith.cli:main\n"), "0.1.0")  # another group
    with pytest.raises(PublishError, match="Arith"):
        check_entry_points(wheel("[verihub.environments]\narith = a:b\nArith = a:b\n"), "0.1.0")


@pytest.mark.slow
def test_another_owners_same_id_is_flagged(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path]
) -> None:
    _env(hub, "bob", "arith", "bob-arith", offered=True)
    r = hub.push(packed(arith_bundle.bundle))
    assert r.status_code == 201, r.text
    assert "same id: bob/arith" in r.json()["flagged"]
    assert hub.client.get("/api/v1/envs/alice/arith").json()["offered"] == []


@pytest.mark.slow
def test_look_alikes_and_taken_names_reveal_no_private_environment(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path]
) -> None:
    _env(hub, "lab", "arith", "verihub-arlth", private=True)  # bob cannot see lab's environments
    archive = packed(arith_bundle.bundle)
    r = hub.push(archive, "bob")
    assert r.status_code == 201 and r.json()["flagged"] == "", r.text
    shown = hub.client.get("/api/v1/envs/bob/arith").text + hub.client.get("/bob/arith").text
    assert "lab/arith" not in shown and "verihub-arlth" not in shown


@pytest.mark.slow
def test_a_taken_distribution_name_does_not_name_its_private_holder(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path]
) -> None:
    _env(hub, "lab", "secret_env", "verihub-arith", private=True)
    r = hub.push(packed(arith_bundle.bundle), "bob")
    assert r.status_code == 409, r.text
    assert "lab" not in r.text and "secret_env" not in r.text
