"""tokenslim component for Haystack 2 pipelines."""

from haystack_integrations.components.tokenslim.compressor import TokenSlimCompressor

__all__ = ["TokenSlimCompressor"]
