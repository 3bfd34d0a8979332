"""`triton-lens check PATH...`: a folder with clean and buggy kernel files, the exit code over all of
them, and the text, json, sarif (validated against the 2.1.0 schema) and github formats."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from markers import CORPUS

# The SARIF 2.1.0 schema, from the npm package that ships it (installed with tests/viz's packages by
# `make viz-deps`, which `make test-python` runs): not copied into this repository.
SCHEMA_FILE = (
    Path(__file__).parent.parent
    / "viz"
    / "node_modules"
    / "@microsoft"
    / "jest-sarif"
    / "lib"
    / "schemas"
    / "sarif-2.1.0-rtm.5.json"
)
SCHEMA = json.loads(SCHEMA_FILE.read_text())
HELPER = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n"


def check(*args: str, cwd: Path):
    return subprocess.run(
        [sys.executable, "-m", "triton_lens", "check", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """clean/ (one clean file, one helper module that launches nothing), buggy/ (an oob and a race)."""
    root = tmp_path_factory.mktemp("project")
    (root / "clean").mkdir()
    (root / "buggy").mkdir()
    shutil.copy(CORPUS / "vector_add.py", root / "clean")
    (root / "clean" / "helper.py").write_text(HELPER)
    shutil.copy(CORPUS / "oob_missing_mask.py", root / "buggy")
    shutil.copy(CORPUS / "race_write_write.py", root / "buggy")
    return root


@pytest.fixture(scope="module")
def sarif_run(project):
    return check(".", "--format", "sarif", "--jobs", "2", cwd=project)


def test_exit_code_is_over_all_files(project):
    assert check("clean", cwd=project).returncode == 0
    p = check(".", cwd=project)
    assert p.returncode == 1, p.stderr
    assert "3 files checked: 1 clean, 2 with findings; 1 error, 1 warning" in p.stdout
    assert "buggy/oob_missing_mask.py:12:9: error: x_ptr: 24 lanes" in p.stdout
    assert "helper.py" not in p.stdout  # defines a kernel, launches none: not run
    p = check("clean", "missing_folder", cwd=project)
    assert p.returncode == 2 and "no such file or folder: missing_folder" in p.stderr


def test_json_for_many_files_is_one_object_with_a_files_list(project):
    p = check("buggy/*.py", "clean/vector_add.py", "--json", cwd=project)
    out = json.loads(p.stdout)
    assert p.returncode == 1
    files = {Path(f["file"]).name: f for f in out["files"]}
    assert set(files) == {"oob_missing_mask.py", "race_write_write.py", "vector_add.py"}
    assert [f["kind"] for f in files["oob_missing_mask.py"]["findings"]] == ["oob"]
    assert [f["kind"] for f in files["race_write_write.py"]["findings"]] == ["race"]
    assert files["vector_add.py"]["findings"] == [] and "stdout" in files["vector_add.py"]
    assert out["summary"] == {
        "files": 3,
        "errors": 1,
        "warnings": 1,
        "information": 0,
        "tool_errors": 0,
        "exit_code": 1,
    }


def test_sarif_validates_against_the_2_1_0_schema(sarif_run):
    assert sarif_run.returncode == 1, sarif_run.stderr
    log = json.loads(sarif_run.stdout)
    jsonschema.validate(log, SCHEMA)
    run = log["runs"][0]
    assert log["version"] == "2.1.0" and run["invocations"][0]["executionSuccessful"] is True
    rules = run["tool"]["driver"]["rules"]
    by_rule = {r["id"]: r for r in rules}
    assert {"oob", "race", "dead", "unwritten"} <= set(by_rule)
    assert "mask" in by_rule["oob"]["help"]["text"] and by_rule["oob"]["shortDescription"]["text"]
    results = {r["ruleId"]: r for r in run["results"]}
    assert set(results) == {"oob", "race"}
    oob = results["oob"]
    assert rules[oob["ruleIndex"]]["id"] == "oob" and oob["level"] == "error"
    loc = oob["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "buggy/oob_missing_mask.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"]["startLine"] == 12 and loc["region"]["startColumn"] == 9
    assert "24 lanes of program (7,)" in oob["message"]["text"]
    assert results["race"]["level"] == "warning"


def test_sarif_carries_related_locations():
    p = check(str(CORPUS / "race_read_write.py"), "--format", "sarif", cwd=CORPUS)
    log = json.loads(p.stdout)
    jsonschema.validate(log, SCHEMA)
    races = [r for r in log["runs"][0]["results"] if r["ruleId"] == "race"]
    assert races and all(r.get("relatedLocations") for r in races)
    rel = races[0]["relatedLocations"]
    assert rel and all(r["physicalLocation"]["artifactLocation"]["uri"] == "race_read_write.py" for r in rel)
    assert "in this race" in rel[0]["message"]["text"] and rel[0]["physicalLocation"]["region"]["startLine"] > 0


def test_github_format_prints_workflow_commands(project):
    p = check(".", "--format", "github", cwd=project)
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    (oob,) = [ln for ln in lines if "oob_missing_mask.py" in ln]
    assert oob.startswith("::error file=buggy/oob_missing_mask.py,line=12,col=9,")
    assert "title=Triton Lens%3A Kernel access outside its tensor::x_ptr: 24 lanes" in oob
    (race,) = [ln for ln in lines if ln.startswith("::warning")]
    assert "file=buggy/race_write_write.py,line=12," in race
    assert all(ln.startswith(("::error ", "::warning ", "::notice ")) for ln in lines)


def test_a_tool_error_is_exit_2_in_sarif_too(project):
    p = check("clean/vector_add.py", "--format", "sarif", "--python", "/nonexistent/python", cwd=project)
    # the command line's words for the fix (model/remedies.py)
    assert p.returncode == 2 and "Pass --python a Python" in p.stderr and "tritonLens" not in p.stderr
    log = json.loads(p.stdout)
    jsonschema.validate(log, SCHEMA)
    inv = log["runs"][0]["invocations"][0]
    assert (
        inv["executionSuccessful"] is False
        and "cannot start" in inv["toolExecutionNotifications"][0]["message"]["text"]
    )


def test_pre_commit_hook_runs_only_kernel_files(project):
    hooks = (Path(__file__).parents[2] / ".pre-commit-hooks.yaml").read_text()
    assert "- id: triton-lens\n" in hooks
    entry = "triton-lens check --kernel-files-only"
    assert hooks.count(f"entry: {entry}\n") == 2
    # pre-commit passes every changed file: a commit touching no kernel file passes, quietly
    p = check("--kernel-files-only", "clean/helper.py", cwd=project)
    assert p.returncode == 0 and p.stdout == ""
    p = check("--kernel-files-only", "clean/helper.py", "buggy/oob_missing_mask.py", cwd=project)
    assert p.returncode == 1 and "oob_missing_mask.py: ok, 1 launch, 1 error" in p.stdout


def test_every_finding_kind_the_analysis_emits_has_its_own_rule():
    # A kind added without a rule gets rule_for's generic text in SARIF ("A `x` finding"): a reviewer
    # reading the annotation learns nothing. Every `kind="..."` a Finding is built with needs a real rule.
    import re
    from pathlib import Path

    from triton_lens.report.rules import RULES

    src = Path(__file__).resolve().parents[2] / "server" / "triton_lens"
    kinds = set()
    for path in src.rglob("*.py"):
        for call in re.findall(r"Finding(?:\.at)?\((.*?)\)", path.read_text(), flags=re.S):  # at a call's range too
            kinds.update(re.findall(r'kind="([a-z0-9-]+)"', call))
    assert {"oob", "race", "tf32", "allocator", "uninit"} <= kinds  # the scan itself sees the kinds
    missing = sorted(k for k in kinds if k not in RULES)
    assert not missing, f"finding kinds with no rule in report/rules.py: {missing}"
    for r in RULES.values():
        assert r.help and len(r.help) > 60 and r.title, r.id
