"""Tokens *computed* under a prefix cache, over whole conversations: what each compression mode costs.

The same as ``tokenslim bench-chat`` (see :mod:`tokenslim.bench.prefix_cache` for the rows, the
measurement and the quality figures; :mod:`tokenslim.bench.conversations` for the data: SGD task
dialogues with a fresh schema context per turn, CoQA follow-up questions and 2WikiMultihopQA
questions asked in turns, both over the same documents every turn).

Run from the repository root::

    flock /tmp/tokenslim-bench.lock python benchmarks/bench_conversation_cache.py --cache-off --limit sgd=64 twowiki_chat=40

Writes results/conversation_cache.json and results/conversation_cache.png.
"""

from __future__ import annotations

import sys

from tokenslim.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench-chat", *sys.argv[1:]]))
