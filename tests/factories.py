import factory
from django.contrib.auth import get_user_model

from memories.models import Memory, Project


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("correct horse battery staple")


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    owner = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"project {n}")


class MemoryFactory(factory.django.DjangoModelFactory):
    """A memory written straight to the table (no embedding); use the services where behaviour matters."""

    class Meta:
        model = Memory

    owner = factory.SubFactory(UserFactory)
    content = factory.Sequence(lambda n: f"memory number {n}")
    key = factory.Sequence(lambda n: f"key-{n}")


class ConversationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "conversations.Conversation"

    owner = factory.SubFactory(UserFactory)
    title = factory.Sequence(lambda n: f"conversation {n}")


class MessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "conversations.Message"

    conversation = factory.SubFactory(ConversationFactory)
    owner = factory.SelfAttribute("conversation.owner")
    role = "user"
    content = factory.Sequence(lambda n: f"message number {n}")
    sequence = factory.Sequence(lambda n: n + 1)


class DocumentFactory(factory.django.DjangoModelFactory):
    """A document row; `file` names a path only, no file is written."""

    class Meta:
        model = "documents.Document"

    owner = factory.SubFactory(UserFactory)
    filename = factory.Sequence(lambda n: f"notes-{n}.txt")
    file = factory.LazyAttribute(lambda d: f"documents/{d.owner.pk}/{d.filename}")
    content_type = "text/plain"


class ChunkFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "documents.Chunk"

    document = factory.SubFactory(DocumentFactory)
    owner = factory.SelfAttribute("document.owner")
    content = factory.Sequence(lambda n: f"chunk number {n}")
    chunk_index = factory.Sequence(lambda n: n)
    token_count = 3


def memories_with_random_vectors(user, count: int, seed: int = 7):
    """`count` memories of `user` with random unit vectors (no model: for tests about the vector paths); returns
    their ids and the vectors."""
    import numpy as np

    from memories import batch

    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(count, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    writes = batch.memory_batch_create(
        owner=user, items=[{"content": f"note number {i}", "allow_duplicate": True} for i in range(count)],
        vectors=vectors.tolist(), actor=user)
    return [w.memory.pk for w in writes], vectors


def token_for(user, **kwargs) -> str:
    """A new API token's key for `user` (accounts.services.token_create's keyword arguments: scope, expiry)."""
    from accounts.services import token_create

    return token_create(user=user, name=kwargs.pop("name", "tests"), **kwargs).key


def api_client(user, **kwargs):
    """A DRF test client sending a new token of `user` (`token_for`'s keyword arguments)."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user, **kwargs)}")
    return client
