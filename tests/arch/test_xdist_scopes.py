"""The xdist scopes of tests/xdist_scopes.py: a corpus file's engine markers share one process (one run of
the file serves all of them) and every other test file stays whole (its module fixtures start once)."""

from __future__ import annotations

from xdist_scopes import corpus_scope


def test_a_corpus_files_markers_share_a_scope_and_other_files_stay_whole():
    engine = "tests/engine/test_engine_corpus.py::test_marker"
    a1 = corpus_scope(f"{engine}[matmul.py:20:stats:a_ptr]")
    a2 = corpus_scope(f"{engine}[matmul.py:31:oob:load-a_ptr]")
    b = corpus_scope(f"{engine}[layernorm.py:15:stats:x_ptr]")
    assert a1 == a2 != b
    assert a1.startswith("tests/engine/test_engine_corpus.py::matmul.py")
    # the file's unparametrized tests, and any other file, parametrized or not: the file
    assert corpus_scope("tests/engine/test_engine_corpus.py::test_corpus_is_there") == (
        "tests/engine/test_engine_corpus.py"
    )
    assert corpus_scope("tests/lsp/test_corpus.py::test_corpus_file[matmul.py]") == "tests/lsp/test_corpus.py"
    assert corpus_scope("tests/cli/test_x.py::test_y") == "tests/cli/test_x.py"
