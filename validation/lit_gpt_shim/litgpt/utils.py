from lit_gpt.utils import chunked_cross_entropy  # noqa: F401
