"""tokenslim.integrations.ray: a Ray Dataset of requests compressed on a local 2-CPU Ray
cluster gives, row for row, what a single-process run gives."""

from __future__ import annotations

import json
import os
import sys

import pytest
import ray

import tokenslim
from tokenslim.bench.datasets import hotpotqa
from tokenslim.errors import ConfigError, InputError, MissingDependency
from tokenslim.integrations.ray import compress_dataset, compress_rows

pytestmark = pytest.mark.ray


def _rows() -> list[dict]:
    rows = [
        {"id": e.id, "query": e.query, "chunks": [{"text": c.text, "score": c.score, "id": c.id} for c in e.chunks],
         "history": [], "system_prompt": None}
        for e in hotpotqa(6)
    ]
    rows.append({"id": "chat", "query": "And the second one?", "chunks": [{"text": "<p>Paris is the capital of France.</p>", "score": 0.5, "id": "p"}],
                 "history": [{"role": "user", "content": f"Question {i} about cities?"} if i % 2 == 0 else
                             {"role": "assistant", "content": f"Answer {i}: Paris, Lyon and Nice."} for i in range(10)],
                 "system_prompt": "Be brief."})
    return rows


def _comparable(row: dict) -> dict:
    record = json.loads(row["record"]) if row.get("record") else {}
    for stage in record.get("stages", []):
        stage.pop("ms")  # wall time: the one field that differs between runs
    return {**row, "record": record}


@pytest.fixture(scope="module")
def local_ray():
    # a worker imports this checkout's tokenslim, as the driver does
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [os.getcwd(), os.environ.get("PYTHONPATH", "")] if p)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_ray_output_is_identical_to_single_process(local_ray):
    rows = _rows()
    pipeline = tokenslim.default_pipeline(token_budget=500)
    out = compress_dataset(ray.data.from_items(rows), pipeline, num_workers=2, batch_size=2, record=True).take_all()
    ref = compress_rows(pipeline, rows, record=True)
    by_id = {r["id"]: _comparable(r) for r in out}
    assert len(out) == len(rows) and set(by_id) == {r["id"] for r in rows}
    for r in ref:
        assert by_id[r["id"]] == _comparable(r)
    for row in rows:  # and the same as a plain run() per request
        r = pipeline.run(row["query"], row["chunks"], row["history"], row["system_prompt"])
        assert by_id[row["id"]]["messages"] == r.to_messages() and by_id[row["id"]]["tokens_after"] == r.tokens_after
    chat = by_id["chat"]
    assert chat["messages"][0] == {"role": "system", "content": "Be brief."}
    assert chat["tokens_after"] < chat["tokens_before"] and chat["error"] is None


def test_refused_rows_fail_the_job_or_are_recorded(local_ray):
    rows = [{"id": "ok", "query": "q", "chunks": [{"text": "fine text", "title": "t"}]},
            {"id": "bad", "query": "q", "chunks": [{"text": None, "title": "no text"}]}]
    ds = ray.data.from_items(rows)
    with pytest.raises(Exception, match="without a 'text' key"):  # Ray wraps the worker's InputError
        compress_dataset(ds, tokenslim.default_pipeline()).take_all()
    recorded = {r["id"]: r for r in compress_dataset(ds, tokenslim.default_pipeline(), errors="record").take_all()}
    assert recorded["ok"]["error"] is None and recorded["ok"]["chunks_out"][0]["text"] == "fine text"
    assert recorded["bad"]["error"].startswith("InputError") and recorded["bad"]["messages"] == []
    with pytest.raises(InputError):
        compress_rows(tokenslim.default_pipeline(), rows)


def test_bad_arguments_and_missing_ray(monkeypatch):
    ds = object()
    with pytest.raises(ConfigError, match="num_workers"):
        compress_dataset(ds, tokenslim.default_pipeline(), num_workers=0)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="Pipeline"):
        compress_dataset(ds, "default")  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "ray.data", None)
    with pytest.raises(MissingDependency, match=r"tokenslim\[ray\]"):
        compress_dataset(ds, tokenslim.default_pipeline())  # type: ignore[arg-type]
