# The fake OpenAI server's fixtures (to move to the root conftest once other test packages need them).
from tests.fakes.openai_server import openai_embeddings, openai_server  # noqa: F401
