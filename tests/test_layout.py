"""The code layout rules: arrows one way, no circles, one owner per table, rooms kept small.

Read with ``ast`` from the source, so a rule broken anywhere fails here, naming the place:
no import circle between project modules (imports inside functions count too), no module
importing another's underscore name, SQL naming a run table only under ``graphs/runs/``,
``graphs/`` importing nothing from ``bot/`` or ``memory/``, the engine importing nothing of
ours beyond the graph vocabulary and the event emitter; the message values on the ground floor
and no adapter importing the chat layer; at most two context variables; only ``sqlitedb/``
opening a SQLite file; ``assemble`` short and the gateway's collaborators few; no module over
350 lines and no line assigning more than two names; a test folder for every folder of code.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "graphs", "memory", "sqlitedb")
RUN_TABLE_SQL = re.compile(
    r"\b(FROM|INTO|UPDATE|JOIN|TABLE|ON)\s+(runs|run_events|run_waits|run_steps)\b", re.I)


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(path: Path, known: dict[str, Path]) -> list[tuple[str, list[str], int]]:
    """(module imported, names taken from it, line) for every import of a project module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [alias.name for alias in node.names]
            found.append((node.module, names, node.lineno))
            # ``from package import module`` imports that module too
            found += [(f"{node.module}.{name}", [], node.lineno) for name in names
                      if f"{node.module}.{name}" in known]
    return [(module, names, line) for module, names, line in found if module in known]


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: {target for target, _, _ in imports(path, known) if target != name}
            for name, path in known.items()}


