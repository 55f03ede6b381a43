"""Every path, command, setting and module the README and docs/ name exists.

Docs rot quietly: a module moves, a setting is renamed, a make target goes, and
the page that names it still reads well. This reads every code span (text in
backticks) of ``README.md`` and ``docs/*.md`` and checks the ones that name a
thing of this repository:

- a repository path (``ladder/web/rows.py``, ``docs/ratings.md``, ``examples/cpp/``);
- a make target (``make cluster``) and a module run with ``python -m``;
- a management command (``manage.py rerate``, ``manage.py grpcserver``);
- a setting (``LADDER_*`` / ``DIGDOWN_*``): read somewhere in the code;
- a dotted module or attribute of ours (``ladder.ratings.systems``,
  ``workers.runner.match.play_match``).

A span that names something outside the repository (a URL route, a file a
command writes under ``var/``, a Debian path) is not of these shapes, or is
listed in ``NOT_OURS`` with the reason.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Top-level folders whose paths a doc may name; anything else with a slash is a route,
# a URL or a path on the reader's machine.
OUR_ROOTS = (
    "bench/",
    "deploy/",
    "docs/",
    "engine/",
    "examples/",
    "ladder/",
    "protos/",
    "sdk/",
    "telemetry/",
    "tests/",
    "workers/",
    ".ci/",
)
OUR_PACKAGES = ("ladder", "engine", "workers", "deploy", "telemetry", "bench", "digdown")
# Paths that exist only once something has run: made by a build or by a command.
MADE_AT_RUN_TIME = (
    "engine/rules/_compiled",
    "examples/node/node_modules",
    "examples/cpp/build",
)
CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
SETTING = re.compile(r"\b((?:LADDER|DIGDOWN)_[A-Z0-9_]*[A-Z0-9])\b")
MAKE = re.compile(r"^make ([a-z][a-z0-9-]*)")
PYTHON_M = re.compile(r"(?:^|\s)(?:\S*python3?) -m ([a-z_][a-z0-9_.]*)")
MANAGE = re.compile(r"manage\.py ([a-z_]+)")
RPC_CALL = re.compile(r"^[a-z_]+\.[A-Z]\w*\(")
OURS = r"(?:ladder|engine|workers|deploy|telemetry|digdown)"
DOTTED = re.compile(rf"^({OURS}(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def spans() -> Iterator[tuple[str, str]]:
    for doc in DOCS:
        in_fence = False
        for line in doc.read_text().splitlines():
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                # Commands in fenced blocks are checked like spans: they are what readers run.
                yield doc.relative_to(ROOT).as_posix(), line.strip()
                continue
            for match in CODE_SPAN.finditer(line):
                yield doc.relative_to(ROOT).as_posix(), match.group(1).strip()


@cache
def make_targets() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text()
    return frozenset(re.findall(r"^([a-z][a-z0-9-]*):", text, flags=re.MULTILINE))


@cache
def code_text() -> str:
    """Every Python, YAML, TOML, shell and Makefile text of ours, to find a setting's reader."""
    parts = []
    for pattern in (
        "**/*.py",
        "**/*.yml",
        "**/*.yaml",
        "**/*.toml",
        "**/*.sh",
        "Makefile",
        "Dockerfile",
        ".ci/run",
        ".env.example",
        "**/*.js",
        "**/*.cc",
        "**/*.cpp",
    ):
        for path in ROOT.glob(pattern):
            if ".venv" in path.parts or "node_modules" in path.parts or path.is_dir():
                continue
            if path.parts[len(ROOT.parts)] == "docs" or path == Path(__file__).resolve():
                continue
            parts.append(path.read_text(errors="replace"))
    return "\n".join(parts)


@cache
def management_commands() -> frozenset[str]:
    return frozenset(p.stem for p in ROOT.glob("ladder/*/management/commands/*.py"))


def module_path(dotted: str) -> Path | None:
    """The file or package of a dotted module name of ours, if there is one."""
    parts = dotted.split(".")
    base = ROOT / "sdk" if parts[0] == "digdown" else ROOT
    candidate = base.joinpath(*parts)
    if candidate.with_suffix(".py").is_file():
        return candidate.with_suffix(".py")
    if (candidate / "__init__.py").is_file():
        return candidate / "__init__.py"
    return None


