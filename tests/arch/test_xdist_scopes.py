"""The xdist scopes of tests/xdist_scopes.py: a corpus file's engine markers, split-launch and progressive
tests share one process (one plain run of the file serves all of them) and every other test file stays whole
(its module fixtures start once)."""

from __future__ import annotations

from xdist_scopes import corpus_scope


def test_a_corpus_files_markers_share_a_scope_and_other_files_stay_whole():
    engine = "tests/engine/test_engine_corpus.py::test_marker"
    a1 = corpus_scope(f"{engine}[matmul.py:20:stats:a_ptr]")
    a2 = corpus_scope(f"{engine}[matmul.py:31:oob:load-a_ptr]")
    b = corpus_scope(f"{engine}[layernorm.py:15:stats:x_ptr]")
    assert a1 == a2 != b
    assert a1 == "corpus-file::matmul.py"
    # the split-launch and progressive tests of a corpus file join its markers (one plain run serves all three)
    assert (
        corpus_scope("tests/engine/test_engine_parallel.py::test_check_json_is_the_same_with_two_workers[matmul.py]")
        == a1
    )
    assert (
        corpus_scope(
            "tests/engine/test_engine_parallel.py::test_marker_holds_with_two_workers[matmul.py:20:stats:a_ptr]"
        )
        == a1
    )
    assert (
        corpus_scope("tests/engine/test_progressive.py::test_a_sampled_run_completes_as_a_plain_one[matmul.py]") == a1
    )
    # the file's unparametrized tests, and any other file, parametrized or not: the file
    assert corpus_scope("tests/engine/test_engine_corpus.py::test_corpus_is_there") == (
        "tests/engine/test_engine_corpus.py"
    )
    assert corpus_scope("tests/engine/test_progressive.py::test_the_sample_has_the_corners_and_spreads_evenly") == (
        "tests/engine/test_progressive.py"
    )
    assert corpus_scope("tests/lsp/test_corpus.py::test_corpus_file[matmul.py]") == "tests/lsp/test_corpus.py"
    assert corpus_scope("tests/cli/test_x.py::test_y") == "tests/cli/test_x.py"
