"""Arrow's allocator for a command-line run: freed memory goes back to the system.

pyarrow's default allocator (mimalloc) keeps what the parse threads free for the rest of the
run; on a 91 MiB raw export that is 60-70 MB of the peak, on a 475 MiB details export about
270 MB. jemalloc, told to return freed pages after 100 ms, gives most of it back and was no
slower there (at 0 ms it was 7-10 % slower: every allocation faults its pages in again).
Chosen when a command that reads profiles starts (`cli/inputs.py`), before it imports pandas, so
what the imports allocate comes from the same pool.
An ARROW_DEFAULT_MEMORY_POOL the user set is left alone.
"""

from __future__ import annotations

import os

FREED_MEMORY_DECAY_MS = 100


def return_freed_memory() -> None:
    """Called by every command that reads profiles (cli/inputs.py) before it imports pandas;
    the commands that read none (--help, devices, bound, metrics) load no pyarrow."""
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return
    import pyarrow as pa

    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except NotImplementedError:  # a pyarrow built without jemalloc keeps its default
        return
    pa.jemalloc_set_decay_ms(FREED_MEMORY_DECAY_MS)
