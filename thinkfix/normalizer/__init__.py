"""The pure text core: policy, tag grammar, whole-string (`batch.normalize`) and streaming
(`stream.StreamNormalizer`) normalizer. The public names are the facade's (`thinkfix/__init__.py`)."""
