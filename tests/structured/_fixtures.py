"""Small structured inputs of our own making (unit behaviour only; quality figures come
from benchmarks/bench_structured.py on real data)."""

from __future__ import annotations

import json
import random


def orders_json(n: int = 40, *, target: str = "ord_00179f3a", at: int = 17, indent: int | None = 2) -> str:
    rng = random.Random(0)
    orders = []
    for i in range(n):
        orders.append(
            {
                "id": target if i == at else f"ord_{rng.getrandbits(32):08x}",
                "status": rng.choice(["paid", "shipped", "refunded"]),
                "total": round(rng.uniform(5, 500), 2),
                "customer": {"name": f"Customer {i}", "email": f"c{i}@example.com"},
                "items": [{"sku": f"SKU-{i}-{j}", "qty": j + 1, "price": 12.5} for j in range(3)],
            }
        )
    return json.dumps({"object": "list", "data": orders, "has_more": False, "url": "/v1/orders"}, indent=indent)


def markdown_table(n: int = 200) -> str:
    rows = ["| City | Country | Population |", "|------|---------|-----------:|"]
    rows += [f"| City{i} | Land{i % 7} | {1000 + i * 37} |" for i in range(n)]
    return "\n".join(rows)


def csv_table(n: int = 300, delim: str = ",") -> str:
    rows = [delim.join(["city", "country", "population", "mayor"])]
    rows += [delim.join([f"City{i}", f"Land{i % 7}", str(1000 + i * 37), f'"Mayor {i}, Jr."' if delim == "," else f"Mayor {i}"]) for i in range(n)]
    return "\n".join(rows) + "\n"


def log_lines(n: int = 2000, *, error_at: int = 1234) -> str:
    out = []
    for i in range(n):
        ts = f"2024-03-01 12:{(i // 60) % 60:02d}:{i % 60:02d},{i % 1000:03d}"
        if i == error_at:
            out.append(f"{ts} ERROR dfs.DataNode: Exception writing block blk_-4711 to mirror 10.0.0.{i % 250}")
        elif i % 3 == 0:
            out.append(f"{ts} INFO dfs.DataNode: Receiving block blk_{1000 + i} src: /10.0.0.{i % 250}:50010")
        elif i % 3 == 1:
            out.append(f"{ts} INFO dfs.FSNamesystem: BLOCK* addStoredBlock: blockMap updated: 10.0.1.{i % 250}:50010 size {i * 13}")
        else:
            out.append(f"{ts} INFO dfs.DataNode$PacketResponder: PacketResponder {i % 3} for block blk_{2000 + i} terminating")
    return "\n".join(out) + "\n"


PY_MODULE = '''"""A small module."""

import os
import re
from collections import OrderedDict


def parse_header(line):
    """Split a 'Key: value' header line."""
    key, _, value = line.partition(":")
    return key.strip().lower(), value.strip()


def render_table(rows):
    """Render rows as text."""
    out = []
    for row in rows:
        out.append(" | ".join(str(c) for c in row))
    return "\\n".join(out)


class Cache:
    """An LRU cache."""

    def __init__(self, size):
        self.size = size
        self.data = OrderedDict()

    def get(self, key):
        """The cached value or None."""
        if key in self.data:
            self.data.move_to_end(key)
            return self.data[key]
        return None


def list_files(path):
    """Every file under path."""
    found = []
    for root, _, files in os.walk(path):
        for f in files:
            found.append(os.path.join(root, f))
    return found
'''

GO_FILE = """package main

import "fmt"

func parseHeader(line string) (string, string) {
	parts := strings.SplitN(line, ":", 2)
	return parts[0], parts[1]
}

func renderTable(rows [][]string) string {
	out := ""
	for _, r := range rows {
		out += strings.Join(r, " | ")
	}
	return out
}

func listFiles(path string) []string {
	var found []string
	filepath.Walk(path, func(p string, info os.FileInfo, err error) error {
		found = append(found, p)
		return nil
	})
	return found
}

func main() {
	fmt.Println(parseHeader("a: b"))
}
"""