@cache
def top_level_names(path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                elements = target.elts if isinstance(target, ast.Tuple) else [target]
                names.update(t.id for t in elements if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


@cache
def proto_names() -> frozenset[str]:
    """``digdown.v1.X`` for every service, message and enum of the protos."""
    text = "\n".join(p.read_text() for p in ROOT.glob("protos/digdown/v1/*.proto"))
    return frozenset(
        f"digdown.v1.{n}" for n in re.findall(r"^\s*(?:service|message|enum) (\w+)", text, re.M)
    )


def dotted_exists(dotted: str) -> bool:
    """A module, a name defined in it, a name of the protos, or a logger/task name in the code."""
    if dotted.startswith("digdown.v1.") and ".".join(dotted.split(".")[:3]) in proto_names():
        return True
    if f'"{dotted}"' in code_text():
        return True
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = module_path(".".join(parts[:cut]))
        if path is None:
            continue
        rest = parts[cut:]
        return not rest or rest[0] in top_level_names(path)
    return False


def path_exists(text: str) -> bool:
    path = text.split("::", 1)[0].split(":", 1)[0].rstrip(".,;)")
    if any(path.startswith(made) for made in MADE_AT_RUN_TIME):
        return True
    if any(ch in path for ch in "*?[<{"):
        base = re.split(r"[*?\[<{]", path, maxsplit=1)[0]
        return (
            bool(list(ROOT.glob(path))) or (ROOT / base).exists() or (ROOT / base).parent.exists()
        )
    return (ROOT / path).exists()


def problems_of(text: str) -> Iterator[str]:
    for word in text.split():
        word = word.strip("()[],;'\"")
        if word.startswith(OUR_ROOTS) and "/" in word and not path_exists(word):
            yield f"no such path: {word}"
    if (match := MAKE.match(text)) and match.group(1) not in make_targets():
        yield f"no make target: {match.group(1)}"
    for module in PYTHON_M.findall(text):
        if module.split(".")[0] in OUR_PACKAGES and module_path(module) is None:
            yield f"no module for python -m: {module}"
    for command in MANAGE.findall(text):
        if command not in management_commands() and command not in DJANGO_COMMANDS:
            yield f"no management command: {command}"
    for setting in SETTING.findall(text):
        if setting not in code_text():
            yield f"no code reads the setting: {setting}"
    if re.fullmatch(r"[a-z_]+\.proto", text):
        if not (ROOT / "protos/digdown/v1" / text).is_file():
            yield f"no such proto: {text}"
    elif (match := DOTTED.match(text)) and not dotted_exists(match.group(1)):
        if RPC_CALL.match(text):  # a call on a stub in an example: `ladder.CreateBot(...)`
            return
        yield f"no such module or name: {match.group(1)}"


# Django's own commands that the docs name beside ours.
DJANGO_COMMANDS = frozenset(
    {
        "migrate",
        "createsuperuser",
        "runserver",
        "shell",
        "collectstatic",
        "check",
        "makemigrations",
        "dbshell",
        "changepassword",
        "sendtestemail",
        "test",
    }
)


IMPORT_FROM = re.compile(
    rf"^\s*from ({OURS}[\w.]*) import (\([^)]*\)|[^\n]+)",
    re.M,
)


def imports_of_fenced_code() -> Iterator[tuple[str, str]]:
    """``from ours import a, b`` in fenced examples: each ``module.name``."""
    for doc in DOCS:
        for module, names in IMPORT_FROM.findall(doc.read_text()):
            for line in names.strip("()").splitlines() or [names]:
                for name in line.split("#", 1)[0].split(","):
                    name = name.strip().split(" as ")[0].strip("() ")
                    if name:
                        yield doc.relative_to(ROOT).as_posix(), f"{module}.{name}"


def all_problems() -> list[str]:
    found = [
        f"{doc}: `{dotted}`: no such module or name"
        for doc, dotted in imports_of_fenced_code()
        if not dotted_exists(dotted)
    ]
    for doc, text in spans():
        found.extend(f"{doc}: `{text}`: {problem}" for problem in problems_of(text))
    return sorted(set(found))


def test_every_thing_the_docs_name_exists() -> None:
    problems = all_problems()
    assert not problems, "stale references in the docs:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "text",
    [
        "ladder/no_such_module.py",
        "make no-such-target",
        "LADDER_NO_SUCH_SETTING",
        "ladder.ratings.no_such_name",
        "python -m engine.no_such_module",
        "manage.py no_such_command",
    ],
)
def test_a_stale_reference_is_found(text: str) -> None:
    assert list(problems_of(text))


if __name__ == "__main__":  # pragma: no cover - a quick listing while editing docs
    print("\n".join(all_problems()) or "no stale references")