def test_no_import_circle_between_project_modules() -> None:
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []
    circles: list[list[str]] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for target in sorted(edges.get(name, ())):
            if state.get(target) == 1:
                circles.append([*path[path.index(target):], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name)
    # a package's __init__ importing its own modules is how a package lists its public names
    circles = [c for c in circles
               if not any(b.startswith(a + ".") for a, b in itertools.pairwise(c))]
    assert circles == [], "import circles: " + "; ".join(" -> ".join(c) for c in circles)


def test_no_module_imports_another_modules_underscore_name() -> None:
    known = modules()
    offences = [f"{path.relative_to(ROOT)}:{line} takes {name} from {module}"
                for path in known.values() for module, names, line in imports(path, known)
                for name in names if name.startswith("_") and not name.startswith("__")]
    assert offences == []


def test_run_table_sql_only_under_graphs_runs() -> None:
    offences = []
    for path in [*modules().values(), *sorted((ROOT / "bench").glob("*.py"))]:
        if path.is_relative_to(ROOT / "graphs" / "runs"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and RUN_TABLE_SQL.search(node.value):
                offences.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offences == [], "SQL on the run tables outside graphs/runs: " + ", ".join(offences)


def test_arrows_point_one_way() -> None:
    edges = graph()
    wrong = [f"{src} imports {dst}" for src, targets in edges.items() for dst in targets
             if (src.startswith("graphs") and dst.split(".")[0] in ("bot", "memory"))
             or (src.startswith("memory") and dst.split(".")[0] in ("bot", "graphs"))
             or (src == "sqlitedb" and dst != "sqlitedb")]
    assert wrong == []
    assert edges["graphs.engine"] <= {"graphs.graph", "graphs.events"}
    assert edges["graphs.graph"] == set()


# Each folder of bot/ and what of bot/ it may import: the floors, top to bottom. ``graphs``,
# ``memory`` and ``sqlitedb`` lie below all of them; ``messages`` (the values every floor
# speaks, and the inbound port) and ``config`` are the ground floor. ``adapters`` is one floor:
# its ``base`` is the outbound port delivery sends through, and an adapter is handed the
# inbound port (``bot.messages.Inbound``) rather than importing the chat layer.
BELOW_THE_TOP = {"access", "adapters", "calendar", "chat", "config", "delivery", "media",
                 "meetings", "messages", "models", "reminders", "schema", "tools", "workflows"}
FOLDER_MAY_IMPORT: dict[str, set[str]] = {
    # the commands
    "cli": BELOW_THE_TOP | {"app", "backups", "dashboard", "evaluation", "retention", "service",
                            "setup"},
    "app": BELOW_THE_TOP | {"backups", "dashboard", "retention"},  # the one assembler
    # what is kept how long: every store's prune, called in one place
    "retention": {"config", "delivery", "meetings", "models", "reminders"},
    "evaluation": {"config", "models"},  # frontdesk eval: triage's classify step, measured
    "backups": {"schema"},  # backup files, restores, the database's upgrade
    "service": set(),  # the systemd unit and sd_notify: nothing of bot
    "schema": {"access", "delivery", "meetings", "models", "reminders"},  # the tables' registry
    "setup": {"adapters", "calendar", "config", "media", "messages", "models", "schema",
              "tools"},
    "dashboard": {"chat", "config", "delivery", "models"},
    "chat": {"access", "adapters", "calendar", "config", "delivery", "media", "meetings",
             "messages", "models", "reminders", "tools", "workflows"},
    "workflows": {"calendar", "config", "models", "tools"},  # the graphs given their services
    "access": {"config", "delivery", "messages"},
    "reminders": {"calendar", "config", "models", "tools"},
    "meetings": {"calendar", "config", "messages", "tools"},  # rules, slots, booking
    "delivery": {"adapters", "config", "messages", "tools"},
    "adapters": {"config", "media", "messages"},  # the platforms: never chat, never delivery
    "media": {"config", "messages", "models"},
    "tools": {"calendar", "config", "messages", "models"},
    "models": {"config"},
    "calendar": {"config"},
    "messages": set(),
    "config": set(),  # settings, logs, text: imports nothing of bot
}


def folder(module: str) -> str:
    """``bot.chat.gateway`` -> ``chat``; ``bot.messages`` -> ``messages``."""
    parts = module.split(".")
    if parts[0] != "bot" or len(parts) == 1:
        return parts[0]
    return parts[1]


def test_every_folder_imports_only_the_floors_below_it() -> None:
    wrong = []
    for src, targets in graph().items():
        here = folder(src)
        if not src.startswith("bot.") or here == "bot":
            continue
        assert here in FOLDER_MAY_IMPORT, f"{src}: a new folder needs its rule here"
        allowed = FOLDER_MAY_IMPORT[here]
        wrong += [f"{src} imports {dst}" for dst in sorted(targets)
                  if dst.startswith("bot.") and folder(dst) not in {here, "bot", *allowed}]
    assert wrong == []


def test_the_examples_of_the_floors_hold() -> None:
    folders = {(folder(src), folder(dst)) for src, targets in graph().items()
               for dst in targets}
    assert not {pair for pair in folders if pair[0] == "config" and pair[1] != "config"
                and pair[1] not in ("sqlitedb",)}, "config imports nothing of bot"
    assert ("delivery", "chat") not in folders
    assert ("adapters", "chat") not in folders, "an adapter is handed the inbound port"
    assert ("adapters", "delivery") not in folders, "delivery sends through adapters.base"
    assert ("models", "reminders") not in folders
    assert ("graphs", "bot") not in folders


def test_every_table_owner_is_in_the_one_migrations_registry() -> None:
    import importlib

    from bot.schema import MIGRATIONS

    owners = {name for name, path in modules().items()
              if re.search(r"^MIGRATIONS\b.*=", path.read_text(encoding="utf-8"), re.M)}
    owners.discard("bot.schema")  # the one ordered list itself
    listed = [migration for owner in sorted(owners)
              for migration in importlib.import_module(owner).MIGRATIONS]
    # every owner's list, whole and in its own order, is in the one list; nothing else is
    assert sorted(name for name, _ in listed) == sorted(name for name, _ in MIGRATIONS)
    for owner in owners:
        names = [name for name, _ in importlib.import_module(owner).MIGRATIONS]
        assert [name for name, _ in MIGRATIONS if name in names] == names, owner
    # and no store applies migrations of its own: the database's opener does, once
    appliers = {name for name, path in modules().items()
                if re.search(r"\bmigrate\(", path.read_text(encoding="utf-8"))}
    assert appliers <= {"sqlitedb", "sqlitedb.database", "bot.backups.upgrade"}, appliers


# -- the message path in rooms (issue 34) ------------------------------------------------------
MAX_MODULE_LINES = 350
MAX_ASSEMBLE_LINES = 60
MAX_GATEWAY_COLLABORATORS = 10
CONTEXT_VARIABLE = re.compile(r"\bContextVar\(")


def product_files() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_no_adapter_imports_the_chat_layer_and_the_values_are_on_the_ground_floor() -> None:
    edges = graph()
    wrong = [f"{src} imports {dst}" for src, targets in edges.items() if folder(src) == "adapters"
             for dst in targets if folder(dst) in ("chat", "delivery", "app")]
    assert wrong == []
    assert {folder(dst) for dst in edges["bot.messages"]} <= set()
    base = (ROOT / "bot" / "adapters" / "base.py").read_text(encoding="utf-8")
    assert "class IncomingMessage" not in base and "def escape_markdown" not in base


def test_at_most_two_context_variables_each_saying_why_a_parameter_cannot_do() -> None:
    found = []
    for path in product_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if CONTEXT_VARIABLE.search(line) and not line.lstrip().startswith("#"):
                found.append((path, number + 1, lines[max(0, number - 6):number]))
    assert len(found) <= 2, [f"{p.relative_to(ROOT)}:{n}" for p, n, _ in found]
    for path, number, above in found:
        comment = " ".join(line.strip().lstrip("# ") for line in above
                           if line.strip().startswith("#"))
        assert "parameter" in comment and len(comment) > 80, (
            f"{path.relative_to(ROOT)}:{number}: say in a comment above it why a parameter "
            "cannot do")


def test_only_sqlitedb_opens_a_sqlite_file() -> None:
    offences = []
    for path in product_files():
        if path.is_relative_to(ROOT / "sqlitedb"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "connect" and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id in ("sqlite3", "sqlitedb"):
                offences.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offences == [], "open the database through bot.schema.open_database: " + \
        ", ".join(offences)


def function_lines(path: Path, name: str) -> int:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    [found] = [node for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef) and node.name == name]
    assert found.end_lineno is not None
    return found.end_lineno - found.lineno + 1


def test_assemble_is_short_and_the_gateway_takes_a_handful_of_collaborators() -> None:
    assert function_lines(ROOT / "bot" / "app.py", "assemble") <= MAX_ASSEMBLE_LINES
    tree = ast.parse((ROOT / "bot" / "chat" / "gateway.py").read_text(encoding="utf-8"))
    [init] = [node for node in ast.walk(tree)
              if isinstance(node, ast.FunctionDef) and node.name == "__init__"]
    taken = [a.arg for a in [*init.args.args, *init.args.kwonlyargs] if a.arg != "self"]
    assert len(taken) <= MAX_GATEWAY_COLLABORATORS, taken


def test_no_product_module_is_over_350_lines() -> None:
    long = {str(path.relative_to(ROOT)): count for path in product_files()
            if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}, "split it by job (never squeeze)"


def names_assigned(target: ast.expr) -> int:
    if isinstance(target, ast.Tuple | ast.List):
        return sum(names_assigned(element) for element in target.elts)
    if isinstance(target, ast.Starred):
        return names_assigned(target.value)
    return 1


def test_no_line_assigns_more_than_two_names() -> None:
    packed = [f"{path.relative_to(ROOT)}:{node.lineno}" for path in product_files()
              for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
              if isinstance(node, ast.Assign)
              and sum(names_assigned(target) for target in node.targets) > 2]
    assert packed == [], "one or two names a line"


def test_tests_mirror_the_package() -> None:
    folders = {path.parent.relative_to(ROOT) for path in product_files()}
    code = {f.relative_to("bot") if f.parts[0] == "bot" else f for f in folders
            if f.parts[0] in ("bot", "graphs", "memory") and f != Path("bot")}
    missing = sorted(str(f) for f in code if not (ROOT / "tests" / f).is_dir())
    assert missing == [], "a test folder for each folder of code"
