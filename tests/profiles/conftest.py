import pytest

from conversations import processing as conversation_processing
from conversations import services as conversation_services
from conversations.models import Message
from tests.factories import ConversationFactory


@pytest.fixture
def said(db):
    """Messages a user said, through the real extraction pipeline (run here, synchronously): said(user, *texts,
    sent_at=..., name=...) -> the messages."""

    def say(user, *texts, sent_at=None, name=None):
        conversation = ConversationFactory(owner=user)
        items = [{"role": "user", "content": text, **({"name": name} if name else {}),
                  **({"sent_at": sent_at} if sent_at else {})} for text in texts]
        appended = conversation_services.messages_append(conversation=conversation, messages=items)
        for message, _ in appended:
            conversation_processing.message_extract(message_id=message.pk)
        return [Message.objects.get(pk=m.pk) for m, _ in appended]

    return say
