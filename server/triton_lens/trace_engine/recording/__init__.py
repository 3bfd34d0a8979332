"""The recording room: what each tl.load and tl.store of a launch touched, with its program, lanes, mask and
line (recorder.py), in our own types (triton_lens.model).

Owns: the recorder and its address-to-element maps (tensors.py, rows.py), the tl.dot tiles it keeps
(dot_tiles.py), the host's writes to uninitialised memory (host_writes.py), the size check's model and
re-launches (size_model.py, size_probe.py; size_cache.py keeps their results across runs, size_symbolic.py
asks z3 where the optional extra is installed), the wire format of a recording (stream.py), and a launch's
programs run in forked children (parallel.py, progressive.py: the room's only forks; store_log.py, what the
children store and its replay in the parent).

It must not import the process room (no runner, supervisor or zygote: it knows no process it did not fork
itself) nor start a process by exec; of the other rooms it imports the interpreter and the GPU profiles
(the size check's bound is the GPU's memory).
"""
