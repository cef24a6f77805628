"""The ripgrep scan policy shared by grep and glob (spec grep.3, spec glob.2): the default scan excludes,
the sensitive-path excludes (always passed last), the broad-file excludes, and the
``is_sensitive_search_path`` test that keeps both tools out of sensitive roots. Pure.
"""

from __future__ import annotations

from tools_impl.search.minimatch import minimatch

DEFAULT_SCAN_DIRECTORY_NAMES: tuple[str, ...] = (
    ".worktrees", "node_modules", ".pnpm-store", ".venv", "venv", "build_env", "__pycache__",
    ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".nox", ".gradle", ".cache", "dist",
    "build", "out", "coverage",
)

LOCAL_SENSITIVE_GLOB_EXCLUDES: tuple[str, ...] = (
    # VCS metadata
    "!**/.git/**", "!**/.svn/**", "!**/.hg/**", "!**/.bzr/**", "!**/.jj/**", "!**/.sl/**",
    # secrets
    "!.env", "!.env.*", "!*.key", "!*.pem", "!*.p12", "!*.pfx", "!**/.ssh/**", "!**/.aws/**",
    "!**/.kube/**", "!.npmrc", "!id_rsa", "!id_dsa", "!id_ecdsa", "!id_ed25519",
)

DEFAULT_BROAD_FILE_EXCLUDES: tuple[str, ...] = (
    "!*.{png,jpg,jpeg,gif,webp,bmp,ico,tif,tiff,heic,avif,svgz}",
    "!*.{mp3,wav,flac,aac,ogg,m4a,mp4,mov,avi,mkv,webm}",
    "!*.{zip,tar,gz,tgz,bz2,xz,7z,rar}",
    "!*.{exe,dll,so,dylib,a,o,class,jar,wasm,pyc,pyo,ttf,otf,woff,woff2,eot}",
    "!*.{sqlite,sqlite3,db,safetensors,ckpt,onnx,pt,pth,bin,pdf}",
)

DEFAULT_SENSITIVE_ROOT_PROBE = "__mavis_sensitive_root_probe__"


def scan_exclude_args(names: tuple[str, ...] = DEFAULT_SCAN_DIRECTORY_NAMES) -> list[str]:
    return [f"--iglob=!**/{name}/**" for name in names]


def sensitive_exclude_args() -> list[str]:
    return [f"--iglob={entry}" for entry in LOCAL_SENSITIVE_GLOB_EXCLUDES]


def broad_exclude_args() -> list[str]:
    return [f"--iglob={entry}" for entry in DEFAULT_BROAD_FILE_EXCLUDES]


def is_sensitive_search_path(path: str, probe: str = DEFAULT_SENSITIVE_ROOT_PROBE) -> bool:
    """Whether a search root lies in (or is) a sensitive location (spec grep.3).

    ``\\`` → ``/`` and one trailing ``/`` dropped; a sensitive glob without ``/`` is matched
    against every path segment, one with ``/`` against the whole path and against
    ``${path}/${probe}`` (so a root that *is* ``.git`` counts). Matching is minimatch with
    ``dot`` and case-insensitive.
    """
    norm = path.replace("\\", "/")
    if norm.endswith("/"):
        norm = norm[:-1]
    segments = norm.split("/")
    for entry in LOCAL_SENSITIVE_GLOB_EXCLUDES:
        pattern = entry[1:] if entry.startswith("!") else entry
        if "/" not in pattern:
            if any(minimatch(seg, pattern, dot=True, nocase=True) for seg in segments):
                return True
        elif minimatch(norm, pattern, dot=True, nocase=True) or minimatch(
            f"{norm}/{probe}", pattern, dot=True, nocase=True
        ):
            return True
    return False
