"""Output formats of `triton-lens check`: text (compiler-style lines and a per-line table), json,
sarif (2.1.0, for code scanning), github (workflow commands that annotate the diff). Each takes the
list of checked files (check/run_all.Checked) and writes to a stream; none runs anything."""

FORMATS = ("text", "json", "sarif", "github")
