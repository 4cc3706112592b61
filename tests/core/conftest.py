from tests.fakes.openai_server import openai_embeddings, openai_server  # noqa: F401 - fixtures used here
