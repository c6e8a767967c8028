"""The result store: the old JSON-lines reader against the columnar one, in one run.

"Old" is the code and the committed stores of ``--base`` (by default the
commit before the store became columnar), checked out in a temporary git
worktree and run from there; "new" is this checkout. Each command runs as its
own process; wall seconds and the peak resident memory of the process (and
its children) come from the operating system (``os.wait4``). Measured:

* ``eemrepro tables`` over the eight stores of ``.ci/run``'s TABLE_RESULTS
  (target: <= 20 s and <= 1 GB);
* ``eemrepro check results/esmm_table4`` (target: <= 5 s);
* resuming ``results/esmm_table4`` with nothing pending, from the store's own
  ``config.yaml`` (``configs/esmm_table4.yaml`` has since moved to 10 inner
  folds, SPEC section 6, so it has everything pending): the dry run (reading
  the store, matching every unit; target <= 3 s) and the whole command on a
  copy of the store (which also prints the run's table);
* the size of ``results/`` on disk (target: <= a third of the old).

Needs the data mirror for the resume rows (the data checksums): ``--mirror``
or ``$EEMREPRO_MIRROR``. ``--skip-old`` measures the new side alone (the old
``tables`` takes 10-15 minutes on 2 cores).

Usage: python benchmarks/bench_store.py [--base REV] [--mirror DIR] [--skip-old] [--repeat N]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE_RESULTS = ["results/uci", "results/unbalanced", "results/extreme", "results/dcs_correlation",
                 "results/lssvm_ensemble", "results/melm_table2", "results/melm_table3", "results/esmm_table4"]


def _git(*args):
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()


def default_base():
    """The commit before the one that added the columnar segments."""
    added = _git("log", "--diff-filter=A", "--format=%H", "-1", "--", "eemrepro/store/_segments.py")
    return f"{added}~1" if added else "HEAD"


def measure(cmd, cwd, env):
    """(wall seconds, peak RSS in MB, exit code) of one command and its children."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    if proc.returncode not in (0, 1):
        sys.stderr.write(f"{' '.join(cmd)} exited {proc.returncode}:\n{err[-2000:]}\n")
    return wall, usage.ru_maxrss / 1024, proc.returncode


def disk_mb(folder):
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()) / 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", help="the old side's commit (default: before the columnar store)")
    parser.add_argument("--mirror", default=os.environ.get("EEMREPRO_MIRROR"), help="data mirror folder")
    parser.add_argument("--skip-old", action="store_true", help="measure the new side only")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each new-side command (the best is kept)")
    args = parser.parse_args(argv)

    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if args.mirror:
        env["EEMREPRO_MIRROR"] = str(Path(args.mirror).resolve())
    sides = {"new": (ROOT, env)}
    worktree = None
    if not args.skip_old:
        base = args.base or default_base()
        worktree = Path(tempfile.mkdtemp(prefix="eemrepro-old-")) / "tree"
        _git("worktree", "add", "--detach", str(worktree), base)
        # The old package shadows the installed (editable) one: PYTHONPATH comes first on sys.path.
        sides["old"] = (worktree, dict(env, PYTHONPATH=str(worktree)))
        print(f"old: {base} ({_git('rev-parse', '--short', base)}) in {worktree}")
    print(f"new: {_git('rev-parse', '--short', 'HEAD')} in {ROOT}")
    rows = {}
    scratch = Path(tempfile.mkdtemp(prefix="eemrepro-bench-"))
    try:
        for side, (cwd, side_env) in sides.items():
            exe = [sys.executable, "-m", "eemrepro"]
            which = subprocess.run([*exe[:1], "-c", "import eemrepro; print(eemrepro.__file__)"], cwd=cwd,
                                   env=side_env, capture_output=True, text=True).stdout.strip()
            print(f"  {side} runs {which}")
            repeat = args.repeat if side == "new" else 1
            commands = {
                "tables (TABLE_RESULTS)": exe + ["tables", *TABLE_RESULTS, "--format", "md", "--format", "csv",
                                                 "--format", "latex", "--layout", "full",
                                                 "--out", str(scratch / f"tables-{side}")],
                "check results/esmm_table4": exe + ["check", "results/esmm_table4", "--report-only"],
            }
            if args.mirror:
                commands["resume esmm_table4, dry run"] = exe + ["run", "results/esmm_table4/config.yaml", "--dry-run",
                                                                 "--out", "results/esmm_table4"]
                copy = scratch / f"esmm-{side}"
                shutil.copytree(Path(cwd) / "results" / "esmm_table4", copy)
                commands["resume esmm_table4, whole command"] = exe + ["run", str(copy / "config.yaml"), "--quiet",
                                                                       "--out", str(copy)]
            for name, cmd in commands.items():
                best = min((measure(cmd, cwd, side_env) for _ in range(repeat)), key=lambda m: m[0])
                rows.setdefault(name, {})[side] = best
                print(f"  {side:3s} {name:36s} {best[0]:8.2f} s  {best[1]:8.0f} MB  (exit {best[2]})", flush=True)
            rows.setdefault("results/ on disk", {})[side] = (disk_mb(Path(cwd) / "results"), None, 0)
        if worktree is not None:
            same = subprocess.run(["diff", "-r", str(scratch / "tables-old"), str(scratch / "tables-new")],
                                  capture_output=True, text=True)
            print(f"tables old vs new: {'identical' if same.returncode == 0 else 'DIFFER'}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if worktree is not None:
            _git("worktree", "remove", "--force", str(worktree))

    targets = {"tables (TABLE_RESULTS)": (20.0, 1024.0), "check results/esmm_table4": (5.0, None),
               "resume esmm_table4, dry run": (3.0, None)}
    print("\nratios and targets (measured in this run):")
    for name, by in rows.items():
        new = by["new"]
        line = f"  {name:36s} new {new[0]:8.2f}" + (" MB" if name.startswith("results/") else " s")
        if "old" in by:
            old = by["old"]
            line += f"   old {old[0]:8.2f}   old / new {old[0] / new[0]:6.1f}x"
            if new[1] and old[1]:
                line += f"   peak memory {old[1]:6.0f} -> {new[1]:5.0f} MB"
        if name in targets:
            seconds, memory = targets[name]
            ok = new[0] <= seconds and (memory is None or new[1] <= memory)
            line += f"   target <= {seconds:g} s" + (f", <= {memory:g} MB" if memory else "") + \
                    f": {'met' if ok else 'NOT met'}"
        if name == "results/ on disk" and "old" in by:
            line += f"   target <= 1/3 of the old: {'met' if new[0] <= by['old'][0] / 3 else 'NOT met'}"
        print(line)


if __name__ == "__main__":
    main()
