"""The runner's room stays easy to live in: no function under ``eemrepro/experiments/`` is longer than 80 lines
(issue 60: ``run_experiment`` had grown to 224 lines doing fourteen things in turn)."""

import ast
from pathlib import Path

ROOM = Path(__file__).resolve().parents[1] / "eemrepro" / "experiments"
LIMIT = 80


def long_functions(folder, limit=LIMIT):
    """(file, function, lines) of every function (methods and nested ones included) over ``limit`` lines."""
    out = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    out.append((path.name, node.name, lines))
    return out


def test_no_function_of_the_experiments_room_is_longer_than_80_lines():
    assert long_functions(ROOM) == []


def test_the_check_sees_a_long_function(tmp_path):
    # The rule planted: an 81-line function is caught, an 80-line one is not.
    body = "\n".join(f"    x{i} = {i}" for i in range(79))
    (tmp_path / "a.py").write_text(f"def fits():\n{body}\n")
    (tmp_path / "b.py").write_text(f"def too_long():\n{body}\n    return 0\n")
    assert long_functions(tmp_path) == [("b.py", "too_long", 81)]
