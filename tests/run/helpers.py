"""What several tests of bench.run share."""

BOW_MIA_GRID = """
name: {name}
axes:
  dataset: [{{name: bbc, subsample: 150}}]
  model: [bow]
  mechanism: [tem]
  epsilon: [10]
  seed: [0]
settings:
  vocab_size: 2000
  adversaries: [lexical]
  mia: true
  {extra}
"""
"""A grid of two cheap cells with membership inference (a ``bow`` baseline and tem at ε = 10 on
150 BBC documents): ``BOW_MIA_GRID.format(name=..., extra=...)``, ``extra`` one more setting
line or ``""``."""
