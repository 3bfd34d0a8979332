"""Only what pyproject.toml cannot say: the wheel carries the viewer page (extension/webview, the same
files the VS Code view loads) as triton_lens/_webview, where viz/webview.py looks in an installed
package. Everything else is in pyproject.toml."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

WEBVIEW = Path(__file__).resolve().parent / "extension" / "webview"
PAGE_FILES = ("*.html", "*.js", "*.css")


class BuildPyWithWebview(build_py):
    def run(self):
        super().run()
        if not WEBVIEW.is_dir():
            raise SystemExit(f"triton-lens build: {WEBVIEW} is missing (the viewer page the wheel ships)")
        out = Path(self.build_lib) / "triton_lens" / "_webview"
        out.mkdir(parents=True, exist_ok=True)
        for pattern in PAGE_FILES:
            for f in WEBVIEW.glob(pattern):
                shutil.copy2(f, out / f.name)


setup(cmdclass={"build_py": BuildPyWithWebview})
