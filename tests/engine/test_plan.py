"""source/plan.py: the one run plan (comment, runCommands mapping, else the file) and which files a
folder check picks. Pure: nothing is run."""

from __future__ import annotations

from triton_lens.check.targets import find_targets
from triton_lens.source.plan import command_for, glob_to_regex, plan, worth_a_run

KERNEL = """import triton
import triton.language as tl

@triton.jit
def k(x_ptr):
    pass
"""
LAUNCHES = KERNEL + "\nif __name__ == '__main__':\n    k[(1,)](None)\n"


def test_plain_mapping_of_globs_and_the_comment_wins(tmp_path):
    f = str(tmp_path / "kernels" / "add.py")
    rc = {"kernels/**": "pytest tests -k small", "*.py": ["python", "other.py"]}
    p = plan(f, KERNEL, rc, [str(tmp_path)])
    assert p.origin == "setting" and p.command == ["pytest", "tests", "-k", "small"] and p.cwd == str(tmp_path)
    p = plan(f, KERNEL + "# triton-lens: run python bench.py --n 3\n", rc, [str(tmp_path)])
    assert p.origin == "comment" and p.command == ["python", "bench.py", "--n", "3"] and p.origin_line == 7
    p = plan(f, KERNEL, None, None)
    assert p.origin == "file" and p.command is None and p.runnable


def test_globs_match_like_the_editor():
    assert glob_to_regex("*.py").fullmatch("a/b/c.py")
    assert glob_to_regex("./kernels/*.py").fullmatch("kernels/x.py")
    assert not glob_to_regex("kernels/*.py").fullmatch("kernels/sub/x.py")
    assert command_for("/w/k/a.py", {"k/*.py": "python run.py"}, ["/w"]) == ["python", "run.py"]
    assert command_for("/w/other/a.py", {"k/*.py": "python run.py"}, ["/w"]) is None


def test_a_folder_check_runs_launching_files_and_run_comments_not_helper_modules(tmp_path):
    assert worth_a_run(plan("/x/a.py", LAUNCHES, {}, []))
    assert not worth_a_run(plan("/x/a.py", KERNEL, {}, []))  # defines, never launches
    assert worth_a_run(plan("/x/a.py", KERNEL + "# triton-lens: run python go.py\n", {}, []))
    (tmp_path / "launch.py").write_text(LAUNCHES)
    (tmp_path / "helper.py").write_text(KERNEL)
    (tmp_path / "plain.py").write_text("print('no kernel')\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "tested.py").write_text(KERNEL + "# triton-lens: run pytest tests\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "hidden.py").write_text(LAUNCHES)
    t = find_targets([str(tmp_path)], roots=[str(tmp_path)])
    assert sorted(x.path.replace(str(tmp_path), "") for x in t.files) == ["/launch.py", "/pkg/tested.py"]
    assert not t.problems
    # a file named on the command line always runs; a glob filters like a folder; a wrong path is reported
    t = find_targets(
        [
            str(tmp_path / "helper.py"),
            str(tmp_path / "*.py"),
            str(tmp_path / "missing.py"),
            str(tmp_path / "nothing*.py"),
        ]
    )
    assert [x.path for x in t.files] == [str(tmp_path / "helper.py"), str(tmp_path / "launch.py")]
    assert t.problems == [
        f"no such file or folder: {tmp_path / 'missing.py'}",
        f"no file matches {tmp_path / 'nothing*.py'}",
    ]


def test_filter_named_files_for_pre_commit(tmp_path):
    (tmp_path / "launch.py").write_text(LAUNCHES)
    (tmp_path / "helper.py").write_text(KERNEL)
    (tmp_path / "setup.py").write_text("print('not a kernel file')\n")
    named = [str(tmp_path / n) for n in ("launch.py", "helper.py", "setup.py")]
    assert len(find_targets(named).files) == 3
    assert [t.path for t in find_targets(named, filter_named_files=True).files] == [named[0]]


def test_variables_in_run_commands_are_expanded_like_vs_code(tmp_path):
    f = str(tmp_path / "k" / "add.py")
    p = plan(
        f, KERNEL, {"k/*.py": "pytest ${file} -x --root=${workspaceFolder} ${fileDirname} ${nope}"}, [str(tmp_path)]
    )
    assert p.command == ["pytest", f, "-x", f"--root={tmp_path}", str(tmp_path / "k"), "${nope}"]
    p = plan(f, KERNEL + "# triton-lens: run python '${fileDirname}/bench me.py'\n", {}, [str(tmp_path)])
    assert p.command == ["python", str(tmp_path / "k" / "bench me.py")]


def test_a_run_comment_makes_a_file_runnable_though_its_kernels_live_outside_it(tmp_path):
    # a test of an installed library: its kernels are in site-packages, not in the workspace
    text = "# triton-lens: run pytest ${file}\nfrom mylib.ops import add\n\ndef test_add():\n    add(3)\n"
    f = str(tmp_path / "tests" / "test_add.py")
    p = plan(f, text, {}, [str(tmp_path)])
    assert p.runnable and p.origin == "comment" and p.command == ["pytest", f] and worth_a_run(p)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_add.py").write_text(text)
    (tmp_path / "tests" / "test_plain.py").write_text(text.split("\n", 1)[1])  # no comment: not picked
    t = find_targets([str(tmp_path)], roots=[str(tmp_path)])
    assert [x.path for x in t.files] == [f]
    # without the comment the file still defines and imports no kernel the plan can see
    assert not plan(f, text.split("\n", 1)[1], {}, [str(tmp_path)]).runnable
