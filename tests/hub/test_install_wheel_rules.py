"""Wheel rules that close install holes: bytecode, entry points read two ways, stray metadata.

Each hostile wheel is refused by :func:`hub.registry.wheels.verify_wheel`; the clean wheel built
the same way passes (the negative case), and for the entry-point smuggles the test shows that
``importlib.metadata`` really reads another target than the reviewed one.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from importlib.metadata import Distribution
from pathlib import Path

import pytest

from hub.registry.entry_points_txt import EntryPointsError, parse_entry_points
from hub.registry.wheels import WheelError, verify_wheel

ENV = "vh_probe"
PKG = "verihub_vh_probe"
DIST_INFO = "verihub_vh_probe-0.1.0.dist-info"
GOOD_EP = f"[verihub.environments]\n{ENV} = {PKG}:load_environment\n"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build(
    folder: Path,
    *,
    entry_points: str | bytes = GOOD_EP,
    extra: dict[str, bytes] | None = None,
    dist_info: str = DIST_INFO,
    name: str = "verihub-vh-probe",
) -> Path:
    """A hand-made wheel of ``vh_probe`` (RECORD always right) with the given changes."""
    ep = entry_points.encode() if isinstance(entry_points, str) else entry_points
    files: dict[str, bytes] = {
        f"{PKG}/__init__.py": b"def load_environment():\n    raise RuntimeError('not for this test')\n",
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n".encode(),
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist_info}/entry_points.txt": ep,
        **(extra or {}),
    }
    lines = [_record_line(n, d) for n, d in files.items()] + [f"{dist_info}/RECORD,,"]
    path = folder / "verihub_vh_probe-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for member, data in files.items():
            zf.writestr(member, data)
        zf.writestr(f"{dist_info}/RECORD", "\n".join(lines) + "\n")
    return path


def importlib_reads(tmp_path: Path, text: str) -> dict[str, str]:
    """``{group/name: target}`` as importlib.metadata (what ``load_environment`` uses) reads it."""
    folder = tmp_path / "meta" / DIST_INFO
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "entry_points.txt").write_bytes(text.encode())
    eps = Distribution.at(folder).entry_points
    return {f"{ep.group}/{ep.name}": ep.value for ep in eps}


def test_the_clean_wheel_passes(tmp_path: Path) -> None:
    assert verify_wheel(str(build(tmp_path)), env_id=ENV).import_package == PKG


# -- 1. bytecode ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("extra", "declared"),
    [
        ({f"{PKG}/__pycache__/__init__.cpython-311.pyc": b"\x00bytecode"}, ()),
        ({f"{PKG}/evil.pyc": b"\x00bytecode"}, ()),  # sourceless: `import verihub_vh_probe.evil` runs it
        ({f"{PKG}/sub/__pycache__/notes.txt": b"x"}, ()),
        ({"__pycache__/site.cpython-311.pyc": b"\x00"}, ("__pycache__/*",)),  # even when declared
        ({"helper.pyc": b"\x00"}, ("helper.pyc",)),
    ],
)
def test_bytecode_in_a_wheel_is_refused(
    tmp_path: Path, extra: dict[str, bytes], declared: tuple[str, ...]
) -> None:
    """Bytecode is left out of the content hash (it is not the reviewed source) and Python may
    run it instead of the source, so a wheel that carries any is refused, declared or not."""
    wheel = build(tmp_path, extra=extra)
    with pytest.raises(WheelError, match="bytecode"):
        verify_wheel(str(wheel), env_id=ENV, extra_files=declared)


# -- 2. entry points read two ways ------------------------------------------------------------
SMUGGLED = {
    # configparser joins the indented lines to the value above; importlib.metadata reads them
    # as a console script (pip installs it) and as a second vh_probe (the last one wins)
    "continued-script": GOOD_EP + "  [console_scripts]\n  pip = os:system\n",
    "continued-target": GOOD_EP + "  vh_probe = os:system\n",
    # U+2028 is a line break for str.splitlines (importlib.metadata) but not for configparser
    "unicode-line-break": f"[verihub.environments]\n{ENV} = {PKG}:load_environment\u2028{ENV} = os:system\n",
}


@pytest.mark.parametrize("case", sorted(SMUGGLED))
def test_entry_points_that_readers_disagree_on_are_refused(tmp_path: Path, case: str) -> None:
    text = SMUGGLED[case]
    # the smuggle is real: Python resolves the environment (or a program) to another target
    seen = importlib_reads(tmp_path, text)
    assert seen.get(f"verihub.environments/{ENV}") == "os:system" or "console_scripts/pip" in seen
    with pytest.raises(WheelError, match="entry_points.txt"):
        verify_wheel(str(build(tmp_path, entry_points=text)), env_id=ENV)


@pytest.mark.parametrize(
    "text",
    [
        GOOD_EP + "[verihub.environments]\nother = os:system\n",  # a repeated group
        GOOD_EP + "[Verihub.Environments]\nother = os:system\n",  # the same group in other case
        GOOD_EP + "VH_PROBE = os:system\n",  # the same name, normalised
        GOOD_EP + "vh-probe = os:system\n",
        GOOD_EP + "; vh_probe = os:system\n",  # a comment for configparser, an entry for importlib
        "\ufeff" + GOOD_EP,  # a byte-order mark
        "x = y:z\n" + GOOD_EP,  # an entry before any group
        f"[verihub.environments]\n{ENV} = {PKG}:load_environment [extra]\n",
        f"[verihub.environments]\n{ENV} = {PKG}:load_environment # note\n",
        f"[verihub.environments]\n{ENV} = {PKG} : load_environment\n",
        f"[ verihub.environments ]\n{ENV} = {PKG}:load_environment\n",
        f"[[verihub.environments]]\n{ENV} = {PKG}:load_environment\n",
        f"[verihub.environments]\n{ENV} = {PKG}:load_environment\r[console_scripts]\rpip = os:system\n",
    ],
)
def test_ambiguous_entry_points_are_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(WheelError, match="entry_points.txt"):
        verify_wheel(str(build(tmp_path, entry_points=text)), env_id=ENV)


def test_non_utf8_entry_points_are_refused(tmp_path: Path) -> None:
    with pytest.raises(WheelError, match="entry_points.txt"):
        verify_wheel(str(build(tmp_path, entry_points=GOOD_EP.encode() + b"# \xff\n")), env_id=ENV)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (GOOD_EP + "arith = verihub_vh_probe:load_environment\n", "registers other environments"),
        (f"[verihub.environments]\n{ENV} = os:system\n", "outside its import package"),
        (f"[verihub.environments]\n{ENV} = {PKG}\n", "module:attribute"),
        (GOOD_EP + "[pytest11]\nprobe = verihub_vh_probe\n", "pytest11"),
    ],
)
def test_entry_points_beyond_the_environment_are_refused(tmp_path: Path, text: str, match: str) -> None:
    """A wheel may register its own environment id only, pointing into its import package, and no
    plugin groups that other programs load (a wheel could otherwise take over ``arith``)."""
    with pytest.raises(WheelError, match=match):
        verify_wheel(str(build(tmp_path, entry_points=text)), env_id=ENV)


@pytest.mark.parametrize(
    "text",
    [
        GOOD_EP,
        "# written by setuptools\n\n" + GOOD_EP + "\n",
        GOOD_EP.replace("\n", "\r\n"),
        GOOD_EP + "[console_scripts]\nvh-probe = verihub_vh_probe.cli:main\n",
    ],
)
def test_the_strict_reader_agrees_with_importlib_on_what_it_accepts(tmp_path: Path, text: str) -> None:
    ours = {f"{g}/{n}": t for g, names in parse_entry_points(text.encode()).items() for n, t in names.items()}
    assert ours == importlib_reads(tmp_path, text)


def test_the_strict_reader_names_the_line() -> None:
    with pytest.raises(EntryPointsError, match="line 3"):
        parse_entry_points((GOOD_EP + "  pip = os:system\n").encode())


# -- 2b. one metadata folder, named as the wheel ----------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dist_info": "other_dist-0.1.0.dist-info"}, "does not match the wheel's name"),
        ({"dist_info": "verihub_vh_probe-0.2.0.dist-info"}, "does not match the wheel's name"),
        ({"name": "other-dist"}, "METADATA names"),
        ({"extra": {"other-1.0.dist-info/entry_points.txt": GOOD_EP.encode()}}, "one .dist-info"),
    ],
)
def test_metadata_must_be_the_wheels_own(tmp_path: Path, kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(WheelError, match=match):
        verify_wheel(str(build(tmp_path, **kwargs)), env_id=ENV)  # type: ignore[arg-type]


@pytest.mark.parametrize("member", ["legacy.egg-info/entry_points.txt", "other-1.0.dist-info/METADATA"])
def test_metadata_folders_stay_refused_when_declared(tmp_path: Path, member: str) -> None:
    """A second metadata folder is a second set of entry points for importlib.metadata; the
    catalogue cannot declare one as an extra file."""
    wheel = build(tmp_path, extra={member: GOOD_EP.encode()})
    with pytest.raises(WheelError, match="metadata"):
        verify_wheel(str(wheel), env_id=ENV, extra_files=[member])


# -- 2c. the check and submit read entry points the same strict way ---------------------------
@pytest.mark.parametrize("case", sorted(SMUGGLED))
def test_the_check_reads_entry_points_with_the_strict_reader(tmp_path: Path, case: str) -> None:
    """The check names the environment it exercises from entry_points.txt; read loosely, a file
    could show it one target while an install runs another (the install would refuse the wheel,
    but the report must not pass it either)."""
    from hub.review.check.report import CheckReport
    from hub.review.check.runner import _static_checks

    meta = tmp_path / "stage" / DIST_INFO
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: verihub-vh-probe\nVersion: 0.1.0\nSummary: s\n"
    )
    (meta / "entry_points.txt").write_text(GOOD_EP)
    report = CheckReport(target="t")
    assert _static_checks(meta.parent, report) == ENV  # negative case: the plain file reads fine
    (meta / "entry_points.txt").write_text(SMUGGLED[case])
    report = CheckReport(target="t")
    assert _static_checks(meta.parent, report) is None
    failed = report.result("metadata")
    assert failed is not None and failed.status == "fail" and "entry_points.txt" in failed.reason


@pytest.mark.parametrize(
    ("extra", "entry_points"),
    [
        ({f"{PKG}/__pycache__/__init__.cpython-311.pyc": b"\x00"}, GOOD_EP),
        ({}, SMUGGLED["continued-target"]),
        ({"helper.py": b"x = 1\n"}, GOOD_EP),
    ],
)
def test_the_check_fails_a_wheel_that_install_would_refuse(
    tmp_path: Path, extra: dict[str, bytes], entry_points: str
) -> None:
    """`verihub check WHEEL` must not pass what `verihub install` refuses: the check exercises a
    wheel only once it passes the same verification (its id read from the wheel itself)."""
    from hub.review.check.runner import check

    report = check(str(build(tmp_path, extra=extra, entry_points=entry_points)))
    installs = report.result("installs")
    assert installs is not None and installs.status == "fail"
    assert "verihub install would refuse it" in installs.reason
    (tmp_path / "clean").mkdir()
    assert verify_wheel(str(build(tmp_path / "clean")), env_id=None).env_id == ENV  # id from the wheel
