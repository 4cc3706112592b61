from django.db.models import Count
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from conversations import services, tools
from conversations.context import conversation_context
from conversations.models import Conversation
from conversations.serializers import (
    AppendSerializer,
    ContextQuerySerializer,
    ContextSerializer,
    ConversationSerializer,
    MessageSerializer,
    ToolCallSerializer,
    with_memory_ids,
)
from core.db_routing import ReplicaReads
from core.idempotency import IdempotentWrites
from core.serializers import represent
from memories.serializers import MemorySerializer


class ConversationViewSet(IdempotentWrites, ReplicaReads, viewsets.ModelViewSet):
    """The caller's conversations and their messages. Appending user messages queues memory extraction."""

    idempotent = frozenset({"create", "messages"})  # Idempotency-Key (core.idempotency)
    # not the context: it rebuilds a stale profile (a write) before reading it
    replica_actions = frozenset({"list", "retrieve", "messages"})

    def reads_only(self, request) -> bool:
        return request.method == "GET"  # POST messages appends

    serializer_class = ConversationSerializer
    queryset = Conversation.objects.none()  # for the schema's types only; get_queryset() scopes

    def get_queryset(self):
        if self.action == "context":  # no message count: the context reads the conversation's scope only
            return Conversation.objects.filter(owner=self.request.user)
        return (
            Conversation.objects.filter(owner=self.request.user)
            .annotate(message_count=Count("messages"))
            .order_by("-created_at")  # Meta.ordering is dropped once the query groups
        )

    def perform_create(self, serializer):
        serializer.instance = services.conversation_create(owner=self.request.user, **serializer.validated_data)
        serializer.instance.message_count = 0  # as every other answer has it (the schema requires it)

    def perform_update(self, serializer):
        conversation = services.conversation_update(conversation=serializer.instance, data=serializer.validated_data)
        serializer.instance = self.get_queryset().get(pk=conversation.pk)  # with its message_count

    def perform_destroy(self, instance):
        services.conversation_delete(conversation=instance)

    @extend_schema(request=None, responses=ConversationSerializer)
    @action(detail=True, methods=["post"])
    def end(self, request, pk=None):
        """End the conversation: status completed, ended_at set; pending extraction runs."""
        conversation = services.conversation_end(conversation=self.get_object())
        return Response(self.get_serializer(self.get_queryset().get(pk=conversation.pk)).data)

    @extend_schema(request=None, responses=inline_serializer(
        "Forgotten", {"forgotten_memories": serializers.IntegerField()}))
    @action(detail=True, methods=["post"])
    def forget(self, request, pk=None):
        """Erase the conversation, its messages and the memories extracted from it, history included (DELETE
        keeps the extracted memories)."""
        erased = services.conversation_forget(conversation=self.get_object(), actor=request.user)
        return Response({"forgotten_memories": erased})

    @extend_schema(methods=["GET"], responses=MessageSerializer(many=True))
    @extend_schema(methods=["POST"], request=AppendSerializer, responses={
        201: MessageSerializer(many=True), 200: OpenApiResponse(MessageSerializer(many=True), "All already there")})
    @action(detail=True, methods=["get", "post"])
    def messages(self, request, pk=None):
        """GET lists the messages in order; POST appends one or more (a repeated client_message_id is ignored)."""
        conversation = self.get_object()
        if request.method == "GET":
            page = self.paginate_queryset(conversation.messages.defer("embedding", "search_vector")
                                          .order_by("sent_at", "sequence"))
            return self.get_paginated_response(MessageSerializer(with_memory_ids(page), many=True).data)
        body = AppendSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        results = services.messages_append(conversation=conversation, messages=body.validated_data["messages"])
        created = any(new for _, new in results)
        messages = with_memory_ids([m for m, _ in results])
        return Response(MessageSerializer(messages, many=True).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(parameters=[ContextQuerySerializer], responses=ContextSerializer)
    @action(detail=True, methods=["get"])
    def context(self, request, pk=None):
        """What to inject into the next prompt: the best memories and conversation excerpts within a token
        budget, as items (each saying what it is and where it came from) and as text. Memories are what is true
        now; superseded ones come too, marked, when the query asks about the past or a change, or with `as_of`
        (what was true then)."""
        params = ContextQuerySerializer(data=request.query_params.dict())
        params.is_valid(raise_exception=True)
        data = params.validated_data
        context = conversation_context(conversation=self.get_object(), query=data.get("query"),
                                       budget=data.get("budget"), limit=data["limit"],
                                       stay_in_conversation=data["stay"], as_of=data.get("as_of"))
        memories = [i.memory for i in context.items if i.type == "memory"]
        # read-side serializers built once per thread (core.serializers.represent): building them at every
        # context cost more than representing its memories, as it did for search
        return Response(represent(ContextSerializer, {
            "query": context.query, "budget": context.budget, "used_tokens": context.used_tokens,
            "degraded": context.degraded, "text": context.text, "as_of": context.as_of, "past": context.past,
            "items": [{"type": i.type, "text": i.text, "score": i.score, "tokens": i.tokens, "source": i.source()}
                      for i in context.items],
            "memories": represent(MemorySerializer, memories, many=True),
            "scores": [i.score for i in context.items if i.type == "memory"],
        }))


class ToolListView(APIView):
    """OpenAI function-calling definitions of the memory tools (the same tools /mcp serves)."""

    @extend_schema(responses=inline_serializer("Tools", {"tools": serializers.ListField()}))
    def get(self, request):
        return Response({"tools": tools.openai_tools()})


class ToolCallView(APIView):
    """Run a model's tool call (name + arguments, as the model produced them) for the authenticated user. The seed's
    upsertMemory / searchMemory / deleteMemory answer in the seed's shape; the other tools with text and data."""

    @extend_schema(request=ToolCallSerializer, responses=inline_serializer("ToolResult", {
        "text": serializers.CharField(required=False), "data": serializers.DictField(required=False),
        "success": serializers.BooleanField(required=False), "memoryId": serializers.CharField(required=False),
        "message": serializers.CharField(required=False), "results": serializers.ListField(required=False),
    }))
    def post(self, request):
        body = ToolCallSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(tools.tool_call(user=request.user, **body.validated_data))  # bad arguments: a 400
