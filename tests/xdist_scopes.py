"""The xdist scopes of the tests (tests/conftest.py installs the scheduler for --dist loadfile)."""

from __future__ import annotations

# xdist's --dist loadfile sends each test file to one process whole. Three engine files run every corpus
# file: the corpus markers (one plain run each, cached by test_engine_corpus.analysed), the split launch
# (two workers, compared with that plain run) and the progressive sample (compared with it too). Sent whole,
# each file re-ran the plain run of every corpus file in its own process (three plain runs per file per
# stage) and kept one of CI's two processes busy while the other idled at the end. Their corpus-file tests
# share one scope per corpus file instead, across the three files: one process runs all of a corpus file's
# tests and its plain run once. Every other test, and every other file, keeps the file scope (module
# fixtures: the LSP and viewer servers, started once per process).
SPLIT_BY_CORPUS_FILE = (
    "tests/engine/test_engine_corpus.py",
    "tests/engine/test_engine_parallel.py",
    "tests/engine/test_progressive.py",
)


def corpus_scope(nodeid: str) -> str:
    """The xdist scope of a test: its file, or for a parametrized test of SPLIT_BY_CORPUS_FILE the corpus file
    its id starts with (`name.py` or `name.py:line:kind:...`), shared by the three files."""
    module = nodeid.split("::", 1)[0]
    if module.endswith(SPLIT_BY_CORPUS_FILE) and "[" in nodeid:
        corpus_file = nodeid.split("[", 1)[1].split(":", 1)[0].rstrip("]")
        if corpus_file.endswith(".py"):
            return "corpus-file::" + corpus_file
    return module


def scheduler(config, log):
    """xdist's loadfile scheduler with corpus_scope as its scope."""
    from xdist.scheduler import LoadFileScheduling

    class CorpusFileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return corpus_scope(nodeid)

    return CorpusFileScheduling(config, log)
