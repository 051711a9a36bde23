"""Markers and axes shared by the findings modules."""

BEGIN, END = "<!-- findings:begin -->", "<!-- findings:end -->"

SENSITIVITY = ("none", "unit_norm", "unit_norm_clip", "minmax", "observed_range",
               "clip_observed_range", "jl")
MAPPINGS = ("none", "nearest", "vickrey")
