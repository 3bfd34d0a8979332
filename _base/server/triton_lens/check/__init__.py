"""`triton-lens check PATH...`: which files the paths name (targets.py) and running them (run_all.py).
The output formats live in ../report/."""
