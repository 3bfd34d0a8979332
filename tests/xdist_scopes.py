"""The xdist scopes of the tests (tests/conftest.py installs the scheduler for --dist loadfile)."""

from __future__ import annotations

# xdist's --dist loadfile sends each test file to one process whole. The engine's corpus test is one
# file of ~45 separate runs (one per corpus file, each cached for its markers): sent whole, it keeps
# one of CI's two processes busy for a minute while the other idles at the end of each release's run.
# Its scope is the corpus file instead, so both processes share it and a file's markers still run in
# one process (one run each). Every other file keeps the file scope (module fixtures: the LSP and
# viewer servers, started once per process).
SPLIT_BY_CORPUS_FILE = ("tests/engine/test_engine_corpus.py",)


def corpus_scope(nodeid: str) -> str:
    """The xdist scope of a test: its file, or for SPLIT_BY_CORPUS_FILE its file and corpus file."""
    module = nodeid.split("::", 1)[0]
    if module.endswith(SPLIT_BY_CORPUS_FILE) and "[" in nodeid:
        return module + "::" + nodeid.split("[", 1)[1].split(":", 1)[0]
    return module


def scheduler(config, log):
    """xdist's loadfile scheduler with corpus_scope as its scope."""
    from xdist.scheduler import LoadFileScheduling

    class CorpusFileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return corpus_scope(nodeid)

    return CorpusFileScheduling(config, log)
