"""`triton_viz.config`, kept so Triton-Viz scripts that set it still run.

Any attribute may be set (Triton-Viz releases had different ones). One has an effect, as in
Triton-Viz: `config.sanitizer_backend = "off"` makes `@trace` return kernels undecorated.
"""


class Config:
    def __init__(self) -> None:
        self.sanitizer_backend = "default"
        self.report_grid_execution_progress = False
        self.verbose = False

    def __repr__(self) -> str:
        return "triton_lens.config(" + ", ".join(f"{k}={v!r}" for k, v in vars(self).items()) + ")"


config = Config()
