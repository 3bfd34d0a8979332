"""The process room: a user's script run contained, in a worker process with a time and a memory limit.

Owns: the runner (runner.py: the run request, the worker's stream read into a RunResult, the limits), the
supervisor between the runner and the worker (supervisor.py) and the process tree's rule for memory and
kills (process_tree.py) (both standard library only), the zygote that forks each run's worker warm
(zygote.py, zygote_client.py), the worker itself (worker.py) and what it puts in place for a run
(viz_alias.py).

It is the only room that starts a process by exec; it may import every other room. It must not import the
analysis or a front end: it hands back a RunResult, in our own types.
"""
