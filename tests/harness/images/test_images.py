"""Image recipes without an engine: content hashing, tags, apt mirror parsing, the Windows host
build → base tag mapping, and the messages for images that cannot be built here."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.images.build import check_buildable
from harness.images.recipes import (
    PWSH_SKIP_REASON,
    RECIPES,
    ImageBuildError,
    WindowsBase,
    cache_dir,
    hash_recipe,
    image_tag,
    package_list,
    parse_debian_mirror,
    parse_windows_build,
    recipe_files,
    recipe_hash,
    rootfs_key,
    windows_base_for_build,
)

DEB822 = """\
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://mirror.example.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example.org/debian-security
Suites: bookworm-security
Components: main
"""


def test_recipe_hash_is_stable_for_unchanged_files() -> None:
    assert recipe_hash("linux-bash") == recipe_hash("linux-bash")
    files = recipe_files(RECIPES["linux-bash"].directory)
    assert hash_recipe("linux-bash", files) == hash_recipe("linux-bash", dict(reversed(list(files.items()))))


def test_recipe_hash_changes_when_a_byte_a_file_name_or_the_builder_changes() -> None:
    files = {"Dockerfile": b"FROM x\n", "setup.sh": b"echo hi\n"}
    base = hash_recipe("linux-bash", files)
    assert hash_recipe("linux-bash", {**files, "setup.sh": b"echo hI\n"}) != base
    assert hash_recipe("linux-bash", {"Dockerfile": b"FROM x\n", "setup2.sh": b"echo hi\n"}) != base
    assert hash_recipe("linux-bash", {**files, "extra": b""}) != base
    assert hash_recipe("linux-pwsh", files) != base
    assert hash_recipe("linux-bash", files, builder_version="999") != base


@given(st.dictionaries(st.text("abc/", min_size=1, max_size=5), st.binary(max_size=8), max_size=4),
       st.text("abc/", min_size=1, max_size=5), st.binary(max_size=8))
def test_recipe_hash_differs_whenever_any_file_content_differs(files: dict[str, bytes], name: str,
                                                               data: bytes) -> None:
    """Invariant: changing (or adding) one file's bytes always changes the hash."""
    changed = {**files, name: data + b"!"} if files.get(name) == data else {**files, name: data}
    assert hash_recipe("r", changed) != hash_recipe("r", files)


