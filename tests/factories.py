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
