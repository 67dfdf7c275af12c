"""A user's program written against tokenslim's public API; tests/test_typing.py runs
``mypy --strict`` on it, so a missing re-export or annotation in the API fails CI."""

from __future__ import annotations

import json
import logging

import tokenslim
from tokenslim import Chunk, Drop, Pipeline, Result, StageReport, default_pipeline, register_stage
from tokenslim.backends import Backend, FakeBackend, Measurement, get_backend
from tokenslim.errors import ConfigError, InputError, TokenSlimError
from tokenslim.stages import BaseStage, Budget, CompressDocuments, Dedupe, Reorder, StripHTML, SummarizeConversation, TrimTopK


@register_stage
class Shout(BaseStage):
    """Upper-cases the query."""

    def __init__(self, *, times: int = 1) -> None:
        self.times = times

    def apply(self, result: Result) -> Result:
        result.query = result.query.upper() * self.times
        return result


def main() -> None:
    logging.getLogger("tokenslim").setLevel(logging.INFO)
    pipe: Pipeline = default_pipeline(token_budget=500)
    custom = Pipeline(
        [StripHTML(), Dedupe(threshold=0.9), TrimTopK(k=3), CompressDocuments(ratio=0.5),
         SummarizeConversation(keep_last=2), Budget(max_tokens=400), Reorder(), ("shout", Shout())],
        on_error="skip",
    )
    seconds: float = custom.warm_up()
    result: Result = pipe.run("Who wrote Hamlet?", [Chunk("Hamlet is by Shakespeare.", score=0.9), "Cats purr."])
    reports: list[StageReport] = result.report
    drops: list[Drop] = result.drops
    record: str = json.dumps(result.to_dict())
    config = custom.to_config()
    again = Pipeline.from_config(json.loads(json.dumps(config)))
    backend: Backend = get_backend("fake")
    fake = FakeBackend()
    measured: list[Measurement] = []
    try:
        again.run("q", [{"text": 3}])  # type: ignore[list-item]
    except (InputError, ConfigError) as exc:
        print(exc)
    except TokenSlimError:
        raise
    print(seconds, reports, drops, record, backend, fake, measured, tokenslim.__version__)


if __name__ == "__main__":
    main()