def test_recipe_hash_changes_when_a_recipe_file_on_disk_changes(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM a\n")
    before = hash_recipe("x", recipe_files(tmp_path))
    (tmp_path / "Dockerfile").write_text("FROM b\n")
    assert hash_recipe("x", recipe_files(tmp_path)) != before


def test_image_tag_carries_the_first_twelve_hash_characters() -> None:
    digest = recipe_hash("linux-bash")
    assert image_tag("linux-bash") == f"toolproof/linux-bash:{digest[:12]}"
    assert image_tag("linux-pwsh", "0123456789abcdef") == "toolproof/linux-pwsh:0123456789ab"


def test_every_recipe_has_a_dockerfile_and_linux_bash_lists_its_packages() -> None:
    for recipe in RECIPES.values():
        assert (recipe.directory / "Dockerfile").is_file(), recipe.name
    assert package_list("linux-bash") == ("bash", "python3", "ripgrep", "git", "procps", "coreutils",
                                          "ca-certificates")


def test_rootfs_key_depends_on_packages_suite_and_arch_not_their_order() -> None:
    key = rootfs_key("bookworm", ("bash", "git"), "amd64")
    assert key == rootfs_key("bookworm", ("git", "bash"), "amd64")
    assert key != rootfs_key("bookworm", ("bash", "git", "vim"), "amd64")
    assert key != rootfs_key("trixie", ("bash", "git"), "amd64")
    assert key != rootfs_key("bookworm", ("bash", "git"), "arm64")
    assert len(key) == 16


def test_mirror_is_read_from_deb822_sources_skipping_security() -> None:
    assert parse_debian_mirror([DEB822]) == "http://mirror.example.org/debian"


def test_mirror_is_read_from_one_line_sources_with_options_and_trailing_slash() -> None:
    text = ("# comment\n"
            "deb-src http://src.example.org/debian bookworm main\n"
            "deb http://security.example.org/debian-security bookworm-security main\n"
            "deb [arch=amd64 signed-by=/k.gpg] https://ftp.example.net/debian/ bookworm main contrib\n")
    assert parse_debian_mirror([text]) == "https://ftp.example.net/debian"


def test_mirror_prefers_an_entry_serving_the_suite_and_ignores_other_archives() -> None:
    other = "deb https://packages.example.com/apt cloud-sdk main\n"
    updates_only = "deb http://a.example/debian bookworm-updates main\n"
    main = "deb http://b.example/debian bookworm main\n"
    assert parse_debian_mirror([other, updates_only, main]) == "http://b.example/debian"
    assert parse_debian_mirror([other]) is None
    assert parse_debian_mirror([DEB822.replace("Types: deb\n", "Types: deb\nEnabled: no\n", 1)]) is None


def test_cache_dir_honours_toolproof_then_xdg_then_home(tmp_path: Path) -> None:
    assert cache_dir({"TOOLPROOF_CACHE_DIR": str(tmp_path / "c")}) == tmp_path / "c"
    assert cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "toolproof"
    assert cache_dir({}).parts[-2:] == (".cache", "toolproof")


@pytest.mark.parametrize(("build", "expected"), [
    (17763, WindowsBase("ltsc2019", "process")),
    (20348, WindowsBase("ltsc2022", "process")),
    (26100, WindowsBase("ltsc2025", "process")),
    (22631, WindowsBase("ltsc2022", "hyperv")),
    (19045, WindowsBase("ltsc2019", "hyperv")),
    (27000, WindowsBase("ltsc2025", "hyperv")),
])
def test_windows_host_build_maps_to_a_servercore_tag_and_isolation(build: int, expected: WindowsBase) -> None:
    assert windows_base_for_build(build) == expected


def test_windows_host_older_than_every_base_is_refused() -> None:
    with pytest.raises(ImageBuildError, match="Windows host build 14393 is older than every supported base"):
        windows_base_for_build(14393)


@pytest.mark.parametrize(("text", "build"), [
    ("10.0.20348.2113", 20348),
    ("10.0 20348 (20348.1.amd64fre.fe_release.210507-1500)", 20348),
    ("Windows Server 2019 Datacenter Version 1809 (OS Build 17763.5458) 10.0.17763.5458", 17763),
])
def test_windows_build_number_is_read_from_engine_version_strings(text: str, build: int) -> None:
    assert parse_windows_build(text) == build


def test_windows_pwsh_on_a_linux_engine_fails_with_a_clear_message_and_pwsh_skip_reason() -> None:
    with pytest.raises(ImageBuildError) as info:
        check_buildable(RECIPES["windows-pwsh"], "linux", registry_reachable=True)
    assert str(info.value) == (
        "cannot build windows-pwsh: it needs a Docker engine running windows containers, but this engine "
        "runs linux containers; use a Windows host with Docker in Windows-containers mode")
    assert info.value.skip_reason == PWSH_SKIP_REASON == "requires pwsh image"


def test_linux_pwsh_without_a_registry_fails_with_a_clear_message_and_pwsh_skip_reason() -> None:
    with pytest.raises(ImageBuildError) as info:
        check_buildable(RECIPES["linux-pwsh"], "linux", registry_reachable=False, detail="no such host")
    assert str(info.value).startswith("cannot build linux-pwsh: no container registry is reachable (no such host)")
    assert info.value.skip_reason == "requires pwsh image"


def test_linux_bash_is_buildable_offline_and_not_on_a_windows_engine() -> None:
    check_buildable(RECIPES["linux-bash"], "linux", registry_reachable=False)
    with pytest.raises(ImageBuildError, match="needs a Docker engine running linux containers") as info:
        check_buildable(RECIPES["linux-bash"], "windows", registry_reachable=True)
    assert info.value.skip_reason is None


def test_unknown_image_name_lists_the_known_ones() -> None:
    with pytest.raises(ImageBuildError, match="unknown image 'nope'; known images: linux-bash, linux-pwsh, windows-pwsh"):
        recipe_hash("nope")
